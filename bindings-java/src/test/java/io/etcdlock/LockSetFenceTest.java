package io.etcdlock;

import static io.etcdlock.LockSetTest.TTL;
import static io.etcdlock.LockSetTest.WAIT;
import static io.etcdlock.LockSetTest.field;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A pool slot's fence ({@link PoolHolding#fence}) and a lock set member's
 * ({@link LockSetHolding#fence}): the key at its token as etcdctl reads it, checked by
 * {@link EtcdLockClient#checkFence} while held and not after the release, the next holder's
 * token larger.
 */
@Timeout(60)
class LockSetFenceTest {
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // covers: FENCE-POOL-001
    @Test
    void aSlotsFenceChecksWhileHeldAndNotAfterRelease() throws Exception {
        String name = Etcd.uniqueName("fence-pool");
        Pool pool = client.pool(name, PoolOptions.slots("a", "b"));
        Fence f;
        try (PoolHolding held = pool.acquire(2, WAIT)) {
            f = held.fence("b");
            assertEquals(Fence.Kind.KEY, f.kind());
            assertArrayEquals(utf8(name + "/slot/b"), f.name());
            // The slot key's create revision, as etcd has it, is the token.
            assertEquals((long) held.tokens().get("b"), f.token());
            assertEquals(f.token(), field(name + "/slot/b", "create_revision"));
            assertEquals(f, Fence.parse(f.toString()));
            assertTrue(client.checkFence(f));
            assertTrue(client.checkFence(f.toString()));
            Fence fa = held.fence("a");
            assertEquals((long) held.tokens().get("a"), fa.token());
            assertTrue(client.checkFence(fa));
            assertThrows(IllegalArgumentException.class, () -> held.fence("z")); // not held
            assertThrows(NullPointerException.class, () -> held.fence(null));
            held.release();
            assertFalse(client.checkFence(f), "a released slot's fence still checks");
            assertFalse(client.checkFence(fa));
            // As the core's: the fence is still given after the release, and does not check.
            assertEquals(f, held.fence("b"));
        }
        try (PoolHolding next = pool.acquire(2, WAIT)) {
            Fence newer = next.fence("b");
            assertArrayEquals(f.name(), newer.name());
            assertTrue(newer.token() > f.token());
            assertEquals((long) next.tokens().get("b"), newer.token());
            assertTrue(client.checkFence(newer));
            assertFalse(client.checkFence(f));
            next.release();
            assertFalse(client.checkFence(newer));
        }
    }

    // covers: LOCKSET-TOKEN-001 (a member's fence is its key at the set's token: it checks while
    // the set holds, not after the release; none for a released set or a name not in it)
    @Test
    void aLockSetMembersFenceIsAtTheSetsToken() throws Exception {
        String x = Etcd.uniqueName("fence-x"), y = Etcd.uniqueName("fence-y");
        LockSet set = client.lockSet(List.of(SetMember.exclusive(x), SetMember.write(y)), TTL);
        LockSetHolding locks = set.acquire(WAIT);
        Fence fx = locks.fence(x), fy = locks.fence(y);
        for (Fence f : List.of(fx, fy)) {
            assertEquals(Fence.Kind.QUEUE, f.kind());
            assertEquals(locks.fencingToken(), f.token());
            assertTrue(client.checkFence(f));
        }
        assertArrayEquals(utf8(x), fx.name());
        assertArrayEquals(utf8(y), fy.name());
        for (String key : locks.keys()) {
            assertEquals(locks.fencingToken(), field(key, "create_revision"), key);
        }
        assertThrows(IllegalArgumentException.class, () -> locks.fence(x + "-other")); // not a member
        locks.release();
        assertFalse(client.checkFence(fx));
        assertFalse(client.checkFence(fy));
        assertThrows(NotHeldException.class, () -> locks.fence(x));
        locks.close();
        // The next holder of x: a larger token; its fence checks, the set's does not.
        try (LockGuard lone = client.lock(x, TTL).acquire(Duration.ofSeconds(5))) {
            Fence later = lone.fence();
            assertTrue(later.token() > fx.token());
            assertTrue(client.checkFence(later));
            assertFalse(client.checkFence(fx));
        }
    }
}
