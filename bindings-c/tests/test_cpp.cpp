// The header compiles as C++ (extern "C", no C-only constructs) and links from C++; the C++
// wrapper (etcdlock.hpp) drives an election, a semaphore, a read-write lock, the service
// registry, the task queue, once-per-period jobs and pools of named slots.
#include "etcdlock.h"
#include <etcdlock.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

static int failures = 0;
#define EXPECT(c) do { if (!(c)) { std::fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

// The RAII wrapper's election, semaphore and read-write lock calls (the C tests cover the
// behaviour: tests/test_recipes.c).
static void wrapper_recipes(const char *eps, const std::string &base) {
    try {
        etcdlock::client a(eps), b(eps);
        std::string elect = base + "-elect";
        etcdlock::leader now;
        EXPECT(!a.leader(elect, &now) && !now.present);
        etcdlock::observer obs = b.observe(elect);
        EXPECT(obs.next(5000, &now) && !now.present);
        {
            etcdlock::lock leading = a.campaign(elect, "cpp-1", 10, 5000);
            EXPECT(leading.is_held() && leading.fencing_token() > 0);
            etcdlock_health h = leading.health(); // covers: HEALTH-HANDLE-001 (through the wrapper)
            EXPECT(h.ok && h.state == ETCDLOCK_HEALTH_HELD && h.fencing_token == leading.fencing_token());
            EXPECT(b.leader(elect, &now) && now.value == "cpp-1" && now.key == leading.key());
            EXPECT(obs.next(5000, &now) && now.present && now.revision == leading.fencing_token());
            EXPECT(leading.proclaim("cpp-2") > leading.fencing_token());
            EXPECT(obs.next(5000, &now) && now.value == "cpp-2");
            try {
                b.campaign(elect, "other", 10, 0);
                EXPECT(false);
            } catch (const etcdlock::error &e) {
                EXPECT(e.code() == ETCDLOCK_E_WOULD_BLOCK);
            }
            leading.resign();
            try {
                leading.proclaim("late");
                EXPECT(false);
            } catch (const etcdlock::error &e) {
                EXPECT(e.code() == ETCDLOCK_E_NOT_HELD);
            }
        }
        EXPECT(obs.next(5000, &now) && !now.present);
        EXPECT(!obs.next(200, &now)); // nothing changed
        obs.close();
        try {
            obs.next(0, &now);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_CLOSED);
        }

        std::string sem = base + "-sem";
        etcdlock::lock p1 = a.semaphore_acquire(sem, 2, 10, 5000);
        etcdlock::lock p2 = b.semaphore_acquire(sem, 2, 10, 5000);
        EXPECT(p1.is_held() && p2.is_held());
        try {
            a.semaphore_acquire(sem, 2, 10, 0);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_WOULD_BLOCK);
        }

        std::string rw = base + "-rw";
        etcdlock::lock r1 = a.read_lock(rw, 10, 5000);
        etcdlock::lock r2 = b.read_lock(rw, 10, 0); // readers together
        try {
            b.write_lock(rw, 10, 0);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_WOULD_BLOCK);
        }
        r1.release();
        r2.release();
        etcdlock::lock w = b.write_lock(rw, 10, 5000);
        EXPECT(w.fencing_token() > r2.fencing_token());
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

// Reads sets from `d` until one has `n` instances (the changes may come one set each or
// together); false if none did within about 10 s.
static bool next_set_of(etcdlock::discovery &d, size_t n, std::vector<etcdlock::instance> *set, int64_t *rev) {
    for (int i = 0; i < 20; i++) {
        if (d.next(500, set, rev) && set->size() == n) return true;
    }
    return false;
}

// The RAII wrapper's service registry (the C tests cover the behaviour: tests/test_registry.c):
// two instances registered, seen by instances() and by a discovery, one updated, one closed.
static void wrapper_registry(const char *eps, const std::string &base) {
    try {
        etcdlock::client a(eps), b(eps);
        std::string svc = base + "-svc";
        int64_t rev0 = -1;
        EXPECT(a.instances(svc, &rev0).empty() && rev0 > 0);
        etcdlock::discovery d = b.discover(svc);
        std::vector<etcdlock::instance> set(1);
        int64_t rev = -1;
        EXPECT(d.next(5000, &set, &rev) && set.empty() && rev >= rev0);
        EXPECT(!d.next(200, &set)); // nothing changed

        const std::string v2("v\0two", 5); // bytes, not a C string
        etcdlock::registration r1 = a.register_instance(svc, "n1", "v1", 10);
        etcdlock::registration r2 = b.register_instance(svc, "n2", v2, 10);
        EXPECT(r1.is_registered() && r1.lease_id() > 0 && r1.key() == svc + "/n1");
        EXPECT(r2.is_registered() && r2.lease_id() > 0 && r2.lease_id() != r1.lease_id() && r2.key() == svc + "/n2");
        try {
            b.register_instance(svc, "n1", "other", 10);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_WOULD_BLOCK);
        }

        std::vector<etcdlock::instance> now = b.instances(svc, &rev);
        EXPECT(now.size() == 2 && rev > rev0);
        if (now.size() == 2) {
            EXPECT(now[0].name == "n1" && now[0].value == "v1" && now[0].lease == r1.lease_id());
            EXPECT(now[1].name == "n2" && now[1].value == v2 && now[1].lease == r2.lease_id());
            EXPECT(now[0].mod_revision > rev0 && now[1].mod_revision > now[0].mod_revision && now[1].mod_revision <= rev);
        }
        EXPECT(next_set_of(d, 2, &set, &rev));
        if (set.size() == 2) {
            EXPECT(set[0].name == "n1" && set[0].value == "v1" && set[0].lease == r1.lease_id());
            EXPECT(set[1].name == "n2" && set[1].value == v2 && set[1].lease == r2.lease_id());
            EXPECT(rev >= set[1].mod_revision);
        }

        int64_t urev = r1.update("v1b");
        EXPECT(urev > rev);
        EXPECT(d.next(5000, &set, &rev) && set.size() == 2 && rev == urev);
        if (set.size() == 2) EXPECT(set[0].value == "v1b" && set[0].mod_revision == urev && set[1].value == v2);
        now = a.instances(svc);
        EXPECT(now.size() == 2 && now[0].value == "v1b" && now[0].mod_revision == urev);

        etcdlock_registration_event ev = {-1, -1, -1};
        EXPECT(!r1.next_event(200, &ev) && ev.kind == -1); // nothing happened to it
        r2.close();
        r2.close(); // idempotent
        EXPECT(!r2.is_registered() && r2.lease_id() == 0);
        now = a.instances(svc);
        EXPECT(now.size() == 1 && now[0].name == "n1");
        EXPECT(next_set_of(d, 1, &set, &rev) && set[0].name == "n1" && set[0].value == "v1b");
        try {
            r2.update("late");
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_NOT_HELD);
        }
        try {
            r2.next_event(0, &ev);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_CLOSED);
        }

        d.close();
        try {
            d.next(0, &set);
            EXPECT(false);
        } catch (const etcdlock::error &e) {
            EXPECT(e.code() == ETCDLOCK_E_CLOSED);
        }
        {
            etcdlock::registration r3 = b.register_instance(svc, "n3", "", 10);
            EXPECT(b.instances(svc).size() == 2);
        } // the destructor deregisters it (in the background)
        r1.close();
        bool gone = false;
        for (int i = 0; i < 50 && !gone; i++) {
            gone = a.instances(svc).empty();
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        EXPECT(gone);
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

// Expects `call` to throw etcdlock::error with status `want`.
#define EXPECT_THROWS(call, want)                                   \
    do {                                                            \
        try {                                                       \
            call;                                                   \
            std::fprintf(stderr, "  %s:%d: %s did not throw\n",    \
                         __FILE__, __LINE__, #call);                \
            failures++;                                             \
        } catch (const etcdlock::error &e_) {                       \
            EXPECT(e_.code() == (want));                            \
        }                                                           \
    } while (0)

// The RAII wrapper's task queue and once-per-period jobs (etcdlock_tasks.hpp; the C tests cover
// the behaviour: tests/test_tasks.c, tests/test_task_limits.c).
static void wrapper_tasks(const char *eps, const std::string &base) {
    try {
        etcdlock::client c(eps), other(eps);
        std::string name = base + "-q", result = base + "-q-result";
        etcdlock::task_queue q = c.queue(name, 10, 2);
        EXPECT(q.put("p1", "a") == "a");
        EXPECT(q.put("other", "a", 9) == "a"); // the id exists: nothing changes
        std::string rid = q.put("p2", "", 5);  // a random id
        EXPECT(!rid.empty() && rid != "a");
        etcdlock::queue_stats s = q.stats();
        EXPECT(s.pending == 2 && s.by_priority.size() == 2 && s.by_priority[0] == std::make_pair((int32_t)5, (uint64_t)1));
        EXPECT(s.claimed == 0 && s.dead == 0 && s.revision > 0);
        {
            etcdlock::task t = q.claim(0);
            EXPECT(t.id() == rid && t.payload() == "p2" && t.priority() == 5 && t.attempts() == 1);
            EXPECT(t.fencing_token() > 0 && t.is_held() && t.lost_reason() == 0);
            std::string fence = t.fence(); // covers: FENCE-TASK-001 (through the wrapper)
            EXPECT(fence.find("etcdlock-fence.v1.q.") == 0 && c.check_fence(fence));
            t.put(result, "working"); // fenced by the claim
            EXPECT(q.stats().claimed == 1);
            EXPECT_THROWS(t.put(name + "/x", "v"), ETCDLOCK_E_INVALID_ARGUMENT); // the queue's own keys
            EXPECT(t.ack_with({etcdlock::op::put(result, "ok"), etcdlock::op::del(base + "-q-gone")}) > t.fencing_token());
            EXPECT(!t.is_held());
            EXPECT(!t.health().ok && t.health().state == ETCDLOCK_HEALTH_RELEASED);
            EXPECT_THROWS(t.ack(), ETCDLOCK_E_NOT_HELD);
            EXPECT_THROWS(t.put(result, "late"), ETCDLOCK_E_NOT_HELD);
            EXPECT(!c.check_fence(fence));
            EXPECT_THROWS(t.fence(), ETCDLOCK_E_NOT_HELD);
        }
        std::string v;
        EXPECT(c.get(result, &v) && v == "ok");
        {
            etcdlock::task t = q.claim(5000, nullptr, "cpp-worker");
            EXPECT(t.id() == "a" && t.payload() == "p1" && t.attempts() == 1);
        } // neither acked nor nacked: given back by the destructor
        {
            etcdlock::task t = q.claim(0);
            EXPECT(t.id() == "a" && t.attempts() == 2);
            t.nack(); // its last delivery: to the dead letters
            EXPECT_THROWS(t.nack(), ETCDLOCK_E_NOT_HELD);
        }
        EXPECT_THROWS(q.claim(0), ETCDLOCK_E_WOULD_BLOCK);
        EXPECT_THROWS(q.claim(300), ETCDLOCK_E_LOCK_TIMEOUT);
        std::vector<etcdlock::dead_task> dead = q.dead();
        EXPECT(dead.size() == 1 && dead[0].id == "a" && dead[0].payload == "p1" && dead[0].attempts == 2);
        EXPECT(q.stats().dead == 1);
        EXPECT(q.requeue_dead("a") && !q.requeue_dead("nope"));
        q.claim(0).nack(); // attempts 1 after the requeue
        {
            etcdlock::task t = q.claim(0);
            EXPECT(t.attempts() == 2);
            t.nack(0);
        }
        EXPECT(q.delete_dead("a") && !q.delete_dead("a"));
        s = q.stats();
        EXPECT(s.pending == 0 && s.by_priority.empty() && s.delayed == 0 && s.claimed == 0 && s.dead == 0);
        EXPECT_THROWS(c.queue(name + "/", 10, 2), ETCDLOCK_E_INVALID_ARGUMENT);

        // max_processing_ms: a claim ends that long after it was made, held or not.
        EXPECT_THROWS(c.queue(name, 10, 2, -1), ETCDLOCK_E_INVALID_ARGUMENT);
        etcdlock::task_queue limited = c.queue(base + "-limited", 10, 5, 1000);
        limited.put("h", "hung");
        etcdlock::task hung = limited.claim(0);
        for (int i = 0; i < 50 && hung.is_held(); i++) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT(!hung.is_held() && hung.lost_reason() == ETCDLOCK_LOST_KEY_DELETED);
        EXPECT_THROWS(hung.ack(), ETCDLOCK_E_NOT_HELD);
        etcdlock::task again = limited.claim(5000);
        EXPECT(again.id() == "hung" && again.attempts() == 2);
        again.ack();

        // Once per period (a fixed trigger time: the slot cannot change between the calls).
        std::string job = base + "-daily";
        const int64_t hour = 3600000, at = hour * 500000;
        {
            etcdlock::once_slot slot = c.once(job, hour, 10, at);
            EXPECT(slot && slot.index() == 500000 && slot.fencing_token() > 0 && slot.is_held());
            etcdlock::once_slot second = other.once(job, hour, 10, at);
            EXPECT(!second && second.get() == nullptr);
            slot.release(); // the job failed: the next trigger runs it
            EXPECT(!slot.is_held() && slot.lost_reason() == 0);
        }
        {
            etcdlock::once_slot slot = other.once(job, hour, 10, at);
            EXPECT(slot);
        } // neither done nor released: released by the destructor
        {
            etcdlock::once_slot slot = c.once(job, hour, 10, at);
            EXPECT(slot);
            slot.done();
            EXPECT_THROWS(slot.done(), ETCDLOCK_E_NOT_HELD);
        }
        EXPECT(!other.once(job, hour, 10, at)); // done for the period
        EXPECT(other.once(job, hour, 10, at + hour)); // the next period's (released at once)
        EXPECT_THROWS(c.once(job, 999, 10), ETCDLOCK_E_INVALID_ARGUMENT);
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

// The RAII wrapper's pools, semaphore counts and a once slot's fenced writes (etcdlock_pool.hpp;
// the C tests cover the behaviour: tests/test_pool.c).
static void wrapper_pool(const char *eps, const std::string &base) {
    try {
        etcdlock::client c(eps);
        std::string name = base + "-gpus", mark = base + "-gpus-using";
        etcdlock::pool gpus = c.pool(name, {"gpu0", "gpu1", "gpu2"}, 10, 2000);
        {
            etcdlock::pool_holding held = gpus.acquire(1, 5000);
            EXPECT(held.slots() == std::vector<std::string>{"gpu0"} && held.is_held() && held.lost_reason() == 0);
            EXPECT(held.tokens().size() == 1 && held.tokens()[0].first == "gpu0" && held.tokens()[0].second > 0);
            EXPECT(held.fencing_token() > 0 && held.lease_id() != 0 && held.owner().empty());
            held.put(mark, "gpu0");
            EXPECT(held.txn({etcdlock::op::del(mark)}) > held.fencing_token());
            EXPECT_THROWS(held.put(name + "/slot/gpu0", "x"), ETCDLOCK_E_INVALID_ARGUMENT);
            etcdlock::pool_holding two = gpus.acquire(2, 5000, "job-1");
            EXPECT(two.slots() == (std::vector<std::string>{"gpu1", "gpu2"}) && two.owner() == "job-1");
            etcdlock::pool_holding same = gpus.acquire(2, 5000, "job-1");
            EXPECT(same.fencing_token() == two.fencing_token());
            EXPECT_THROWS(gpus.acquire(1, 0), ETCDLOCK_E_WOULD_BLOCK);
            bool defined = false;
            std::vector<etcdlock::slot_info> slots = c.inspect_pool(name, &defined);
            EXPECT(defined && slots.size() == 3 && slots[1].state == ETCDLOCK_SLOT_HELD && slots[1].owner == "job-1");
            two.release();
            EXPECT(!same.is_held());
        } // released by the destructor
        etcdlock::pool_holding all = c.join_pool(name).acquire(3, 5000);
        EXPECT(all.slots().size() == 3);
        all.release();
        EXPECT_THROWS(all.release(), ETCDLOCK_E_NOT_HELD);
        EXPECT(gpus.add_slots({"gpu3"}) == 4 && gpus.remove_slots({"gpu0"}) == 3);
        EXPECT_THROWS(c.pool(name, {"a", "b"}).acquire(1, 1000), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.pool(name, std::vector<std::string>()), ETCDLOCK_E_INVALID_ARGUMENT);
        etcdlock::pool numbered = c.pool(base + "-ids", 4);
        EXPECT(numbered.acquire(1, 5000).slots() == std::vector<std::string>{"0"});
        bool defined = true;
        EXPECT(c.inspect_pool(base + "-none", &defined).empty() && !defined);

        // A semaphore's permits, two at once.
        etcdlock::lock two = c.semaphore_acquire_count(base + "-sem", 3, 2, 10, 5000);
        EXPECT(two.is_held());
        EXPECT_THROWS(c.semaphore_acquire_count(base + "-sem", 3, 2, 10, 0), ETCDLOCK_E_WOULD_BLOCK);
        EXPECT_THROWS(c.semaphore_acquire_count(base + "-sem", 3, 4, 10, 0), ETCDLOCK_E_INVALID_ARGUMENT);
        two.release();

        // A once slot's fenced writes.
        etcdlock::once_slot slot = c.once(base + "-once", 3600000, 10);
        EXPECT(slot);
        slot.put(base + "-once-result", "ok");
        std::string v;
        EXPECT(c.get(base + "-once-result", &v) && v == "ok");
        slot.del(base + "-once-result");
        EXPECT(!c.get(base + "-once-result", &v));
        slot.done();
        EXPECT_THROWS(slot.put(base + "-once-result", "late"), ETCDLOCK_E_NOT_HELD);
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

// A closed client (etcdlock_shutdown closes every client, leaving the handles allocated):
// the registry calls throw etcdlock::error with ETCDLOCK_E_CLOSED. Shuts the library down: last.
static void wrapper_registry_closed(const char *eps, const std::string &base) {
    try {
        etcdlock::client c(eps);
        std::string svc = base + "-closed";
        etcdlock::registration r = c.register_instance(svc, "n1", "v", 10);
        EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
        int thrown = 0;
        try {
            c.instances(svc);
        } catch (const etcdlock::error &e) {
            thrown += e.code() == ETCDLOCK_E_CLOSED;
        }
        try {
            c.register_instance(svc, "n2", "v", 10);
        } catch (const etcdlock::error &e) {
            thrown += e.code() == ETCDLOCK_E_CLOSED;
        }
        try {
            c.discover(svc);
        } catch (const etcdlock::error &e) {
            thrown += e.code() == ETCDLOCK_E_CLOSED;
        }
        try {
            r.next_event(1000, nullptr);
        } catch (const etcdlock::error &e) {
            thrown += e.code() == ETCDLOCK_E_CLOSED;
        }
        EXPECT(thrown == 4);
        EXPECT(!r.is_registered());
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

int main() {
    EXPECT(std::string(etcdlock_version()) == ETCDLOCK_VERSION);
    EXPECT(std::strcmp(etcdlock_status_str(ETCDLOCK_E_TIMEOUT), "ETCDLOCK_E_TIMEOUT") == 0);
    etcdlock_cancel *c = etcdlock_cancel_new();
    etcdlock_cancel_trigger(c);
    EXPECT(etcdlock_cancel_is_triggered(c));
    etcdlock_cancel_free(c);

    const char *eps = std::getenv("ETCDLOCK_ENDPOINTS");
    etcdlock_client_options opts;
    EXPECT(etcdlock_client_options_init(&opts) == ETCDLOCK_OK);
    EXPECT(opts.struct_size == sizeof opts && opts.connect_timeout_ms == 5000);
    etcdlock_client_options defaults = ETCDLOCK_CLIENT_OPTIONS_INIT; // C++11 form of the macro
    EXPECT(defaults.struct_size == sizeof defaults && defaults.ca_file == nullptr && defaults.max_in_flight == 0);
    etcdlock_client *client = nullptr;
    EXPECT(etcdlock_client_new(eps ? eps : "http://127.0.0.1:2379", &opts, &client) == ETCDLOCK_OK);
    etcdlock_lock *lock = nullptr;
    // Unique per run: a run cut short leaves its registrations until their leases expire.
    std::string name = "ctest/cpp/" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    EXPECT(etcdlock_lock_acquire(client, name.c_str(), 10, 1000, nullptr, &lock) == ETCDLOCK_OK);
    EXPECT(etcdlock_lock_fencing_token(lock) > 0);
    EXPECT(etcdlock_lock_release(lock) == ETCDLOCK_OK);
    etcdlock_lock_free(lock);
    etcdlock_client_free(client);
    int header_failures = failures;
    std::printf("%s - test_cpp_header\n", failures ? "FAIL" : "ok");
    std::fflush(stdout);
    wrapper_recipes(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_recipes\n", failures > header_failures ? "FAIL" : "ok");
    std::fflush(stdout);
    int recipe_failures = failures;
    wrapper_registry(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_registry\n", failures > recipe_failures ? "FAIL" : "ok");
    std::fflush(stdout);
    int registry_failures = failures;
    wrapper_tasks(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_tasks\n", failures > registry_failures ? "FAIL" : "ok");
    std::fflush(stdout);
    int task_failures = failures;
    wrapper_pool(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_pool\n", failures > task_failures ? "FAIL" : "ok");
    std::fflush(stdout);
    int pool_failures = failures;
    wrapper_registry_closed(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_registry_closed_client\n", failures > pool_failures ? "FAIL" : "ok");
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    return failures ? 1 : 0;
}
