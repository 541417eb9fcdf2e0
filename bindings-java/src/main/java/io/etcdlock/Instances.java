package io.etcdlock;

import java.util.List;
import java.util.Optional;

/**
 * A service's instances at one revision (from {@link EtcdLockClient#instances} and
 * {@link Discovery}), ordered by name. Immutable.
 */
public final class Instances {
    private final long revision;
    private final List<Instance> instances;

    private Instances(long revision, List<Instance> instances) {
        this.revision = revision;
        this.instances = instances;
    }

    /** Called by the native layer. */
    static Instances of(long revision, Instance[] instances) {
        return new Instances(revision, List.of(instances));
    }

    /** @return the instances, ordered by name (unmodifiable) */
    public List<Instance> instances() {
        return instances;
    }

    /** @return the etcd revision this set is the state at */
    public long revision() {
        return revision;
    }

    /**
     * @param name an instance's name
     * @return that instance, if it is in the set
     */
    public Optional<Instance> get(String name) {
        return instances.stream().filter(i -> i.name().equals(name)).findFirst();
    }

    /** @return e.g. {@code Instances@42[node-1=10.0.0.7:80]} */
    @Override
    public String toString() {
        return "Instances@" + revision + instances;
    }
}
