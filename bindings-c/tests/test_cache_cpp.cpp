// The C++ wrapper's prefix caches (etcdlock_cache.hpp): get, snapshot, wait_for, events, close,
// a closed client. The behaviour is the C tests' (tests/test_cache.c) and the core's.
#include <etcdlock.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

static int failures = 0;
#define EXPECT(c) do { if (!(c)) { std::fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)
#define EXPECT_THROWS(expr, status) do { try { expr; EXPECT(!"no throw"); } catch (const etcdlock::error &e_) { EXPECT(e_.code() == (status)); } } while (0)

// covers: CACHE-READ-001, CACHE-CLOSE-001 (the C++ wrapper: a copy read back after wait_for,
// events with previous values, a timed-out wait, close; a closed client throws ETCDLOCK_E_CLOSED)
static void wrapper_cache(const char *eps, const std::string &prefix) {
    try {
        etcdlock::client writer(eps);
        writer.put(prefix + "a", "1");
        int64_t loaded = 0;
        etcdlock::cache_events *later = nullptr;
        {
            etcdlock::client c(eps);
            etcdlock::cache cache = c.cache(prefix);
            EXPECT(cache.size() == 1 && cache.revision() > 0);
            etcdlock::kv kv;
            EXPECT(cache.get(prefix + "a", &kv) && kv.value == "1" && kv.version == 1 && kv.key == prefix + "a");
            EXPECT(!cache.get(prefix + "none", &kv));
            etcdlock::cache_events events = cache.events();
            writer.put(prefix + "a", "2");
            writer.put(prefix + "b", "1");
            etcdlock::cache_event ev;
            EXPECT(events.next(10000, &ev) && ev.kind == ETCDLOCK_CACHE_PUT && ev.key == prefix + "a" && ev.value == "2");
            EXPECT(ev.has_prev && ev.prev_value == "1");
            EXPECT(events.next(10000, &ev) && ev.key == prefix + "b" && !ev.has_prev);
            EXPECT(cache.wait_for(ev.revision, 0));
            EXPECT(!cache.wait_for(ev.revision + 1000, 100));
            writer.del(prefix + "b");
            EXPECT(events.next(10000, &ev) && ev.kind == ETCDLOCK_CACHE_DELETE && ev.prev_value == "1" && ev.value.empty());
            EXPECT(cache.wait_for(ev.revision, 5000) && !cache.get(prefix + "b", nullptr));
            std::map<std::string, etcdlock::kv> all = cache.snapshot(&loaded);
            EXPECT(all.size() == 1 && all[prefix + "a"].value == "2" && loaded >= ev.revision);
            EXPECT(!events.next(0, nullptr)); // nothing more
            events.close();
            EXPECT_THROWS(events.next(0, nullptr), ETCDLOCK_E_CLOSED);
            etcdlock::cache other = c.cache(prefix);
            etcdlock::cache_events open = other.events();
            later = new etcdlock::cache_events(std::move(open));
            cache.close();
            EXPECT_THROWS(cache.snapshot(), ETCDLOCK_E_CLOSED);
            EXPECT(cache.revision() == 0);
        } // the client freed (closed) here, `other` with it
        EXPECT_THROWS(later->next(1000, nullptr), ETCDLOCK_E_CLOSED);
        delete later;
    } catch (const etcdlock::error &e) {
        std::fprintf(stderr, "  %s\n", e.what());
        failures++;
    }
}

int main() {
    const char *eps = std::getenv("ETCDLOCK_ENDPOINTS");
    std::string prefix = "ctest/cpp-cache/" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "/";
    wrapper_cache(eps ? eps : "http://127.0.0.1:2379", prefix);
    std::printf("%s - test_cpp_wrapper_cache\n", failures ? "FAIL" : "ok");
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    return failures ? 1 : 0;
}
