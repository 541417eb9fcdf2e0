/* A TCP proxy in front of the test etcd whose path can be cut: cutproxy_cut() closes every
 * connection through it and, until cutproxy_restore(), closes each new one at once, so a client
 * connected through it hears nothing while others write (the core's tests do this with
 * tests/testkit's Proxy, the history checker's with tests/history/faultnet.py). One thread,
 * poll(2); meant for the small traffic of a test. */
#ifndef ETCDLOCK_TEST_CUTPROXY_H
#define ETCDLOCK_TEST_CUTPROXY_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CUTPROXY_MAX_PAIRS 32

struct cutproxy {
    int listen_fd;
    int port;        /* where clients connect */
    int target_port; /* the member, on 127.0.0.1 */
    atomic_int cut;
    atomic_int quiet; /* set by the thread once a cut closed every connection */
    atomic_int stop;
    int pairs[CUTPROXY_MAX_PAIRS][2]; /* client, member; owned by the thread */
    int n_pairs;
    pthread_t thread;
};

static inline void cutproxy_drop(struct cutproxy *p, int i) {
    close(p->pairs[i][0]);
    close(p->pairs[i][1]);
    p->pairs[i][0] = p->pairs[p->n_pairs - 1][0];
    p->pairs[i][1] = p->pairs[p->n_pairs - 1][1];
    p->n_pairs--;
}

static inline int cutproxy_dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Writes all of buf (blocking): false when the peer is gone. */
static inline int cutproxy_write_all(int fd, const char *buf, ssize_t n) {
    while (n > 0) {
        ssize_t w = send(fd, buf, (size_t)n, MSG_NOSIGNAL);
        if (w <= 0) return 0;
        buf += w;
        n -= w;
    }
    return 1;
}

static inline void *cutproxy_run(void *arg) {
    struct cutproxy *p = arg;
    char buf[65536];
    while (!atomic_load(&p->stop)) {
        if (atomic_load(&p->cut)) {
            while (p->n_pairs > 0) cutproxy_drop(p, 0);
            atomic_store(&p->quiet, 1);
        }
        struct pollfd fds[1 + 2 * CUTPROXY_MAX_PAIRS];
        int n = 0;
        fds[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (int i = 0; i < p->n_pairs; i++) {
            fds[n++] = (struct pollfd){.fd = p->pairs[i][0], .events = POLLIN};
            fds[n++] = (struct pollfd){.fd = p->pairs[i][1], .events = POLLIN};
        }
        if (poll(fds, (nfds_t)n, 20) <= 0) continue;
        /* Pairs first (their indexes in fds are as built); a dropped pair ends this round. */
        for (int i = 0; i < p->n_pairs; i++) {
            int done = 0;
            for (int side = 0; side < 2 && !done; side++) {
                if (!(fds[1 + 2 * i + side].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ssize_t r = recv(p->pairs[i][side], buf, sizeof buf, 0);
                if (r <= 0 || !cutproxy_write_all(p->pairs[i][1 - side], buf, r)) done = 1;
            }
            if (done) {
                cutproxy_drop(p, i);
                break;
            }
        }
        if (fds[0].revents & POLLIN) {
            int c = accept(p->listen_fd, NULL, NULL);
            if (c < 0) continue;
            int up = atomic_load(&p->cut) || p->n_pairs == CUTPROXY_MAX_PAIRS ? -1 : cutproxy_dial(p->target_port);
            if (up < 0) {
                close(c); /* cut: closed at once */
                continue;
            }
            int one = 1;
            setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            p->pairs[p->n_pairs][0] = c;
            p->pairs[p->n_pairs][1] = up;
            p->n_pairs++;
        }
    }
    while (p->n_pairs > 0) cutproxy_drop(p, 0);
    return NULL;
}

/* Starts a proxy to 127.0.0.1:target_port on a free port (p->port); 0 on success. */
static inline int cutproxy_start(struct cutproxy *p, int target_port) {
    memset(p, 0, sizeof *p);
    p->target_port = target_port;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (p->listen_fd < 0) return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(p->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(p->listen_fd, 64) != 0 ||
        getsockname(p->listen_fd, (struct sockaddr *)&a, &len) != 0) {
        close(p->listen_fd);
        return -1;
    }
    p->port = ntohs(a.sin_port);
    atomic_init(&p->cut, 0);
    atomic_init(&p->quiet, 0);
    atomic_init(&p->stop, 0);
    if (pthread_create(&p->thread, NULL, cutproxy_run, p) != 0) {
        close(p->listen_fd);
        return -1;
    }
    return 0;
}

/* Closes every connection through the proxy (done when this returns), and each new one until
 * cutproxy_restore. */
static inline void cutproxy_cut(struct cutproxy *p) {
    atomic_store(&p->quiet, 0);
    atomic_store(&p->cut, 1);
    while (!atomic_load(&p->quiet)) usleep(1000);
}

static inline void cutproxy_restore(struct cutproxy *p) { atomic_store(&p->cut, 0); }

static inline void cutproxy_stop(struct cutproxy *p) {
    atomic_store(&p->stop, 1);
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

#endif
