"""What the controls of the queue and once-per-period checkers share: run every mode, print
each property's line, and judge: ``correct`` must pass everything (with its nemesis having
acted), each broken mode must be VIOLATED on at least the properties it is expected to break."""
from __future__ import annotations

import time
from typing import Callable


def run_modes(kind: str, expect: dict[str, set[str]], modes: list[str],
              run: Callable[[str, Callable[[str], None]], tuple[list, str, bool]]) -> int:
    """``run(mode, log)`` -> (results, a summary line, whether the nemesis did all it should).
    Returns the exit status: 1 if any mode was not judged as expected."""
    failures, t0 = [], time.monotonic()
    for mode in modes:
        want = "every property ok" if not expect[mode] else "VIOLATED on " + ", ".join(sorted(expect[mode]))
        print(f"{kind} control {mode}: expect {want}", flush=True)
        try:
            results, summary, nemesis_ok = run(mode, lambda s: print(s, flush=True))
        except Exception as e:  # noqa: BLE001 - a control that cannot run is a failure, loudly
            print(f"  could not run: {type(e).__name__}: {e}", flush=True)
            failures.append(mode)
            continue
        print(f"  {summary}")
        for r in results:
            print("  " + r.line())
            for ev in r.evidence[:2] if not r.ok else []:
                print(f"      {ev}")
        violated = {r.prop for r in results if not r.ok}
        ok = (not violated and nemesis_ok) if mode == "correct" else expect[mode] <= violated
        print(f"  => {'as expected' if ok else 'FAILED'}", flush=True)
        if not ok:
            failures.append(mode)
    print(f"{kind} controls: {len(modes) - len(failures)}/{len(modes)} as expected in {time.monotonic() - t0:.0f}s"
          + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


def parse_modes(p, arg: str, expect: dict) -> list[str]:
    modes = [m for m in arg.split(",") if m]
    if set(modes) - set(expect):
        p.error(f"unknown modes: {sorted(set(modes) - set(expect))}")
    return modes
