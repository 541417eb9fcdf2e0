"""The blocking API: ``Client``, ``Lock``, ``Lease``, ``Watch``.

Every blocking call releases the GIL. On the main thread a blocking call wakes every 20 ms so
that Ctrl-C raises ``KeyboardInterrupt`` promptly; an interrupted ``acquire()`` has left the
lock queue (its cleanup finished) by the time the exception propagates."""

from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Type, Union

from . import _args, _log, _native, _trace
from ._args import BytesLike
from ._common import DEFAULT_TIMEOUT, DEFAULT_TTL, fence, fence_arg, Instances, instances, LeaseView, LockState, LockView, lock_state, PathArg, WatchEvent, native_client, refuse_in_event_loop
from ._errors import LockLost, LockTimeout, NotHeld
from ._lost import LostCallbacks
from ._ports import thread_port

if TYPE_CHECKING:
    from .fencing import Fence
    from ._cache import Cache
    from ._recipes import Election, RWLock
    from ._registry import Discovery, Registration
    from ._once import Once, OnceSlot
    from ._pool import Pool, PoolHolding, SlotInfo
    from ._lockset import LockSet, MemberArg
    from ._tasks import Task, TaskQueue


class Client:
    """A connection to an etcd cluster, shared by any number of threads.

    ``endpoints`` is a comma-separated string or a list of URLs (``http://host:port``).
    ``timeout`` (seconds) bounds connecting and each request. Connects (and checks that the
    cluster answers) before returning: raises ``Unavailable`` if it cannot within ``timeout``.

    TLS: ``https://`` endpoints use TLS (all endpoints must use the same scheme). ``ca_file``
    (PEM) is the CA that signed the members' certificates (default: the system's roots);
    ``cert_file`` and ``key_file`` (PEM) are this client's certificate and key, for members
    that require client certificates; ``server_name`` is the name to check in the members'
    certificates instead of each endpoint's host. Paths are ``str`` or ``os.PathLike``; the
    files are read when connecting. A missing or malformed file, or TLS options with
    ``http://`` endpoints, raise ``ValueError``; an untrusted server certificate raises
    ``Unavailable``, a refused client certificate ``AuthError``.
    """

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
        self._n.connect().wait()

    def close(self) -> None:
        """Closes the client: its leases are revoked (so its locks are released), and every
        call, including waiting acquires, raises ``Closed`` from now on. Idempotent."""
        self._n.close().wait()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._n.is_closed()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lock(
        self, name: BytesLike, ttl: int = DEFAULT_TTL, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None
    ) -> "Lock":
        """A handle on the lock ``name`` (nothing is sent yet). Its key is bound to the lease of
        ``ttl`` seconds that this client's locks with that TTL share (kept alive while in use).
        ``timeout`` is how long ``with client.lock(...)`` waits before raising ``LockTimeout``
        (None: forever). ``value`` (str or bytes, at most 4096 bytes, else ValueError) is stored
        in each acquisition's queue key, for ``inspect()`` to show: who holds or waits."""
        _log.refresh()
        n = _args.to_bytes(name, "name")
        t = _args.ttl(ttl)
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return Lock(self._n.lock(n, t, v), timeout)

    def lock_set(
        self, members: "Iterable[MemberArg]", ttl: int = DEFAULT_TTL, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None
    ) -> "LockSet":
        """A handle on several lock names taken together, all or none, with one fencing token
        (nothing is sent yet): ``with client.lock_set(["acct/1", "acct/2"], timeout=5.0) as
        locks:``. ``members``: 1 to 64 names (each exclusive, as ``client.lock``) or
        ``etcdlock.read(name)``, ``etcdlock.write(name)``, ``etcdlock.permit(name, permits)``;
        none twice, none under another (``a`` and ``a/b``): ``ValueError``. Any order: callers
        listing the same names in other orders never deadlock. ``ttl``, ``timeout`` and
        ``value`` as for ``lock``; the keys are on this client's lease for ``ttl``."""
        from ._lockset import LockSet, native_lock_set

        _log.refresh()
        n, members_ = native_lock_set(self._n, members, ttl, timeout, value)
        return LockSet(n, members_, timeout)

    def semaphore(
        self,
        name: BytesLike,
        permits: int,
        ttl: int = DEFAULT_TTL,
        *,
        timeout: Optional[float] = None,
        value: Optional[BytesLike] = None,
        count: int = 1,
    ) -> "Lock":
        """A handle on the semaphore ``name``: each acquisition takes ``count`` (default 1) of
        ``permits`` (1 to 1024), at most that many held at once across every client, served in
        arrival order; a request for several waits at the head of the queue until that many
        are free, and later requests wait behind it (never starved by smaller ones). ``count``
        above ``permits`` raises ``ValueError``. The handle is a ``Lock`` (``with``,
        ``acquire``, one fencing token for the permits it holds, ``if_held=``). Every
        participant must give the same ``permits``: one that gives another raises
        ``ValueError`` when it acquires, and leaves nothing (the count can change once nobody
        holds or waits)."""
        _log.refresh()
        n, p, t = _args.to_bytes(name, "name"), _args.permits(permits), _args.ttl(ttl)
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return Lock(self._n.semaphore(n, p, t, v, _args._int64(count, "count", "an int")), timeout)

    def pool(
        self,
        name: BytesLike,
        slots: Optional[Sequence[str]] = None,
        *,
        size: Optional[int] = None,
        ttl: int = DEFAULT_TTL,
        reuse_delay: Optional[float] = None,
    ) -> "Pool":
        """The pool of named slots ``name``: ``slots`` (a list of ids: 1 to 1024, each 1 to 128
        bytes without ``/`` or a newline, no duplicates) or ``size=N`` (ids ``"0"`` to
        ``"N-1"``). ``acquire(count=1, owner=None, timeout=None)`` → a ``PoolHolding`` (a
        context manager) with the slot ids it holds and a fencing token per slot. Holdings live
        on this client's lease of ``ttl`` seconds, kept alive while held; a slot whose holder
        died is not handed out again before ``reuse_delay`` seconds (default 0; timed by an etcd
        lease, rounded up to whole seconds, at least about 2 s unless 0), a released one is free
        at once. Every participant that gives the slots must give the same slots and reuse
        delay: the first acquire stores them, and one that disagrees raises ``ValueError``
        (change the slots with ``add_slots`` / ``remove_slots``). With neither ``slots`` nor
        ``size``, the pool is the one defined in etcd (its first acquire raises ``ValueError``
        if none is). Checks the arguments now; sends nothing until used."""
        from ._pool import Pool, definition

        _log.refresh()
        n = _args.to_bytes(name, "name")
        t, d, ids, size_n = definition(slots, size, ttl, reuse_delay)
        return Pool(self._n.pool(n, t, d, ids, size_n))

    def inspect_pool(self, name: BytesLike) -> "Optional[List[SlotInfo]]":
        """The slots of the pool ``name`` as etcd has them now (see ``Pool.slots``), or None if
        no pool is defined there. Changes nothing."""
        from ._pool import slot_infos

        raw = self._n.inspect_pool(_args.to_bytes(name, "name")).wait()
        return None if raw is None else slot_infos(raw)

    def queue(self, name: BytesLike, ttl: int = DEFAULT_TTL, *, max_attempts: int = 5,
              max_processing: Optional[float] = None) -> "TaskQueue":
        """The task queue ``name``: ``put(payload, id=, priority=, delay=)``, ``claim(timeout)``
        → a ``Task`` (a context manager that acks, or nacks on an exception), ``tasks()``,
        ``stats()``, ``dead()``, ``requeue_dead(id)``. A claim lives on this client's lease of
        ``ttl`` seconds, kept alive while held; an item goes to the dead letters after
        ``max_attempts`` deliveries. With ``max_processing`` (seconds) a claim ends that long
        after it was made, held or not (a hung handler cannot keep an item). Sends nothing until
        used."""
        from ._tasks import TaskQueue
        from ._tasks_common import max_attempts as _max_attempts

        n, t, m = _args.to_bytes(name, "name"), _args.ttl(ttl), _max_attempts(max_attempts)
        mp = None if max_processing is None else _args.seconds(max_processing, "max_processing")
        return TaskQueue(self._n.queue(n, t, m, mp))

    def once(self, name: BytesLike, every: float, *, ttl: int = DEFAULT_TTL, at: Optional[float] = None,
             keep_periods: int = 3) -> "Once":
        """A job run at most once per period (``every`` seconds) across every caller:
        ``with client.once("reports/daily", every=86400.0) as slot:`` — ``slot`` is None unless
        this caller won the period's slot (the boundary nearest ``at``, now by default); the
        block's end marks the period done, an exception releases it for the next trigger. Or
        ``client.once(...).claim()`` → the slot or None, then ``slot.done()``."""
        from ._once import Once, options

        return Once(self._n, _args.to_bytes(name, "name"), options(every, ttl, at, keep_periods))

    def rwlock(self, name: BytesLike, ttl: int = DEFAULT_TTL) -> "RWLock":
        """The read-write lock ``name``: ``with rw.read(timeout=5.0):``, ``with rw.write():``."""
        from ._recipes import RWLock

        n, t = _args.to_bytes(name, "name"), _args.ttl(ttl)
        self._n.rwlock(n, t, False)  # checks the name and TTL now
        return RWLock(self._n, n, t)

    def election(self, name: BytesLike, ttl: int = DEFAULT_TTL) -> "Election":
        """The election ``name`` (candidates' keys on this client's lease of ``ttl`` seconds):
        ``with election.campaign("node-1", timeout=5.0) as leadership:``, ``leader()``,
        ``observe()``. Shares its keys with Go's ``concurrency.Election`` and ``etcdctl elect``."""
        from ._recipes import Election

        n, t = _args.to_bytes(name, "name"), _args.ttl(ttl)
        self._n.candidate(n, t, b"")  # checks the name and TTL now
        return Election(self._n, n, t)

    def register(
        self, service: BytesLike, instance: BytesLike, value: BytesLike = b"", ttl: int = DEFAULT_TTL, *, replace: bool = False
    ) -> "Registration":
        """Registers ``instance`` of ``service`` (key ``<service>/<instance>``) with ``value``
        on a lease of ``ttl`` seconds of its own, and keeps it registered: a lost lease
        (expired, revoked, the key deleted) is followed by a new registration at once, reported
        to ``on_lost`` / ``on_restored``. ``with client.register(...) as reg:`` deregisters on
        exit. A name another registrant holds raises ``WouldBlock`` (nothing left) unless
        ``replace=True``. For etcd's Go gRPC resolver, register ``grpc_endpoint(addr)``."""
        from ._registry import Registration

        _log.refresh()
        s, i, v = _args.to_bytes(service, "service"), _args.to_bytes(instance, "instance"), _args.to_bytes(value, "value")
        op = self._n.register(s, i, v, _args.ttl(ttl), _args.flag(replace, "replace"))
        return _trace.traced("etcdlock.register", s + b"/" + i, False, lambda: Registration(op.wait()), _trace.registered)

    def instances(self, service: BytesLike) -> Instances:
        """The instances of ``service`` now (one read), in name order, with the revision."""
        return instances(self._n.instances(_args.to_bytes(service, "service")).wait())

    def discover(self, service: BytesLike) -> "Discovery":
        """``for snapshot in client.discover("svc/api"):`` — the current ``Instances`` first,
        then the whole set after each change (none missed, across reconnects and compaction).
        Sends nothing until the first iteration; ``close()`` ends it."""
        from ._registry import Discovery

        return Discovery(self._n.discover(_args.to_bytes(service, "service")))

    def inspect(self, name: BytesLike) -> LockState:
        """The queue of lock ``name`` as etcd has it now (whoever holds or waits: this client,
        another, ``etcdctl lock``): ``.holder`` (None when free) and ``.waiters`` in order, each
        a ``QueueEntry`` with ``key``, ``fencing_token``, ``lease``, ``ttl`` (seconds left) and
        ``value``. Changes nothing."""
        return lock_state(self._n.inspect(_args.to_bytes(name, "name")).wait())

    def metrics(self) -> Dict[str, Any]:
        """This client's metrics since it connected (no I/O; cheap): ``acquisitions``,
        ``lock_timeouts``, ``would_block``, ``acquire_failures``, ``releases``,
        ``release_failures`` (ints), ``losses`` (a dict by reason: ``expired``, ``revoked``,
        ``key_deleted``, ``closed``), and the histograms ``lock_wait_seconds`` and
        ``lock_hold_seconds`` as ``{"count": int, "sum": float (seconds), "buckets": [(upper
        bound in seconds, cumulative count), ...]}``. The names are the core's
        (``etcdlock::Metrics::entries``), the same in every binding."""
        return self._n.metrics()

    @property
    def name(self) -> str:
        """The client's name: the ``client`` label of its metrics (``name=`` given to the
        constructor, else ``etcdlock-<n>``, unique in the process)."""
        return self._n.name()

    def metrics_text(self) -> str:
        """The same metrics in the Prometheus text format (``etcdlock_lock_acquisitions_total``,
        ``etcdlock_lock_wait_seconds`` ...), every series labelled ``client="<name>"``, for a
        ``/metrics`` endpoint. To serve it from a ``prometheus_client`` registry instead, see
        ``etcdlock.prometheus.register``."""
        return self._n.metrics_text()

    def lease(self, ttl: int = DEFAULT_TTL) -> "Lease":
        """Grants a lease of ``ttl`` seconds, kept alive in the background until revoked."""
        _log.refresh()
        return Lease(self._n.lease(_args.ttl(ttl)).wait())

    def put(
        self,
        key: BytesLike,
        value: BytesLike,
        lease: Optional["Lease"] = None,
        if_held: Optional[Union["Lock", "Task", "OnceSlot", "PoolHolding", "LockSet"]] = None,
    ) -> int:
        """Writes ``value`` at ``key`` (attached to ``lease`` if given) and returns the write's
        revision. With ``if_held=lock`` (or a claimed ``Task``, a period's ``OnceSlot``, a
        pool's ``PoolHolding``) the write happens only while that lock (or claim, or every slot
        of the holding, or every member of a ``LockSet``) is held (etcd checks it in the same
        transaction); otherwise ``NotHeld`` is raised and nothing is written."""
        from ._lockset import LockSet
        from ._once import OnceSlot
        from ._pool import PoolHolding
        from ._tasks import Task

        k, v = _args.to_bytes(key, "key"), _args.to_bytes(value, "value")
        if lease is not None and not isinstance(lease, Lease):
            raise TypeError(f"lease must be an etcdlock.Lease, not {type(lease).__name__}")
        if if_held is not None and not isinstance(if_held, (Lock, Task, OnceSlot, PoolHolding, LockSet)):
            raise TypeError(f"if_held must be an etcdlock.Lock, Task, OnceSlot, PoolHolding or LockSet, not {type(if_held).__name__}")
        nl = lease._n if lease is not None else None
        if isinstance(if_held, (OnceSlot, PoolHolding, LockSet)):
            slot_revision: int = if_held._n.put(k, v, nl).wait()
            return slot_revision
        nh = if_held._n if isinstance(if_held, Lock) else None
        nt = if_held._n if isinstance(if_held, Task) else None
        revision: int = self._n.put(k, v, nl, nh, nt).wait()
        return revision

    def check_fence(self, fence: Union["Fence", str]) -> bool:
        """Whether the acquisition ``fence`` names (a ``Fence``, or its string form from another
        process) still holds, now: one linearizable read. False for a fence of another etcd
        cluster. Advisory: it may stop holding right after; a database that checks the token
        itself (``etcdlock.fencing``) is what refuses a late write. ``ValueError`` if ``fence``
        is malformed."""
        holds: bool = self._n.check_fence(fence_arg(fence)).wait()
        return holds

    def get(self, key: BytesLike) -> Optional[bytes]:
        """The value at ``key``, or None."""
        value: Optional[bytes] = self._n.get(_args.to_bytes(key, "key")).wait()
        return value

    def delete(self, key: BytesLike) -> bool:
        """Deletes ``key``; returns whether it existed."""
        existed: bool = self._n.delete(_args.to_bytes(key, "key")).wait()
        return existed

    def cache(self, prefix: BytesLike) -> "Cache":
        """A local copy of every key under ``prefix`` (``""``: all), loaded at one revision and
        kept in step with etcd: ``with client.cache("config/") as cache:`` — ``cache.get(key)``,
        ``cache.snapshot()``, ``cache.revision``, ``cache.wait_for(client.put(...), timeout=5.0)``,
        ``for ev in cache.events():``. Reads are local, at once, and may be behind etcd."""
        from ._cache import Cache

        return Cache(self._n.cache(_args.to_bytes(prefix, "prefix")).wait())

    def watch(self, key: BytesLike, *, prefix: bool = False, start_revision: Optional[int] = None) -> "Watch":
        """Watches ``key`` (every key under it with ``prefix=True``). Returns once etcd has
        confirmed the watch: every change after that (or from ``start_revision``) is delivered,
        in order, without gaps, across reconnects. Raises ``Compacted`` if ``start_revision``
        is no longer available."""
        k = _args.to_bytes(key, "key")
        p = _args.flag(prefix, "prefix")
        n = self._n.watch(k, p, _args.start_revision(start_revision))
        n.start().wait()
        return Watch(n)


class Lock(LockView):
    """A distributed lock, used like ``threading.Lock``.

    Any number of threads may call ``acquire()`` on one ``Lock``: each queues in etcd (first
    come, first served) and they exclude each other, as they exclude other processes. The
    holder calls ``release()`` (from any thread). Also a context manager.
    """

    # The names of the acquire's span and the hold's (an election's leadership: campaign, lead).
    _SPANS = ("etcdlock.acquire", "etcdlock.hold")

    def __init__(self, native: "_native.Lock", timeout: Optional[float]) -> None:
        self._n = native
        self._timeout = timeout
        self._lost = LostCallbacks()
        self._hold: "Optional[_trace.Hold]" = None

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Waits for the lock; True once held. ``blocking=False`` tries once (False if the lock
        is held or has waiters); ``timeout`` (seconds; None or -1 = forever) returns False when
        it passes. Raises ``Closed`` if the client is closed meanwhile, ``LockLost`` if the
        lease is lost while waiting."""
        t = _args.acquire_timeout(blocking, timeout)
        if t != 0:
            refuse_in_event_loop("Lock.acquire()")
        wait = _trace.Wait.begin(self._SPANS[0], self.name)
        try:
            ok: bool = self._n.acquire(t).wait()
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        if ok:
            self._lost.new_epoch()
            self._lost.arm(thread_port, self._n.watch_lost)
        if wait is not None:
            _trace.lock_acquired(self, wait, ok, t, thread_port, self._SPANS[1])
        return ok

    def release(self) -> None:
        """Releases the lock (a fenced delete: never a later holder's key). Raises ``NotHeld``
        if it is not held (never acquired, released, or lost)."""
        with _trace.releasing(self, self.name):
            self._n.release().wait()

    def fence(self) -> "Fence":
        """The holding acquisition's ``etcdlock.fencing.Fence`` (the lock's name, the fencing
        token and the etcd cluster's ID; ``str(fence)`` to pass it on), for a database to check
        (``etcdlock.fencing.postgres.check``) or ``client.check_fence``. Reads the cluster's ID
        on the client's first fence. ``NotHeld`` if not held. A semaphore's permit or a read
        lock has one too, but is not exclusive: its fence does not exclude other holders."""
        return fence(self._n.fence().wait())

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the held lock is lost (not when released), on
        etcdlock's callback thread. Stays registered for later acquisitions. If the lock is
        already lost, the callback runs soon."""
        self._lost.add(callback, thread_port, self._n.watch_lost)

    def __enter__(self) -> "Lock":
        if not self.acquire(timeout=self._timeout):
            raise LockTimeout(f"timed out after {self._timeout} s waiting for lock {self.name!r}")
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        try:
            self.release()
        except NotHeld as e:
            if exc_type is None:  # the body ran to the end, but not (all of it) under the lock
                raise LockLost(f"the lock was lost before the end of the with block ({self.lost_reason})") from e


class Lease(LeaseView):
    """A lease kept alive in the background. A context manager that revokes it on exit."""

    def __init__(self, native: "_native.Lease") -> None:
        self._n = native
        self._lost = LostCallbacks()

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the lease is lost (``"revoked"`` included), on
        etcdlock's callback thread."""
        self._lost.add(callback, thread_port, self._n.watch_lost)

    def revoke(self) -> None:
        """Revokes the lease, deleting the keys attached to it. Idempotent."""
        self._n.revoke().wait()

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.revoke()


class Watch:
    """An iterator of ``WatchEvent``; ``close()`` ends it."""

    def __init__(self, native: "_native.Watch") -> None:
        self._n = native

    def __iter__(self) -> Iterator[WatchEvent]:
        return self

    def __next__(self) -> WatchEvent:
        refuse_in_event_loop("iterating a Watch")
        t = self._n.next().wait()
        if t is None:
            raise StopIteration
        return WatchEvent(*t)

    def close(self) -> None:
        """Stops the watch (also from another thread: a waiting iteration ends)."""
        self._n.close()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
