package io.etcdlock;

import java.util.List;
import java.util.Optional;

/**
 * A lock's queue as etcd had it at one revision ({@link EtcdLockClient#inspect}).
 *
 * @param holders every key that holds, oldest first: the holder alone for a lock (up to N for a
 *     semaphore of N, the readers older than every writer for a read-write lock)
 * @param waiters the keys that do not hold, in queue order (the order they will be served in)
 * @param revision the etcd revision the queue was read at
 */
public record LockState(List<QueueEntry> holders, List<QueueEntry> waiters, long revision) {
    /**
     * @param holders as above
     * @param waiters as above
     * @param revision as above
     */
    public LockState {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }

    /** Made by the native layer (bindings-java/src/inspect.rs). */
    static LockState of(QueueEntry[] holders, QueueEntry[] waiters, long revision) {
        return new LockState(List.of(holders), List.of(waiters), revision);
    }

    /** @return the holder (the oldest key), empty when the lock is free */
    public Optional<QueueEntry> holder() {
        return holders.isEmpty() ? Optional.empty() : Optional.of(holders.get(0));
    }
}
