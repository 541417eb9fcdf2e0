// The header compiles as C++ (extern "C", no C-only constructs) and links from C++; the C++
// wrapper (etcdlock.hpp) drives an election, a semaphore, a read-write lock and the service
// registry.
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
    wrapper_registry_closed(eps ? eps : "http://127.0.0.1:2379", name);
    std::printf("%s - test_cpp_wrapper_registry_closed_client\n", failures > registry_failures ? "FAIL" : "ok");
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    return failures ? 1 : 0;
}
