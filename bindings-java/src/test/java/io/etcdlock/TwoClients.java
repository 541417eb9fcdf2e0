package io.etcdlock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Two clients of the shared test etcd for a test class: one to act, one to look or contend. */
abstract class TwoClients {
    static EtcdLockClient client;
    static EtcdLockClient other;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
        other = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
        other.close();
    }
}
