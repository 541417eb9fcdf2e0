package io.etcdlock.fencing;

import io.etcdlock.NotHeldException;

/**
 * The database refused a fence ({@link JdbcFence#check}): a newer holder of the lock has written
 * through its own fence, or the fence is of another etcd cluster than the one that set the mark.
 * Nothing the transaction writes may commit: roll it back. A {@link NotHeldException} (kind
 * {@code NOT_HELD}), as any write of a holder that no longer holds.
 */
public class StaleFenceException extends NotHeldException {
    private static final long serialVersionUID = 1L;
    /** The resource whose mark refused the fence. */
    private final String resource;
    /** Whether the mark was set by another etcd cluster (an operator must reset it). */
    private final boolean otherCluster;

    /**
     * @param message what happened
     * @param resource the resource whose mark refused the fence
     * @param otherCluster whether the mark was set by another etcd cluster
     */
    public StaleFenceException(String message, String resource, boolean otherCluster) {
        super(message);
        this.resource = resource;
        this.otherCluster = otherCluster;
    }

    /** @return the resource whose mark refused the fence */
    public String resource() {
        return resource;
    }

    /**
     * @return whether the mark was set by another etcd cluster (tokens of two clusters are not
     *     comparable: an operator must reset the mark, as the message says)
     */
    public boolean otherCluster() {
        return otherCluster;
    }
}
