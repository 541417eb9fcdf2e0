"""etcdlock.set_caller_spin: the caller spin as an explicit, process-wide option."""

import math

import pytest

import etcdlock


# covers: OPT-SPIN-001
def test_caller_spin_is_set_read_back_and_bad_values_change_nothing(client, prefix):
    before = etcdlock.caller_spin()
    try:
        etcdlock.set_caller_spin(0.0005)
        assert etcdlock.caller_spin() == pytest.approx(0.0005)
        for bad in (-1, 0.0101, math.nan, math.inf):
            with pytest.raises(ValueError):
                etcdlock.set_caller_spin(bad)
            assert etcdlock.caller_spin() == pytest.approx(0.0005)
        # Off: the blocking calls still return (they sleep at once instead of spinning).
        etcdlock.set_caller_spin(0)
        assert etcdlock.caller_spin() == 0
        lock = client.lock(f"{prefix}/spin-off", ttl=10)
        for _ in range(3):
            lock.acquire(timeout=5)
            lock.release()
    finally:
        etcdlock.set_caller_spin(before)
