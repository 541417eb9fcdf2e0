/* registry.c: register a gRPC server as an instance of a service, follow the service's
 * instances with a discovery, update the registration, deregister.
 *
 *   cc registry.c $(pkg-config --cflags --libs etcdlock) -o registry
 *   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./registry
 */
#include <etcdlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc) {
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    return 1;
}

/* Prints a set: each instance's name and, for a gRPC endpoint value, its address. */
static void print_set(const char *when, const etcdlock_instance_set *set) {
    printf("%s: %zu instance(s) at revision %lld\n", when, set->n_instances, (long long)set->revision);
    for (size_t i = 0; i < set->n_instances; i++) {
        const etcdlock_instance *in = &set->instances[i];
        char *addr = NULL;
        etcdlock_grpc_endpoint_addr(in->value, in->value_len, &addr);
        printf("  %.*s -> %s\n", (int)in->name_len, (const char *)in->name, addr ? addr : "(not a gRPC endpoint)");
        etcdlock_string_free(addr);
    }
}

int main(void) {
    const char *endpoints = getenv("ETCDLOCK_ENDPOINTS");
    if (!endpoints) endpoints = "http://127.0.0.1:2379";
    etcdlock_client *client = NULL;
    int rc = etcdlock_client_new(endpoints, NULL, &client);
    if (rc != ETCDLOCK_OK) return fail("connect", rc);

    /* Follow the service first: its current set, then one set per change. */
    etcdlock_discovery *discovery = NULL;
    etcdlock_instance_set *set = NULL;
    rc = etcdlock_discover(client, "examples/registry", &discovery);
    if (rc == ETCDLOCK_OK) rc = etcdlock_discovery_next(discovery, 5000, &set);
    if (rc != ETCDLOCK_OK) return fail("discover", rc);
    print_set("before", set);
    etcdlock_instance_set_free(set);

    /* The value etcd's Go gRPC resolver reads (target etcd:///examples/registry); a lease of
     * 10 s kept alive, and registered again on a new one if it is lost. */
    char *value = NULL;
    etcdlock_grpc_endpoint("127.0.0.1:50051", &value);
    etcdlock_registration *reg = NULL;
    rc = etcdlock_register(client, "examples/registry", "node-1", (const uint8_t *)value, strlen(value), 10, 0, &reg);
    etcdlock_string_free(value);
    if (rc != ETCDLOCK_OK) return fail("register", rc);
    printf("registered, lease %llx\n", (unsigned long long)etcdlock_registration_lease_id(reg));
    rc = etcdlock_discovery_next(discovery, 5000, &set);
    if (rc != ETCDLOCK_OK) return fail("discovery_next", rc);
    print_set("registered", set);
    etcdlock_instance_set_free(set);

    /* Moved to another port: one update, one more set. */
    etcdlock_grpc_endpoint("127.0.0.1:50052", &value);
    rc = etcdlock_registration_update(reg, (const uint8_t *)value, strlen(value), NULL);
    etcdlock_string_free(value);
    if (rc != ETCDLOCK_OK) return fail("update", rc);
    rc = etcdlock_discovery_next(discovery, 5000, &set);
    if (rc != ETCDLOCK_OK) return fail("discovery_next", rc);
    print_set("updated", set);
    etcdlock_instance_set_free(set);

    /* Nothing happened to the registration (a loss would come as an event). */
    etcdlock_registration_event event;
    rc = etcdlock_registration_next_event(reg, 0, &event);
    if (rc != ETCDLOCK_E_TIMEOUT) return fail("no registration event expected", rc);

    rc = etcdlock_registration_close(reg); /* deletes the key, revokes the lease */
    if (rc != ETCDLOCK_OK) return fail("close", rc);
    etcdlock_registration_free(reg);
    rc = etcdlock_discovery_next(discovery, 5000, &set);
    if (rc != ETCDLOCK_OK) return fail("discovery_next", rc);
    print_set("closed", set);
    etcdlock_instance_set_free(set);
    etcdlock_discovery_free(discovery);
    etcdlock_client_free(client);
    etcdlock_shutdown(5000);
    printf("done\n");
    return 0;
}
