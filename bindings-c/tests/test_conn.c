/* Connectivity through the C API against a real etcd: a first endpoint that accepts and never
 * answers, or drops SYNs, costs a bounded time (CONN-SILENT-001/002); an acquire cancelled
 * with etcdlock_cancel while its enqueue is delayed in the network (a delaying TCP forwarder in
 * this file) leaves no key (LOCK-GHOST-002); a member that closes connections while the
 * library writes to them does not kill the process with SIGPIPE; a watch whose stream is reset
 * before etcd confirmed it (the HTTP/2 proxy of bindings-python/tests/netfakes.py, run as a
 * child process) returns only once confirmed and misses nothing (WATCH-CREATED-001); through
 * the same proxy, a request past its deadline fails ETCDLOCK_E_TIMEOUT and an acquire past its
 * own timeout ETCDLOCK_E_LOCK_TIMEOUT (ERR-TIMEOUT-001).
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/wait.h>

extern char **environ;

#define K(s) (const uint8_t *)(s), strlen(s)

/* A listening TCP socket on 127.0.0.1 (any port); its port in *port. */
static int listener(int backlog, int *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        fprintf(stderr, "  listener: %s\n", strerror(errno));
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* A non-blocking connect to 127.0.0.1:port (the fd, or -1). */
static int connect_nonblocking(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static int endpoint_port(const char *ep) {
    const char *colon = strrchr(ep, ':');
    return colon ? atoi(colon + 1) : 0;
}

/* Endpoints [the silent listener, the test etcd]: connect within 4 s, then 5 lock cycles in a
 * row, for three clients (each starts at a random endpoint: 7 in 8 runs one starts at the
 * silent one). */
static void silent_first(int silent_port, const char *tag) {
    char eps[600], name[128];
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d,%s", silent_port, endpoints());
    unique(name, sizeof name, tag);
    for (int client = 0; client < 3; client++) {
        etcdlock_client *c = NULL;
        double t0 = now_ms();
        CHECK_RC(etcdlock_client_new(eps, NULL, &c), ETCDLOCK_OK);
        double took = now_ms() - t0;
        if (took >= 4000) fprintf(stderr, "  connect took %.0f ms\n", took);
        CHECK(took < 4000);
        if (!c) continue;
        t0 = now_ms();
        for (int i = 0; i < 5; i++) {
            etcdlock_lock *l = NULL;
            CHECK_RC(etcdlock_lock_acquire(c, name, 10, 5000, NULL, &l), ETCDLOCK_OK);
            if (!l) break;
            CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
            etcdlock_lock_free(l);
        }
        took = now_ms() - t0;
        if (took >= 8000) fprintf(stderr, "  5 lock cycles took %.0f ms\n", took);
        CHECK(took < 8000);
        etcdlock_client_free(c);
    }
}

/* covers: CONN-SILENT-001 (a listener whose kernel accepts connections; nothing ever answers) */
static void test_a_silent_first_endpoint(void) {
    int port = 0, fd = listener(128, &port);
    CHECK(fd >= 0);
    if (fd < 0) return;
    silent_first(port, "silent");
    close(fd);
}

/* covers: CONN-SILENT-002 (a full accept queue: the listener drops every SYN) */
static void test_a_first_endpoint_that_drops_syns(void) {
    int port = 0, fd = listener(0, &port);
    CHECK(fd >= 0);
    if (fd < 0) return;
    int fillers[3];
    for (int i = 0; i < 3; i++) fillers[i] = connect_nonblocking(port);
    sleep_ms(100);
    /* Check the setup: one more connect gets no answer to its SYN. */
    int probe = connect_nonblocking(port);
    struct pollfd p = {.fd = probe, .events = POLLOUT};
    CHECK(probe >= 0 && poll(&p, 1, 300) == 0);
    silent_first(port, "syndrop");
    if (probe >= 0) close(probe);
    for (int i = 0; i < 3; i++)
        if (fillers[i] >= 0) close(fillers[i]);
    close(fd);
}

/* A listener that accepts every connection, waits for the client's first bytes, and closes:
 * the library's next write there fails with EPIPE. */
static int g_closer_fd = -1;
static atomic_int g_closer_stop;

static void *closer(void *unused) {
    (void)unused;
    double until = now_ms() + 30000;
    while (!atomic_load(&g_closer_stop) && now_ms() < until) {
        struct pollfd p = {.fd = g_closer_fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0) continue;
        int fd = accept(g_closer_fd, NULL, NULL);
        if (fd < 0) continue;
        struct pollfd in = {.fd = fd, .events = POLLIN};
        char buf[4096];
        if (poll(&in, 1, 500) > 0) (void)!read(fd, buf, sizeof buf);
        close(fd);
    }
    return NULL;
}

/* A member that closes connections while the library writes to them must not end the
 * process: SIGPIPE (whose default action here, in a C program, is to terminate) is blocked
 * in the library's threads; this program's own disposition is untouched. */
static void test_a_member_that_closes_connections_raises_no_sigpipe(void) {
    struct sigaction before;
    sigaction(SIGPIPE, NULL, &before);
    CHECK(before.sa_handler == SIG_DFL);
    int port = 0;
    g_closer_fd = listener(16, &port);
    CHECK(g_closer_fd >= 0);
    if (g_closer_fd < 0) return;
    pthread_t t;
    pthread_create(&t, NULL, closer, NULL);
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    etcdlock_client_options o = ETCDLOCK_CLIENT_OPTIONS_INIT;
    o.connect_timeout_ms = 1500;
    for (int i = 0; i < 3; i++) {
        etcdlock_client *c = (etcdlock_client *)0x1;
        CHECK_RC(etcdlock_client_new(ep, &o, &c), ETCDLOCK_E_UNAVAILABLE);
        CHECK(c == (etcdlock_client *)0x1);
    }
    atomic_store(&g_closer_stop, 1);
    pthread_join(t, NULL);
    close(g_closer_fd);
    struct sigaction after;
    sigaction(SIGPIPE, NULL, &after);
    CHECK(after.sa_handler == SIG_DFL);
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    CHECK(!sigismember(&mask, SIGPIPE)); /* this thread's mask is untouched too */
}

/* ---- a TCP forwarder that delays the client's bytes (not the server's) by g_delay_ms ---- */

static int g_fwd_fd = -1, g_target_port, g_delay_ms = 300;
static atomic_int g_fwd_stop, g_fwd_conns;
static double g_fwd_until; /* the forwarder stops by itself after this, whatever happens */

struct chunk {
    double due;
    ssize_t len;
    struct chunk *next;
    char data[16384];
};

static int write_all(int fd, const char *p, ssize_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, (size_t)n);
        if (w <= 0) return -1;
        p += w, n -= w;
    }
    return 0;
}

static void *forward(void *arg) {
    int cfd = (int)(intptr_t)arg, sfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(g_target_port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {2, 0};
    setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(sfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct chunk *head = NULL, **tail = &head;
    int ok = connect(sfd, (struct sockaddr *)&a, sizeof a) == 0;
    while (ok && !atomic_load(&g_fwd_stop) && now_ms() < g_fwd_until) {
        double wait = head ? head->due - now_ms() : 50;
        struct pollfd p[2] = {{.fd = cfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        poll(p, 2, wait < 0 ? 0 : wait > 50 ? 50 : (int)wait + 1);
        if (p[0].revents) {
            struct chunk *c = malloc(sizeof *c);
            c->len = c ? read(cfd, c->data, sizeof c->data) : -1;
            if (!c || c->len <= 0) ok = 0, free(c);
            else c->due = now_ms() + g_delay_ms, c->next = NULL, *tail = c, tail = &c->next;
        }
        if (ok && p[1].revents) {
            char buf[16384];
            ssize_t n = read(sfd, buf, sizeof buf);
            ok = n > 0 && write_all(cfd, buf, n) == 0;
        }
        while (ok && head && head->due <= now_ms()) {
            struct chunk *c = head;
            ok = write_all(sfd, c->data, c->len) == 0;
            head = c->next;
            if (!head) tail = &head;
            free(c);
        }
    }
    while (head) {
        struct chunk *c = head;
        head = c->next;
        free(c);
    }
    close(cfd);
    close(sfd);
    atomic_fetch_sub(&g_fwd_conns, 1);
    return NULL;
}

static void *accept_loop(void *unused) {
    (void)unused;
    while (!atomic_load(&g_fwd_stop) && now_ms() < g_fwd_until) {
        struct pollfd p = {.fd = g_fwd_fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0) continue;
        int cfd = accept(g_fwd_fd, NULL, NULL);
        if (cfd < 0) continue;
        pthread_t t;
        atomic_fetch_add(&g_fwd_conns, 1);
        if (pthread_create(&t, NULL, forward, (void *)(intptr_t)cfd) == 0) pthread_detach(t);
        else close(cfd), atomic_fetch_sub(&g_fwd_conns, 1);
    }
    return NULL;
}

struct acquire {
    etcdlock_client *client;
    const char *name;
    etcdlock_cancel *cancel;
    int rc;
    double took;
};

static void *acquire_thread(void *arg) {
    struct acquire *a = arg;
    etcdlock_lock *l = NULL;
    double t0 = now_ms();
    a->rc = etcdlock_lock_acquire(a->client, a->name, 10, 10000, a->cancel, &l);
    a->took = now_ms() - t0;
    etcdlock_lock_free(l);
    return NULL;
}

/* covers: LOCK-GHOST-002 (etcdlock_cancel while the enqueue is delayed in the network) */
static void test_cancel_with_the_enqueue_delayed_leaves_no_key(void) {
    int port = 0;
    g_target_port = endpoint_port(endpoints());
    g_fwd_fd = listener(16, &port);
    CHECK(g_fwd_fd >= 0 && g_target_port > 0);
    if (g_fwd_fd < 0) return;
    g_fwd_until = now_ms() + 60000;
    pthread_t acceptor;
    pthread_create(&acceptor, NULL, accept_loop, NULL);

    char name[128], prefix[140], warm[140], via[64];
    unique(name, sizeof name, "ghost");
    snprintf(prefix, sizeof prefix, "%s/", name);
    snprintf(warm, sizeof warm, "%s-warm", name);
    snprintf(via, sizeof via, "http://127.0.0.1:%d", port);
    etcdlock_client *holder = connect_client(), *waiter = NULL;
    CHECK_RC(etcdlock_client_new(via, NULL, &waiter), ETCDLOCK_OK);
    etcdlock_lock *held = NULL, *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(holder, name, 10, 5000, NULL, &held), ETCDLOCK_OK);
    if (!waiter || !held) goto out;
    /* Another lock of the waiter's on the same TTL keeps its shared lease in use: the next
     * acquire sends its enqueue straight away, and it reaches etcd g_delay_ms later. */
    CHECK_RC(etcdlock_lock_acquire(waiter, warm, 10, 5000, NULL, &l), ETCDLOCK_OK);
    etcdlock_watch *w = NULL; /* sees the waiter's key come and go */
    CHECK_RC(etcdlock_watch_open(holder, K(prefix), true, 0, &w), ETCDLOCK_OK);

    struct acquire a = {waiter, name, etcdlock_cancel_new(), -1, 0};
    pthread_t t;
    pthread_create(&t, NULL, acquire_thread, &a);
    sleep_ms(g_delay_ms / 3);
    etcdlock_cancel_trigger(a.cancel);
    pthread_join(t, NULL);
    CHECK_RC(a.rc, ETCDLOCK_E_CANCELLED);
    CHECK(a.took < 5000);
    etcdlock_cancel_free(a.cancel);

    /* The enqueue did land (after the cancel) and was deleted. */
    int puts = 0, deletes = 0;
    for (int i = 0; i < 10 && w && (puts == 0 || deletes < puts); i++) {
        etcdlock_event *e = NULL;
        if (etcdlock_watch_next(w, 1000, &e) != ETCDLOCK_OK) continue;
        if (etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT) puts++;
        else deletes++;
        etcdlock_event_free(e);
    }
    CHECK(puts == 1 && deletes == 1);
    etcdlock_watch_free(w);

    CHECK_RC(etcdlock_lock_release(held), ETCDLOCK_OK);
    int left = -1;
    for (int i = 0; i < 30 && (left = count_keys(prefix)) != 0; i++) sleep_ms(100);
    CHECK(left == 0);
    etcdlock_lock *next = NULL; /* immediately available: try-once */
    CHECK_RC(etcdlock_lock_acquire(holder, name, 10, 0, NULL, &next), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(next), ETCDLOCK_OK);
    etcdlock_lock_free(next);
    sleep_ms(2 * g_delay_ms); /* anything of the waiter's still in the forwarder lands now */
    CHECK(count_keys(prefix) == 0);
    /* The cancelling client locks again. */
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock *again = NULL;
    CHECK_RC(etcdlock_lock_acquire(waiter, name, 10, 5000, NULL, &again), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(again), ETCDLOCK_OK);
    etcdlock_lock_free(again);
    CHECK(count_keys(prefix) == 0);
out:
    etcdlock_lock_free(l);
    etcdlock_lock_free(held);
    etcdlock_client_free(waiter);
    etcdlock_client_free(holder);
    atomic_store(&g_fwd_stop, 1);
    pthread_join(acceptor, NULL);
    for (int i = 0; i < 100 && atomic_load(&g_fwd_conns) > 0; i++) sleep_ms(20);
    CHECK(atomic_load(&g_fwd_conns) == 0);
    close(g_fwd_fd);
}

/* ---- netfakes.py's HoldProxy in a python3 child, driven by line commands ---- */

struct hold_proxy {
    pid_t pid;
    FILE *in, *out; /* its stdin, its stdout */
    char endpoint[64];
};

/* Starts `python3 netfakes.py hold-proxy PORT` (netfakes.py found from this file's path);
 * 0 on success. */
static int hold_proxy_start(struct hold_proxy *p, int port) {
    char script[1024], portstr[16];
    snprintf(script, sizeof script, "%s", __FILE__);
    char *slash = strrchr(script, '/');
    if (!slash) return -1;
    snprintf(slash, sizeof script - (size_t)(slash - script), "/../../bindings-python/tests/netfakes.py");
    snprintf(portstr, sizeof portstr, "%d", port);
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return -1;
    if (pipe2(from_child, O_CLOEXEC) != 0) return close(to_child[0]), close(to_child[1]), -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    char *argv[] = {"python3", script, "hold-proxy", portstr, NULL};
    int rc = posix_spawnp(&p->pid, "python3", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0) return close(to_child[1]), close(from_child[0]), -1;
    p->in = fdopen(to_child[1], "w");
    p->out = fdopen(from_child[0], "r");
    /* The endpoint line (EOF if the child fails: fgets does not wait forever). */
    if (!p->in || !p->out || !fgets(p->endpoint, sizeof p->endpoint, p->out)) return -1;
    p->endpoint[strcspn(p->endpoint, "\n")] = 0;
    return strncmp(p->endpoint, "http://", 7) == 0 ? 0 : -1;
}

/* Sends one command; its one-line answer in `answer`. 0 on success. */
static int hold_proxy_cmd(struct hold_proxy *p, const char *cmd, char *answer, size_t len) {
    if (fprintf(p->in, "%s\n", cmd) < 0 || fflush(p->in) != 0 || !fgets(answer, (int)len, p->out)) return -1;
    answer[strcspn(answer, "\n")] = 0;
    return 0;
}

/* Closes the child's stdin (it closes the proxy and exits); waits for it (killed after 10 s). */
static void hold_proxy_stop(struct hold_proxy *p) {
    if (p->in) fclose(p->in);
    if (p->out) fclose(p->out);
    if (p->pid <= 0) return;
    int status;
    for (int i = 0; i < 500 && waitpid(p->pid, &status, WNOHANG) == 0; i++) sleep_ms(20);
    if (waitpid(p->pid, &status, WNOHANG) == 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
    }
}

/* Starts the hold proxy `p` in front of the test's etcd and returns a client connected through
 * it (NULL if either failed), with the proxy told to hold back the request that carries `key`. */
static etcdlock_client *client_holding(struct hold_proxy *p, const char *key, int64_t request_timeout_ms) {
    char cmd[200], answer[64];
    etcdlock_client *c = NULL;
    etcdlock_client_options o;
    CHECK(hold_proxy_start(p, endpoint_port(endpoints())) == 0);
    etcdlock_client_options_init(&o);
    o.request_timeout_ms = request_timeout_ms;
    if (p->endpoint[0]) CHECK_RC(etcdlock_client_new(p->endpoint, &o, &c), ETCDLOCK_OK);
    snprintf(cmd, sizeof cmd, "hold %s", key);
    CHECK(hold_proxy_cmd(p, cmd, answer, sizeof answer) == 0 && strcmp(answer, "ok") == 0);
    return c;
}

struct watch_call {
    etcdlock_client *client;
    const char *prefix;
    etcdlock_watch *w;
    atomic_int rc; /* -1 until etcdlock_watch_open returned */
};

static void *watch_thread(void *arg) {
    struct watch_call *c = arg;
    etcdlock_watch *w = NULL;
    int rc = etcdlock_watch_open(c->client, K(c->prefix), true, 0, &w);
    c->w = w;
    atomic_store(&c->rc, rc);
    return NULL;
}

/* covers: WATCH-CREATED-001
 * The proxy holds back the body of the request carrying the key (the WatchCreateRequest on the
 * Watch stream: etcd has the stream open but never learns of the watch, so no Created answer
 * can come), then resets that stream (RST_STREAM to the client and to etcd). The library does
 * not expose the watch's start revision; the events (keys, values, increasing revisions) are
 * checked. */
static void test_a_watch_whose_stream_is_reset_before_etcd_confirms_it(void) {
    struct hold_proxy p = {0};
    char prefix[140], answer[64];
    unique(prefix, sizeof prefix, "created");
    strcat(prefix, "/");
    etcdlock_client *direct = connect_client(), *c = client_holding(&p, prefix, 5000);
    if (!c || !direct) goto out;

    struct watch_call call = {c, prefix, NULL, -1};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, watch_thread, &call) == 0);
    CHECK(hold_proxy_cmd(&p, "wait-holding 5", answer, sizeof answer) == 0 && strcmp(answer, "yes") == 0);
    CHECK(atomic_load(&call.rc) == -1); /* not returned before etcd confirmed the watch */
    CHECK(hold_proxy_cmd(&p, "reset", answer, sizeof answer) == 0 && atoi(answer) > 0);
    pthread_join(t, NULL); /* bounded: the request timeout is 5 s */
    CHECK_RC(atomic_load(&call.rc), ETCDLOCK_OK);
    if (!call.w) goto out;

    /* Changes made right after it returned are delivered, in order, none missed. */
    enum { N = 3 };
    for (int i = 0; i < N; i++) {
        char key[160], val[8];
        snprintf(key, sizeof key, "%s%d", prefix, i);
        snprintf(val, sizeof val, "%d", i);
        CHECK_RC(etcdlock_put(direct, K(key), K(val), NULL), ETCDLOCK_OK);
    }
    int64_t last = 0;
    for (int i = 0; i < N; i++) {
        etcdlock_event *e = NULL;
        int rc = etcdlock_watch_next(call.w, 5000, &e);
        CHECK_RC(rc, ETCDLOCK_OK); /* ETCDLOCK_E_TIMEOUT: missed */
        if (rc != ETCDLOCK_OK) break;
        char key[160], val[8];
        snprintf(key, sizeof key, "%s%d", prefix, i);
        snprintf(val, sizeof val, "%d", i);
        size_t klen = 0, vlen = 0;
        const uint8_t *k = etcdlock_event_key(e, &klen), *v = etcdlock_event_value(e, &vlen);
        CHECK(etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT);
        CHECK(klen == strlen(key) && memcmp(k, key, klen) == 0);
        CHECK(vlen == strlen(val) && memcmp(v, val, vlen) == 0);
        CHECK(etcdlock_event_revision(e) > last);
        last = etcdlock_event_revision(e);
        etcdlock_event_free(e);
    }
    etcdlock_watch_free(call.w);
out:
    etcdlock_client_free(c);
    etcdlock_client_free(direct);
    hold_proxy_stop(&p);
}

/* covers: ERR-TIMEOUT-001
 * Two timeouts, two statuses: a read whose answer never comes (the proxy holds its body, so
 * etcd has it open and never answers) fails ETCDLOCK_E_TIMEOUT once the client's
 * request_timeout_ms passes; an acquire whose own timeout passes fails ETCDLOCK_E_LOCK_TIMEOUT
 * (both were ETCDLOCK_E_TIMEOUT before the core told them apart, 9c7cb51^). */
static void test_a_request_deadline_is_timeout_and_a_lock_wait_lock_timeout(void) {
    struct hold_proxy p = {0};
    char name[140], key[160], answer[64];
    unique(name, sizeof name, "timeouts");
    snprintf(key, sizeof key, "%s-never", name); /* held back by the proxy: never answered */
    etcdlock_client *direct = connect_client(), *c = client_holding(&p, key, 500);
    etcdlock_lock *held = NULL, *l = NULL;
    if (!c || !direct) goto out;
    CHECK_RC(etcdlock_lock_acquire(direct, name, 10, 5000, NULL, &held), ETCDLOCK_OK);

    /* The acquire's own timeout. */
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 300, NULL, &l), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(l == NULL);

    /* A request whose answer never comes. */
    etcdlock_buf *b = NULL;
    double t0 = now_ms();
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_E_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 400 && took < 5000);
    CHECK(b == NULL);
    CHECK(hold_proxy_cmd(&p, "wait-holding 0", answer, sizeof answer) == 0 && strcmp(answer, "yes") == 0);
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_E_LOCK_TIMEOUT), "ETCDLOCK_E_LOCK_TIMEOUT") == 0);
    if (held) CHECK_RC(etcdlock_lock_release(held), ETCDLOCK_OK);
out:
    etcdlock_lock_free(held);
    etcdlock_client_free(c);
    etcdlock_client_free(direct);
    hold_proxy_stop(&p);
}

struct cancel_call {
    etcdlock_client *client;
    const char *name;
    etcdlock_cancel *cancel;
    etcdlock_lock *l;
    atomic_int rc; /* -1 until etcdlock_lock_acquire returned */
};

static void *cancel_call_thread(void *arg) {
    struct cancel_call *a = arg;
    etcdlock_lock *l = NULL;
    int rc = etcdlock_lock_acquire(a->client, a->name, 10, ETCDLOCK_WAIT_FOREVER, a->cancel, &l);
    a->l = l;
    atomic_store(&a->rc, rc);
    return NULL;
}

/* covers: LOCK-CANCEL-002
 * An acquire that succeeds after its caller cancelled is released and reported as cancelled:
 * the proxy holds the enqueue's body (the lock is free, so its answer makes the caller the
 * holder), the token is triggered meanwhile, then the body goes on. The call fails
 * ETCDLOCK_E_CANCELLED and the lock is free when it returns. (Before the rule moved into the
 * core, the C API returned the lock: ETCDLOCK_OK.) */
static void test_an_acquire_that_succeeds_after_cancel_is_released(void) {
    struct hold_proxy p = {0};
    char name[140], key[142], answer[64];
    unique(name, sizeof name, "cancel-won");
    snprintf(key, sizeof key, "%s/", name);
    etcdlock_client *direct = connect_client(), *c = client_holding(&p, key, 5000);
    etcdlock_cancel *cancel = etcdlock_cancel_new();
    if (!c || !direct || !cancel) goto out;

    struct cancel_call call = {c, name, cancel, NULL, -1};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_call_thread, &call) == 0);
    CHECK(hold_proxy_cmd(&p, "wait-holding 5", answer, sizeof answer) == 0 && strcmp(answer, "yes") == 0);
    etcdlock_cancel_trigger(cancel);
    sleep_ms(100);
    CHECK(atomic_load(&call.rc) == -1); /* the enqueue in flight is waited for */
    CHECK(hold_proxy_cmd(&p, "release", answer, sizeof answer) == 0 && atoi(answer) > 0);
    pthread_join(t, NULL); /* bounded: the request timeout is 5 s */
    CHECK_RC(atomic_load(&call.rc), ETCDLOCK_E_CANCELLED);
    CHECK(call.l == NULL);
    if (call.l) etcdlock_lock_free(call.l);
    /* Free at once: a try-once acquire finds no key in the queue. */
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(direct, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (l) CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
out:
    etcdlock_cancel_free(cancel);
    etcdlock_client_free(c);
    etcdlock_client_free(direct);
    hold_proxy_stop(&p);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_a_silent_first_endpoint);
    RUN(test_a_first_endpoint_that_drops_syns);
    RUN(test_cancel_with_the_enqueue_delayed_leaves_no_key);
    RUN(test_a_member_that_closes_connections_raises_no_sigpipe);
    RUN(test_a_watch_whose_stream_is_reset_before_etcd_confirms_it);
    RUN(test_a_request_deadline_is_timeout_and_a_lock_wait_lock_timeout);
    RUN(test_an_acquire_that_succeeds_after_cancel_is_released);
    return summary("test_conn");
}
