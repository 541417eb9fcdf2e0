// The header compiles as C++ (extern "C", no C-only constructs) and links from C++.
#include "etcdlock.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static int failures = 0;
#define EXPECT(c) do { if (!(c)) { std::fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

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
    EXPECT(etcdlock_shutdown(5000) == ETCDLOCK_OK);
    std::printf("%s - test_cpp_header\n", failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
