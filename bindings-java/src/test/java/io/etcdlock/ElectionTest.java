package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Leader election: campaign, leader(), proclaim, resign, FIFO terms, timeouts, fencing. */
@Timeout(60)
class ElectionTest extends TwoClients {
    static final Duration TTL = Duration.ofSeconds(10);
    static final Duration WAIT = Duration.ofSeconds(10);
    /** The leader key's mod revision, read by etcdctl. */
    static long modRevision(String key) {
        String json = Etcd.etcdctl("get", key, "-w", "json");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"mod_revision\":(\\d+)").matcher(json);
        assertTrue(m.find(), json);
        return Long.parseLong(m.group(1));
    }

    // covers: ELECT-BASIC-001
    @Test
    void campaignLeadsAtOnceAndLeaderShowsUs() throws Exception {
        String name = Etcd.uniqueName("elect-basic");
        Election election = client.election(name, TTL);
        assertEquals(Optional.empty(), election.leader());
        try (Leadership leading = election.campaign(bytes("node-1"), WAIT)) {
            assertTrue(leading.isHeld());
            assertEquals(name + "/" + Long.toHexString(leading.leaseId()), leading.key());
            Leader leader = election.leader().orElseThrow();
            assertEquals(leading.key(), leader.key());
            assertEquals("node-1", text(leader.value()));
            assertEquals(leading.fencingToken(), leader.revision());
            assertEquals(leading.leaseId(), leader.lease());
            // Another client reads the same leader.
            assertEquals(leader.key(), other.election(name, TTL).leader().orElseThrow().key());
        }
    }

    // covers: ELECT-PROCLAIM-001
    @Test
    void proclaimReplacesTheValue() throws Exception {
        String name = Etcd.uniqueName("elect-proclaim");
        Election election = client.election(name, TTL);
        try (Leadership leading = election.campaign("first", WAIT)) {
            long rev = leading.proclaim("second");
            assertEquals(modRevision(leading.key()), rev);
            Leader leader = election.leader().orElseThrow();
            assertEquals("second", leader.valueString());
            assertEquals(leading.key(), leader.key());
            assertEquals(leading.fencingToken(), leader.revision());
        }
    }

    // covers: ELECT-RESIGN-001
    @Test
    void resignEndsTheTermAndALateProclaimIsNotHeld() throws Exception {
        String name = Etcd.uniqueName("elect-resign");
        Election election = client.election(name, TTL);
        Leadership first = election.campaign("a", WAIT);
        first.resign();
        assertEquals(Optional.empty(), election.leader());
        assertThrows(NotHeldException.class, () -> first.proclaim("late"));
        assertThrows(NotHeldException.class, first::resign);
        first.close();
        try (Leadership second = election.campaign("b", WAIT)) {
            assertTrue(second.fencingToken() > first.fencingToken());
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: ELECT-FIFO-001
    @Test
    void aSecondCandidateWaitsThenLeadsWithABiggerToken() throws Exception {
        String name = Etcd.uniqueName("elect-fifo");
        Leadership first = client.election(name, TTL).campaign("one", WAIT);
        CompletableFuture<Leadership> second = other.election(name, TTL).campaignAsync("two", WAIT);
        assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2), "the second candidate never queued");
        assertFalse(second.isDone(), "two leaders at once");
        assertEquals("one", client.election(name, TTL).leader().orElseThrow().valueString());
        first.close();
        try (Leadership next = second.get(10, TimeUnit.SECONDS)) {
            assertTrue(next.fencingToken() > first.fencingToken());
            Leader leader = client.election(name, TTL).leader().orElseThrow();
            assertEquals("two", leader.valueString());
            assertEquals(next.key(), leader.key());
        }
    }

    // covers: ELECT-TIMEOUT-001
    @Test
    void zeroAndShortTimeoutsLeaveNoKey() throws Exception {
        String name = Etcd.uniqueName("elect-timeout");
        try (Leadership leading = client.election(name, TTL).campaign("one", WAIT)) {
            Election election = other.election(name, TTL);
            EtcdLockException busy = assertThrows(EtcdLockException.class, () -> election.campaign("two", Duration.ZERO));
            assertEquals("WOULD_BLOCK", busy.kind());
            assertEquals(List.of(leading.key()), Etcd.keysUnder(name + "/"));
            long t0 = System.nanoTime();
            assertThrows(LockTimeoutException.class, () -> election.campaign("two", Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - t0 >= 290_000_000L);
            assertEquals(List.of(leading.key()), Etcd.keysUnder(name + "/"));
        }
    }

    // covers: ELECT-PROCLAIM-FENCED-001
    @Test
    void aDeposedLeaderWritesNothing() throws Exception {
        String name = Etcd.uniqueName("elect-fenced");
        String data = name + "-data";
        Election election = client.election(name, TTL);
        Leadership leading = election.campaign("one", WAIT);
        Etcd.etcdctl("del", leading.key());
        assertThrows(NotHeldException.class, () -> leading.proclaim("two"));
        assertThrows(NotHeldException.class, () -> leading.putIfHeld(data, bytes("x")));
        assertEquals(Optional.empty(), client.get(data));
        assertEquals(Optional.empty(), election.leader());
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        assertFalse(leading.isHeld());
        assertThrows(LockLostException.class, leading::close);
    }

    // covers: ELECT-PHANTOM-001
    @Test
    void aWaitingCandidateWhoseLeaseIsRevokedFailsAndNeverLeads() throws Exception {
        String name = Etcd.uniqueName("elect-phantom");
        try (Leadership leading = client.election(name, TTL).campaign("one", WAIT)) {
            CompletableFuture<Leadership> waiting = other.election(name, Duration.ofSeconds(7)).campaignAsync("two", WAIT);
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2), "the second candidate never queued");
            String waiterKey = Etcd.keysUnder(name + "/").stream().filter(k -> !k.equals(leading.key())).findFirst().orElseThrow();
            // The key is <name>/<lease hex>: revoke that lease behind the candidate's back (etcd-io/etcd#11007).
            Etcd.etcdctl("lease", "revoke", waiterKey.substring(name.length() + 1).split("-")[0]);
            ExecutionException failed = assertThrows(ExecutionException.class, () -> waiting.get(2, TimeUnit.SECONDS),
                    "the phantom candidate's campaign did not fail within 2 s");
            assertTrue(failed.getCause() instanceof LockLostException, String.valueOf(failed.getCause()));
            // The leader is undisturbed, and the phantom never leads.
            assertTrue(leading.isHeld());
            Leader leader = client.election(name, TTL).leader().orElseThrow();
            assertEquals(leading.key(), leader.key());
            assertEquals("one", leader.valueString());
            assertEquals(List.of(leading.key()), Etcd.keysUnder(name + "/"));
            leading.proclaim("still one");
            assertEquals("still one", client.election(name, TTL).leader().orElseThrow().valueString());
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    @Test
    void cancellingAnAsyncCampaignLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("elect-cancel");
        try (Leadership leading = client.election(name, TTL).campaign("one", WAIT)) {
            CompletableFuture<Leadership> waiting = other.election(name, TTL).campaignAsync(bytes("two"), WAIT);
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2));
            assertTrue(waiting.cancel(true));
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").equals(List.of(leading.key()))), "the cancelled candidate's key is left");
        }
    }

    @Test
    void anInterruptedCampaignLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("elect-interrupt");
        try (Leadership leading = client.election(name, TTL).campaign("one", WAIT)) {
            Thread main = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2);
                main.interrupt();
            });
            interrupter.start();
            assertThrows(InterruptedException.class, () -> other.election(name, TTL).campaign(bytes("two"), WAIT));
            interrupter.join(10_000);
            assertEquals(List.of(leading.key()), Etcd.keysUnder(name + "/"));
        }
    }
}
