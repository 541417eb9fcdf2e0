"""The asyncio API: ``AsyncClient``, ``AsyncLock``, ``AsyncLease``, ``AsyncWatch``.

Calls run on the core's runtime (no extra thread, no second runtime); results come back to
the loop through its port (see ``_ports``). Cancelling an ``await lock.acquire()`` cancels the
core's wait and awaits its cleanup (the queue key is gone) before ``CancelledError``
propagates."""

import asyncio
from collections import deque
from types import TracebackType
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Deque, Dict, Generator, Iterable, List, Optional, Sequence, Type, Union

from . import _args, _log, _native, _trace
from ._args import BytesLike
from ._common import DEFAULT_TIMEOUT, DEFAULT_TTL, fence, fence_arg, Instances, instances, LeaseView, LockState, LockView, lock_state, PathArg, WatchEvent, native_client
from ._errors import LockLost, LockTimeout, NotHeld
from ._lost import LostCallbacks
from ._ports import LoopPort, loop_port

if TYPE_CHECKING:
    from .fencing import Fence
    from ._aio_cache import _Loading
    from ._aio_recipes import AsyncElection, AsyncRWLock
    from ._aio_registry import AsyncDiscovery, _Registering
    from ._aio_tasks import AsyncTask, AsyncTaskQueue
    from ._once import AsyncOnce, OnceSlot
    from ._aio_pool import AsyncPool, AsyncPoolHolding
    from ._aio_lockset import AsyncLockSet
    from ._lockset import MemberArg
    from ._pool import SlotInfo


async def _run(op: Any) -> Any:
    return await loop_port().future(op)


async def _run_cancellable(op: Any, keep: Optional[Callable[[Any], None]] = None) -> Any:
    """Runs ``op``; if the awaiting task is cancelled, cancels the op, waits for it to finish
    (the core cleans up), undoes a success that raced with the cancel (or hands it to
    ``keep``), then re-raises the ``CancelledError``."""
    fut = loop_port().future(op)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        op.cancel()
        while not fut.done():
            try:
                await asyncio.shield(fut)
            except asyncio.CancelledError:
                continue  # cancelled again: still wait, the cleanup is bounded
            except BaseException:
                break
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            if keep is not None:
                keep(fut.result())
            undo = op.undo()
            if undo is not None:
                await asyncio.shield(_run(undo))
        raise


class AsyncClient:
    """The asyncio client. Constructed synchronously (nothing is sent); it connects on first
    use, or in ``async with`` / ``await client.connect()``. Shared by any number of tasks.

    Arguments as for ``Client``, TLS included (``ca_file``, ``cert_file``, ``key_file``,
    ``server_name``): types are checked here, the files are read (and TLS errors raised) when
    connecting."""

    def __init__(
        self,
        endpoints: Union[str, Sequence[str]],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        user: Optional[str] = None,
        password: Optional[str] = None,
        ca_file: Optional[PathArg] = None,
        cert_file: Optional[PathArg] = None,
        key_file: Optional[PathArg] = None,
        server_name: Optional[str] = None,
        name: Optional[str] = None,
    ) -> None:
        self._n = native_client(endpoints, timeout, user, password, ca_file, cert_file, key_file, server_name, name)

    async def connect(self) -> "AsyncClient":
        """Connects now (otherwise the first call does); raises ``Unavailable`` on failure."""
        await _run(self._n.connect())
        return self

    async def close(self) -> None:
        """Closes the client (leases revoked, waits end with ``Closed``). Idempotent."""
        await _run(self._n.close())

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._n.is_closed()

    async def __aenter__(self) -> "AsyncClient":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def lock(
        self, name: BytesLike, ttl: int = DEFAULT_TTL, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None
    ) -> "AsyncLock":
        """A handle on the lock ``name`` (nothing is sent). ``timeout`` applies to
        ``async with``; ``value`` is stored in each acquisition's queue key (see
        ``Client.lock``)."""
        _log.refresh()
        n = _args.to_bytes(name, "name")
        t = _args.ttl(ttl)
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return AsyncLock(self._n.lock(n, t, v), timeout)

    def lock_set(
        self, members: "Iterable[MemberArg]", ttl: int = DEFAULT_TTL, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None
    ) -> "AsyncLockSet":
        """A handle on several lock names taken together (see ``Client.lock_set``): ``async
        with client.lock_set(["acct/1", "acct/2"], timeout=5.0) as locks:``. How many, none
        twice and none under another are checked at once when the client is connected (else at
        the first acquire)."""
        from ._aio_lockset import AsyncLockSet
        from ._lockset import native_lock_set

        _log.refresh()
        n, members_ = native_lock_set(self._n, members, ttl, timeout, value)
        return AsyncLockSet(n, members_, timeout)

    def semaphore(
        self,
        name: BytesLike,
        permits: int,
        ttl: int = DEFAULT_TTL,
        *,
        timeout: Optional[float] = None,
        value: Optional[BytesLike] = None,
        count: int = 1,
    ) -> "AsyncLock":
        """A handle on the semaphore ``name`` with ``permits``, ``count`` of them per acquisition
        (see ``Client.semaphore``): ``async with client.semaphore("jobs/slots", permits=3,
        timeout=5.0):``. A ``count`` above ``permits`` raises ``ValueError`` when the client is
        connected (else at the first acquire)."""
        _log.refresh()
        n, p, t = _args.to_bytes(name, "name"), _args.permits(permits), _args.ttl(ttl)
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return AsyncLock(self._n.semaphore(n, p, t, v, _args._int64(count, "count", "an int")), timeout)

    def pool(
        self,
        name: BytesLike,
        slots: Optional[Sequence[str]] = None,
        *,
        size: Optional[int] = None,
        ttl: int = DEFAULT_TTL,
        reuse_delay: Optional[float] = None,
    ) -> "AsyncPool":
        """The pool of named slots ``name`` (see ``Client.pool``): ``async with
        pool.acquire(count=1, timeout=5.0) as holding:``."""
        from ._aio_pool import AsyncPool
        from ._pool import definition

        _log.refresh()
        n = _args.to_bytes(name, "name")
        t, d, ids, size_n = definition(slots, size, ttl, reuse_delay)
        return AsyncPool(self._n.pool(n, t, d, ids, size_n))

    async def inspect_pool(self, name: BytesLike) -> "Optional[List[SlotInfo]]":
        """The slots of the pool ``name`` now, or None if none is defined (see
        ``Client.inspect_pool``)."""
        from ._pool import slot_infos

        raw = await _run(self._n.inspect_pool(_args.to_bytes(name, "name")))
        return None if raw is None else slot_infos(raw)

    def queue(self, name: BytesLike, ttl: int = DEFAULT_TTL, *, max_attempts: int = 5,
              max_processing: Optional[float] = None) -> "AsyncTaskQueue":
        """The task queue ``name`` (see ``Client.queue``)."""
        from ._aio_tasks import AsyncTaskQueue
        from ._tasks_common import max_attempts as _max_attempts

        n, t, m = _args.to_bytes(name, "name"), _args.ttl(ttl), _max_attempts(max_attempts)
        mp = None if max_processing is None else _args.seconds(max_processing, "max_processing")
        return AsyncTaskQueue(self._n.queue(n, t, m, mp))

    def once(self, name: BytesLike, every: float, *, ttl: int = DEFAULT_TTL, at: Optional[float] = None,
             keep_periods: int = 3) -> "AsyncOnce":
        """``async with client.once(name, every=3600.0) as slot:`` (see ``Client.once``)."""
        from ._once import AsyncOnce, options

        return AsyncOnce(self._n, _args.to_bytes(name, "name"), options(every, ttl, at, keep_periods))

    def rwlock(self, name: BytesLike, ttl: int = DEFAULT_TTL) -> "AsyncRWLock":
        """The read-write lock ``name`` (see ``Client.rwlock``)."""
        from ._aio_recipes import AsyncRWLock

        n, t = _args.to_bytes(name, "name"), _args.ttl(ttl)
        self._n.rwlock(n, t, False)  # checks the name and TTL now
        return AsyncRWLock(self._n, n, t)

    def election(self, name: BytesLike, ttl: int = DEFAULT_TTL) -> "AsyncElection":
        """The election ``name`` (see ``Client.election``)."""
        from ._aio_recipes import AsyncElection

        n, t = _args.to_bytes(name, "name"), _args.ttl(ttl)
        self._n.candidate(n, t, b"")  # checks the name and TTL now
        return AsyncElection(self._n, n, t)

    def register(
        self, service: BytesLike, instance: BytesLike, value: BytesLike = b"", ttl: int = DEFAULT_TTL, *, replace: bool = False
    ) -> "_Registering":
        """Registers ``instance`` of ``service`` (see ``Client.register``): ``reg = await
        client.register(...)``, or ``async with client.register(...) as reg:``."""
        from ._aio_registry import _Registering

        _log.refresh()
        s, i, v = _args.to_bytes(service, "service"), _args.to_bytes(instance, "instance"), _args.to_bytes(value, "value")
        return _Registering(self._n.register(s, i, v, _args.ttl(ttl), _args.flag(replace, "replace")), s + b"/" + i)

    async def instances(self, service: BytesLike) -> Instances:
        """The instances of ``service`` now (see ``Client.instances``)."""
        return instances(await _run(self._n.instances(_args.to_bytes(service, "service"))))

    def discover(self, service: BytesLike) -> "AsyncDiscovery":
        """``async for snapshot in client.discover("svc/api"):`` (see ``Client.discover``)."""
        from ._aio_registry import AsyncDiscovery

        return AsyncDiscovery(self._n.discover(_args.to_bytes(service, "service")))

    async def inspect(self, name: BytesLike) -> LockState:
        """The queue of lock ``name`` as etcd has it now (see ``Client.inspect``)."""
        return lock_state(await _run(self._n.inspect(_args.to_bytes(name, "name"))))

    def metrics(self) -> Dict[str, Any]:
        """This client's metrics (see ``Client.metrics``). Not awaitable: it reads counters in
        memory and sends nothing."""
        return self._n.metrics()

    @property
    def name(self) -> str:
        """The client's name: the ``client`` label of its metrics (``name=`` given to the
        constructor, else ``etcdlock-<n>``, unique in the process)."""
        return self._n.name()

    def metrics_text(self) -> str:
        """The same metrics in the Prometheus text format (see ``Client.metrics_text``)."""
        return self._n.metrics_text()

    def lease(self, ttl: int = DEFAULT_TTL) -> "_Grant":
        """Grants a lease: ``lease = await client.lease(10)``, or ``async with
        client.lease(10) as lease:`` (revoked on exit)."""
        _log.refresh()
        return _Grant(self._n, _args.ttl(ttl))

    async def put(
        self,
        key: BytesLike,
        value: BytesLike,
        lease: Optional["AsyncLease"] = None,
        if_held: Optional[Union["AsyncLock", "AsyncTask", "OnceSlot", "AsyncPoolHolding", "AsyncLockSet"]] = None,
    ) -> int:
        """Like ``Client.put``: returns the revision; with ``if_held`` (a lock, a claimed task, a
        period's slot, a pool's holding or a lock set), ``NotHeld`` and nothing written unless it
        is held."""
        from ._aio_lockset import AsyncLockSet
        from ._aio_pool import AsyncPoolHolding
        from ._aio_tasks import AsyncTask
        from ._once import OnceSlot

        k, v = _args.to_bytes(key, "key"), _args.to_bytes(value, "value")
        if lease is not None and not isinstance(lease, AsyncLease):
            raise TypeError(f"lease must be an etcdlock.AsyncLease, not {type(lease).__name__}")
        if if_held is not None and not isinstance(if_held, (AsyncLock, AsyncTask, OnceSlot, AsyncPoolHolding, AsyncLockSet)):
            raise TypeError(
                f"if_held must be an etcdlock.AsyncLock, AsyncTask, OnceSlot, AsyncPoolHolding or AsyncLockSet, not {type(if_held).__name__}"
            )
        nl = lease._n if lease is not None else None
        if isinstance(if_held, (OnceSlot, AsyncPoolHolding, AsyncLockSet)):
            slot_revision: int = await _run(if_held._n.put(k, v, nl))
            return slot_revision
        nh = if_held._n if isinstance(if_held, AsyncLock) else None
        nt = if_held._n if isinstance(if_held, AsyncTask) else None
        revision: int = await _run(self._n.put(k, v, nl, nh, nt))
        return revision

    async def check_fence(self, fence: Union["Fence", str]) -> bool:
        """Like ``Client.check_fence``: whether the acquisition ``fence`` names still holds, now
        (one linearizable read; advisory)."""
        holds: bool = await _run(self._n.check_fence(fence_arg(fence)))
        return holds

    async def get(self, key: BytesLike) -> Optional[bytes]:
        """The value at ``key``, or None."""
        value: Optional[bytes] = await _run(self._n.get(_args.to_bytes(key, "key")))
        return value

    async def delete(self, key: BytesLike) -> bool:
        """Deletes ``key``; returns whether it existed."""
        existed: bool = await _run(self._n.delete(_args.to_bytes(key, "key")))
        return existed

    def cache(self, prefix: BytesLike) -> "_Loading":
        """A local copy of every key under ``prefix`` kept in step with etcd (see
        ``Client.cache``): ``cache = await client.cache("config/")``, or ``async with
        client.cache("config/") as cache:`` (closed on exit)."""
        from ._aio_cache import _Loading

        return _Loading(self._n.cache(_args.to_bytes(prefix, "prefix")))

    def watch(self, key: BytesLike, *, prefix: bool = False, start_revision: Optional[int] = None) -> "AsyncWatch":
        """An async iterator of ``WatchEvent``. The watch starts at ``async with`` (or the first
        ``__anext__``); changes from then on (or from ``start_revision``) are delivered."""
        k = _args.to_bytes(key, "key")
        p = _args.flag(prefix, "prefix")
        return AsyncWatch(self._n.watch(k, p, _args.start_revision(start_revision)))


class AsyncLock(LockView):
    """The asyncio lock: ``await acquire()``, ``await release()``, ``async with``."""

    # The names of the acquire's span and the hold's (an election's leadership: campaign, lead).
    _SPANS = ("etcdlock.acquire", "etcdlock.hold")

    def __init__(self, native: "_native.Lock", timeout: Optional[float]) -> None:
        self._n = native
        self._timeout = timeout
        self._lost = LostCallbacks()
        self._port: Optional[LoopPort] = None
        self._hold: "Optional[_trace.Hold]" = None

    async def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Like ``Lock.acquire``. Cancelling the awaiting task leaves the queue."""
        t = _args.acquire_timeout(blocking, timeout)
        wait = _trace.Wait.begin(self._SPANS[0], self.name)
        try:
            ok: bool = await _run_cancellable(self._n.acquire(t))
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        if ok:
            self._port = loop_port()
            self._lost.new_epoch()
            self._lost.arm(self._loop_port, self._n.watch_lost)
        if wait is not None:
            _trace.lock_acquired(self, wait, ok, t, self._loop_port, self._SPANS[1])
        return ok

    async def release(self) -> None:
        """Releases the lock; ``NotHeld`` if not held."""
        with _trace.releasing(self, self.name):
            await _run(self._n.release())

    async def fence(self) -> "Fence":
        """The holding acquisition's ``etcdlock.fencing.Fence`` (see ``Lock.fence``);
        ``NotHeld`` if not held."""
        return fence(await _run(self._n.fence()))

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the held lock is lost, on the event loop that
        acquired it (a coroutine function's result is scheduled as a task)."""
        self._lost.add(callback, self._loop_port, self._n.watch_lost)

    def _loop_port(self) -> LoopPort:
        try:
            return loop_port()
        except RuntimeError:
            if self._port is None:
                raise RuntimeError("on_lost needs a running event loop (or a lock acquired on one)") from None
            return self._port

    async def __aenter__(self) -> "AsyncLock":
        if not await self.acquire(timeout=self._timeout):
            raise LockTimeout(f"timed out after {self._timeout} s waiting for lock {self.name!r}")
        return self

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        try:
            await self.release()
        except NotHeld as e:
            if exc_type is None:
                raise LockLost(f"the lock was lost before the end of the async with block ({self.lost_reason})") from e


class AsyncLease(LeaseView):
    """A lease kept alive in the background; ``async with`` revokes it on exit."""

    def __init__(self, native: "_native.Lease") -> None:
        self._n = native
        self._lost = LostCallbacks()
        self._port: LoopPort = loop_port()

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the lease is lost, on its event loop."""
        self._lost.add(callback, lambda: self._port, self._n.watch_lost)

    async def revoke(self) -> None:
        """Revokes the lease, deleting the keys attached to it. Idempotent."""
        await _run(self._n.revoke())

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.revoke()


class _Grant:
    """``await client.lease(ttl)`` or ``async with client.lease(ttl) as lease``."""

    def __init__(self, client: "_native.Client", ttl: int) -> None:
        # The op is made now: the core checks the TTL at once (ValueError), not at await.
        self._op: Optional["_native.Op"] = client.lease(ttl)
        self._client, self._ttl = client, ttl
        self._lease: Optional[AsyncLease] = None

    async def _grant(self) -> AsyncLease:
        op, self._op = self._op or self._client.lease(self._ttl), None
        return AsyncLease(await _run(op))

    def __await__(self) -> Generator[Any, None, AsyncLease]:
        return self._grant().__await__()

    async def __aenter__(self) -> AsyncLease:
        self._lease = await self._grant()
        return self._lease

    async def __aexit__(self, *exc: object) -> None:
        if self._lease is not None:
            await self._lease.revoke()


class AsyncWatch:
    """An async iterator of ``WatchEvent``; ``close()`` (or ``await aclose()``) ends it."""

    def __init__(self, native: "_native.Watch") -> None:
        self._n = native
        # Events whose __anext__ was cancelled after the event arrived: delivered next.
        self._kept: Deque[Any] = deque()

    async def start(self) -> "AsyncWatch":
        """Creates the watch and waits for etcd's confirmation (else the first read does)."""
        await _run(self._n.start())
        return self

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        t = self._kept.popleft() if self._kept else await _run_cancellable(self._n.next(), self._keep)
        if t is None:
            raise StopAsyncIteration
        return WatchEvent(*t)

    def _keep(self, t: Any) -> None:
        if t is not None:
            self._kept.append(t)

    def close(self) -> None:
        """Stops the watch; a waiting ``__anext__`` ends the iteration."""
        self._n.close()

    async def aclose(self) -> None:
        """``close()``, awaitable (for ``contextlib.aclosing`` and the like)."""
        self.close()

    async def __aenter__(self) -> "AsyncWatch":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.close()
