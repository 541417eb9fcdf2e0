// The header compiles as C++ (extern "C", no C-only constructs) and links from C++; the C++
// wrapper (etcdlock.hpp) drives an election, a semaphore and a read-write lock.
#include "etcdlock.h"
#include <etcdlock.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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
    std::string name = "ctest/cpp/" + std::to_string(std::rand());
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
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    return failures ? 1 : 0;
}
