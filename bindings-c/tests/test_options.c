/* etcdlock_client_options is versioned by its size (struct_size, set by
 * ETCDLOCK_CLIENT_OPTIONS_INIT or etcdlock_client_options_init): a program built against an
 * older, smaller struct keeps working with defaults for the fields it does not have; bad sizes
 * are refused with a clear message; a newer, larger struct works as long as the fields this
 * library does not know are zero. Plain etcd, no TLS needed.
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <stddef.h>

/* The options as a program compiled before the TLS fields had them (the first version). */
struct options_v1 {
    uint32_t struct_size;
    uint32_t max_in_flight;
    int64_t connect_timeout_ms;
    int64_t request_timeout_ms;
    const char *user;
    const char *password;
};

/* A program built against a later library, with one field this library does not know. */
struct options_next {
    etcdlock_client_options known;
    uint64_t future_field;
};

static int message_has(const char *needle) {
    char msg[512];
    etcdlock_last_error(msg, sizeof msg);
    if (strstr(msg, needle)) return 1;
    fprintf(stderr, "  message %s lacks %s\n", msg, needle);
    return 0;
}

static void connect_ok(const etcdlock_client_options *o) {
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(endpoints(), o, &c), ETCDLOCK_OK);
    if (c) CHECK_RC(etcdlock_put(c, (const uint8_t *)"ctest/options", 13, (const uint8_t *)"v", 1, NULL), ETCDLOCK_OK);
    etcdlock_client_free(c);
}

static void refused(const etcdlock_client_options *o, const char *needle) {
    etcdlock_client *c = (etcdlock_client *)0x1;
    CHECK_RC(etcdlock_client_new(endpoints(), o, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(message_has(needle));
    CHECK(c == (etcdlock_client *)0x1);
}

/* covers: ERR-OPTSIZE-001 (an older, smaller struct works; its missing fields are defaults) */
static void test_an_older_smaller_struct_works(void) {
    CHECK(sizeof(struct options_v1) == offsetof(etcdlock_client_options, ca_file));
    CHECK(offsetof(struct options_v1, password) == offsetof(etcdlock_client_options, password));
    /* Exactly its size on the heap: ASan reports any read past it. */
    struct options_v1 *old = malloc(sizeof *old);
    CHECK(old != NULL);
    if (!old) return;
    memset(old, 0xab, sizeof *old);
    CHECK_RC(etcdlock_client_options_init_sized((etcdlock_client_options *)old, sizeof *old), ETCDLOCK_OK);
    CHECK(old->struct_size == sizeof *old && old->connect_timeout_ms == 5000 && old->max_in_flight == 256);
    CHECK(old->user == NULL && old->password == NULL);
    old->request_timeout_ms = 3000;
    connect_ok((const etcdlock_client_options *)old);
    free(old);

    /* The init writes only the size it is given. */
    unsigned char buf[sizeof(etcdlock_client_options) + 16];
    memset(buf, 0xcd, sizeof buf);
    CHECK_RC(etcdlock_client_options_init_sized((etcdlock_client_options *)(void *)buf, sizeof(struct options_v1)), ETCDLOCK_OK);
    int untouched = 1;
    for (size_t i = sizeof(struct options_v1); i < sizeof buf; i++) untouched &= buf[i] == 0xcd;
    CHECK(untouched);

    /* Fields past struct_size are not read: TLS settings that would be refused with an http://
     * endpoint are ignored when the struct says it ends before them. */
    etcdlock_client_options o;
    etcdlock_client_options_init(&o);
    o.ca_file = "/nonexistent/ca.pem";
    o.server_name = "\xff";
    o.struct_size = (uint32_t)offsetof(etcdlock_client_options, ca_file);
    connect_ok(&o);
    o.struct_size = (uint32_t)sizeof o;
    refused(&o, "opts->server_name");
}

/* covers: ERR-OPTSIZE-001 (struct_size 0, too small, unaligned or garbage: INVALID_ARGUMENT) */
static void test_bad_sizes_are_refused(void) {
    etcdlock_client_options zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    refused(&zeroed, "struct_size is 0");
    uint32_t bad[] = {1, 8, (uint32_t)sizeof(struct options_v1) - 8, (uint32_t)sizeof(struct options_v1) + 4,
                      8192, 0xdeadbeefu, 0xffffffffu};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        etcdlock_client_options o = ETCDLOCK_CLIENT_OPTIONS_INIT;
        o.struct_size = bad[i];
        refused(&o, "struct_size");
    }
    etcdlock_client_options o;
    memset(&o, 0x5a, sizeof o);
    for (size_t i = 0; i < 3; i++) {
        CHECK_RC(etcdlock_client_options_init_sized(&o, (size_t[]){0, 4, 1u << 20}[i]), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK(o.struct_size == 0x5a5a5a5au); /* nothing written */
    }
    CHECK_RC(etcdlock_client_options_init_sized(NULL, sizeof o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(message_has("opts must not be NULL"));
}

/* covers: ERR-OPTSIZE-001 (a newer, larger struct: works with its unknown fields zero) */
static void test_a_newer_larger_struct(void) {
    struct options_next next;
    memset(&next, 0xee, sizeof next);
    CHECK_RC(etcdlock_client_options_init(&next.known), ETCDLOCK_OK);
    CHECK_RC(etcdlock_client_options_init_sized(&next.known, sizeof next), ETCDLOCK_OK);
    CHECK(next.known.struct_size == sizeof next && next.future_field == 0); /* all of it zeroed */
    connect_ok(&next.known);
    next.future_field = 1;
    refused(&next.known, "does not know");

    /* Both initialisers give working defaults. */
    etcdlock_client_options a = ETCDLOCK_CLIENT_OPTIONS_INIT, b;
    CHECK(a.struct_size == sizeof a && a.connect_timeout_ms == 0 && a.ca_file == NULL);
    CHECK_RC(etcdlock_client_options_init(&b), ETCDLOCK_OK);
    connect_ok(&a);
    connect_ok(&b);
    connect_ok(NULL);
}

/* covers: OPT-SPIN-001 */
/* The caller spin is a process-wide option: set, read back; bad values change nothing; off, the
 * blocking calls still return. */
static void test_caller_spin(void) {
    int64_t before = etcdlock_caller_spin_us();
    CHECK_RC(etcdlock_set_caller_spin_us(500), ETCDLOCK_OK);
    CHECK(etcdlock_caller_spin_us() == 500);
    CHECK_RC(etcdlock_set_caller_spin_us(-1), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(message_has(">= 0"));
    CHECK_RC(etcdlock_set_caller_spin_us(10001), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(message_has("at most"));
    CHECK(etcdlock_caller_spin_us() == 500);
    CHECK_RC(etcdlock_set_caller_spin_us(0), ETCDLOCK_OK);
    CHECK(etcdlock_caller_spin_us() == 0);
    connect_ok(NULL);
    CHECK_RC(etcdlock_set_caller_spin_us(before), ETCDLOCK_OK);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_caller_spin);
    RUN(test_an_older_smaller_struct_works);
    RUN(test_bad_sizes_are_refused);
    RUN(test_a_newer_larger_struct);
    etcdlock_shutdown(5000);
    return summary("test_options");
}
