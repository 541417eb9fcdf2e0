"""Once-per-period jobs: ``with client.once("reports/daily", every=86400.0) as slot:`` runs the
block's job in at most one caller per period (``slot`` is None for the others).

The period's slot is the boundary nearest the trigger time, so hosts whose clocks differ by less
than half a period pick the same one. The winner's claim lives on its lease while the job runs;
the end of the ``with`` block marks the period done, an exception releases the slot instead (the
next trigger in the period runs the job again), as does a winner that dies."""

from types import TracebackType
from typing import Any, Optional, Type

from . import _args, _native
from ._tasks_common import ClaimView
from ._ports import loop_port, thread_port


class OnceSlot(ClaimView):
    """The period's slot, won by this caller: ``slot`` (the boundary's index), ``fencing_token``,
    ``is_held()``, ``on_lost(cb)``; ``done()`` marks the period done, ``release()`` lets the next
    trigger run the job."""

    @property
    def slot(self) -> int:
        """The index of the period's boundary this claim is for."""
        return self._n.slot

    def done(self) -> Any:
        """Marks the period's job done and ends the claim (``NotHeld`` if the claim was lost).
        On an ``AsyncClient``'s slot: ``await slot.done()``."""
        return self._call(self._n.done())

    def release(self) -> Any:
        """Ends the claim without marking the job done: the next trigger in the period runs it."""
        return self._call(self._n.release())

    def _call(self, op: Any) -> Any:
        if self._port is thread_port:
            return op.wait()
        from ._aio import _run

        return _run(op)

    def __repr__(self) -> str:
        return f"OnceSlot(slot={self.slot}, fencing_token={self.fencing_token})"


def options(every: object, ttl: object, at: object, keep_periods: object) -> tuple:
    e = _args.seconds(every, "every")
    t = _args.ttl(ttl)
    if at is not None and (isinstance(at, bool) or not isinstance(at, (int, float))):
        raise TypeError(f"at must be seconds since the epoch (time.time()) or None, not {type(at).__name__}")
    if isinstance(keep_periods, bool) or not isinstance(keep_periods, int):
        raise TypeError(f"keep_periods must be an int, not {type(keep_periods).__name__}")
    if keep_periods < 2:
        raise ValueError(f"keep_periods must be at least 2, got {keep_periods}")
    return e, t, None if at is None else float(at), keep_periods


class Once:
    """What ``Client.once`` returns: ``with`` it (the slot or None), or ``claim()``."""

    def __init__(self, native_client: "_native.Client", name: bytes, opts: tuple) -> None:
        self._c, self._name, self._opts = native_client, name, opts
        self._slot: Optional[OnceSlot] = None

    def claim(self) -> Optional[OnceSlot]:
        """The period's slot if this caller won it, else None."""
        native = self._c.once(self._name, *self._opts).wait()
        return None if native is None else OnceSlot(native, thread_port)

    def __enter__(self) -> Optional[OnceSlot]:
        self._slot = self.claim()
        return self._slot

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._slot is None:
            return
        if exc_type is None:
            self._slot._n.done().wait()
        else:
            self._slot._n.release().wait()


class AsyncOnce:
    """What ``AsyncClient.once`` returns: ``async with`` it (the slot or None), or ``await
    claim()``."""

    def __init__(self, native_client: "_native.Client", name: bytes, opts: tuple) -> None:
        self._c, self._name, self._opts = native_client, name, opts
        self._slot: Optional[OnceSlot] = None

    async def claim(self) -> Optional[OnceSlot]:
        """The period's slot if this caller won it, else None."""
        from ._aio import _run

        native = await _run(self._c.once(self._name, *self._opts))
        return None if native is None else OnceSlot(native, loop_port)

    async def __aenter__(self) -> Optional[OnceSlot]:
        self._slot = await self.claim()
        return self._slot

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        from ._aio import _run

        if self._slot is not None:
            await _run(self._slot._n.done() if exc_type is None else self._slot._n.release())
