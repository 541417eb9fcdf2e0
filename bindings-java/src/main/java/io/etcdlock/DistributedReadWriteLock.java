package io.etcdlock;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A fair read-write lock on etcd (from {@link EtcdLockClient#rwlock}): readers hold together, a
 * writer alone, in arrival order (a reader waits only for writers that came before it, a writer
 * for everyone before it; neither starves). {@link #readLock()} and {@link #writeLock()} are
 * {@link DistributedLock}s: the explicit API ({@code acquire}, {@code tryAcquire},
 * {@code acquireAsync}, a {@link LockGuard} with its fencing token and fenced writes) and the
 * {@link java.util.concurrent.locks.Lock} methods, with their differences from
 * {@code ReentrantReadWriteLock}: not reentrant, no downgrade of a write to a read, and a lock
 * can be lost while held. A plain lock (or {@code etcdctl lock}) on the same name counts as a
 * writer. Creating it sends nothing. Thread-safe.
 */
public final class DistributedReadWriteLock implements ReadWriteLock {
    private final DistributedLock read;
    private final DistributedLock write;

    DistributedReadWriteLock(DistributedLock read, DistributedLock write) {
        this.read = read;
        this.write = write;
    }

    /** @return the lock's name */
    public String name() {
        return read.name();
    }

    /** @return the lock that reads: held together with other readers */
    @Override
    public DistributedLock readLock() {
        return read;
    }

    /** @return the lock that writes: held alone */
    @Override
    public DistributedLock writeLock() {
        return write;
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock{" + name() + "}";
    }
}
