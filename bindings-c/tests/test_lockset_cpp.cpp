// The C++ wrapper's lock sets (etcdlock_lockset.hpp) and fences (lock::fence,
// pool_holding::fence, client::check_fence). The behaviour is the C tests' (tests/test_lockset.c,
// tests/test_fence.c) and the core's.
#include <etcdlock.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

static int failures = 0;
#define EXPECT(c) do { if (!(c)) { std::fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)
#define EXPECT_THROWS(expr, status) do { try { expr; EXPECT(!"no throw"); } catch (const etcdlock::error &e_) { EXPECT(e_.code() == (status)); } } while (0)

// covers: LOCKSET-TOKEN-001, LOCKSET-MIXED-001, LOCKSET-BINDING-001 (the C++ wrapper: one token
// and fenced writes, members' fences, mixed modes with a try, bad input, a release twice)
static void wrapper_lock_set(const char *eps, const std::string &p) {
    try {
        etcdlock::client c(eps);
        std::string a = p + "a", b = p + "b", cfg = p + "cfg", gpus = p + "gpus";
        etcdlock::lock_set both = c.lock_set({a, b.c_str()}, 10);
        EXPECT(both.size() == 2);
        std::string fa;
        {
            etcdlock::lock_set_holding locks = both.acquire(5000);
            EXPECT(locks.is_held() && locks.lost_reason() == 0 && locks.fencing_token() > 0 && locks.lease_id() != 0);
            EXPECT(locks.names().size() == 2 && locks.names()[0] == a && locks.names()[1] == b);
            std::vector<std::string> keys = locks.keys();
            EXPECT(keys.size() == 2 && keys[0].compare(0, a.size() + 1, a + "/") == 0);
            locks.put(p + "data", "1");
            EXPECT(locks.txn({etcdlock::op::put(p + "data", "2"), etcdlock::op::del(p + "other")}) > locks.fencing_token());
            EXPECT_THROWS(locks.put(a + "/x", "1"), ETCDLOCK_E_INVALID_ARGUMENT);
            EXPECT_THROWS(both.acquire(0), ETCDLOCK_E_WOULD_BLOCK);
            fa = locks.fence(a);
            EXPECT(fa.compare(0, 20, "etcdlock-fence.v1.q.") == 0 && c.check_fence(fa));
            EXPECT_THROWS(locks.fence(p + "none"), ETCDLOCK_E_INVALID_ARGUMENT);
            locks.del(p + "data");
            locks.release();
            EXPECT(!locks.is_held() && !c.check_fence(fa));
            EXPECT_THROWS(locks.release(), ETCDLOCK_E_NOT_HELD);
            EXPECT_THROWS(locks.fence(a), ETCDLOCK_E_NOT_HELD);
        }
        { etcdlock::lock_set_holding again = both.acquire(5000); } // released by the destructor
        EXPECT(both.acquire(0).is_held());                          // free again (and released again)
        etcdlock::lock_set j1 = c.lock_set({etcdlock::set_member::read(cfg), etcdlock::set_member::write(p + "j1"), etcdlock::set_member::permit(gpus, 2)});
        etcdlock::lock_set j2 = c.lock_set({etcdlock::set_member::read(cfg), etcdlock::set_member::write(p + "j2"), etcdlock::set_member::permit(gpus, 2)});
        etcdlock::lock_set j3 = c.lock_set({etcdlock::set_member::read(cfg), etcdlock::set_member::exclusive(p + "j3"), etcdlock::set_member::permit(gpus, 2)});
        etcdlock::lock_set_holding h1 = j1.acquire(5000), h2 = j2.acquire(5000);
        EXPECT_THROWS(j3.acquire(0), ETCDLOCK_E_WOULD_BLOCK); // no permit left
        EXPECT_THROWS(j3.acquire(300), ETCDLOCK_E_LOCK_TIMEOUT);
        h1.release();
        EXPECT(j3.acquire(5000).fencing_token() > h2.fencing_token());
        EXPECT_THROWS(c.lock_set({}), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.lock_set({a, a}), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.lock_set({a, a + "/b"}), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.lock_set({etcdlock::set_member::permit(gpus, 0)}), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.lock_set({a}, 0), ETCDLOCK_E_INVALID_ARGUMENT);
        EXPECT_THROWS(c.check_fence("etcdlock-fence.v1.q"), ETCDLOCK_E_INVALID_ARGUMENT);
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

// covers: FENCE-POOL-001 (the C++ wrapper: a slot's fence checks while held, not after)
static void wrapper_fences(const char *eps, const std::string &p) {
    try {
        etcdlock::client c(eps);
        etcdlock::pool pool = c.pool(p + "pool", {"a", "b"}, 10);
        std::string fb;
        {
            etcdlock::pool_holding held = pool.acquire(2, 5000);
            fb = held.fence("b");
            EXPECT(fb.compare(0, 20, "etcdlock-fence.v1.k.") == 0 && c.check_fence(fb));
            EXPECT_THROWS(held.fence("z"), ETCDLOCK_E_INVALID_ARGUMENT);
        }
        EXPECT(!c.check_fence(fb));
        etcdlock::lock l = c.lock(p + "lock", 10, 5000);
        std::string fl = l.fence();
        EXPECT(c.check_fence(fl));
        l.release();
        EXPECT(!c.check_fence(fl));
        EXPECT_THROWS(l.fence(), ETCDLOCK_E_NOT_HELD);
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

int main() {
    const char *eps = std::getenv("ETCDLOCK_ENDPOINTS");
    std::string prefix = "ctest/cpp-lockset/" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "/";
    wrapper_lock_set(eps ? eps : "http://127.0.0.1:2379", prefix);
    std::printf("%s - test_cpp_wrapper_lock_set\n", failures ? "FAIL" : "ok");
    int before = failures;
    wrapper_fences(eps ? eps : "http://127.0.0.1:2379", prefix);
    std::printf("%s - test_cpp_wrapper_fences\n", failures > before ? "FAIL" : "ok");
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    return failures ? 1 : 0;
}
