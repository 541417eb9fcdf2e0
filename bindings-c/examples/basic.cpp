// basic.cpp: examples/basic.c with the C++ RAII wrapper (include/etcdlock.hpp).
//
//   c++ -std=c++11 basic.cpp $(pkg-config --cflags --libs etcdlock) -o basic_cpp
//   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./basic_cpp
#include <etcdlock.hpp>

#include <cstdlib>
#include <iostream>

int main() {
    const char *env = std::getenv("ETCDLOCK_ENDPOINTS");
    try {
        etcdlock::client client(env ? env : "http://127.0.0.1:2379");
        {
            etcdlock::lock lock = client.lock("examples/basic-cpp", 10, 5000);
            std::cout << "locked " << lock.key() << ", fencing token " << lock.fencing_token() << "\n";
            client.put("examples/basic-cpp-state", "hello from C++", &lock);  // fenced
            std::string value;
            if (client.get("examples/basic-cpp-state", &value)) std::cout << "read back: " << value << "\n";
        }  // released here
        etcdlock::lease lease = client.grant_lease(10);
        client.put("examples/basic-cpp-ephemeral", "gone with the lease", lease);
        lease.revoke();
        std::string value;
        if (client.get("examples/basic-cpp-ephemeral", &value)) {
            std::cerr << "the key outlived its lease\n";
            return 1;
        }
        client.del("examples/basic-cpp-state");
        try {
            client.lock("bad/name/", 10, 0);  // a lock name must not end in '/'
            std::cerr << "expected an error\n";
            return 1;
        } catch (const etcdlock::error &e) {
            if (e.code() != ETCDLOCK_E_INVALID_ARGUMENT) throw;
            std::cout << "error as expected: " << e.what() << "\n";
        }
    } catch (const etcdlock::error &e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    std::cout << "done\n";
    return 0;
}
