/*
 * etcdlock.hpp: a header-only C++11 RAII wrapper over the C API in etcdlock.h (hand-written,
 * not generated). Handles are move-only and freed by their destructors: a lock still held is
 * released, a lease still alive is revoked, a registration not closed is deregistered
 * (etcdlock_lock_free / etcdlock_lease_free / etcdlock_registration_free). Failures throw
 * etcdlock::error with the status code and the library's message.
 *
 *   etcdlock::client client("http://127.0.0.1:2379");
 *   {
 *       etcdlock::lock lock = client.lock("jobs/nightly", 10, 5000);  // TTL 10 s, wait <= 5 s
 *       client.put("jobs/state", "running", &lock);                  // fenced write
 *   }                                                                // released here
 *
 * Leader election, semaphores and read-write locks hand out the same etcdlock::lock:
 *
 *   etcdlock::lock leading = client.campaign("svc/leader", "node-1", 10, ETCDLOCK_WAIT_FOREVER);
 *   leading.proclaim("node-1 ready");                                // fenced
 *   etcdlock::observer obs = client.observe("svc/leader");
 *   etcdlock::leader now;
 *   if (obs.next(1000, &now) && now.present) { ... now.value ... }
 *   etcdlock::lock permit = client.semaphore_acquire("pool", 3, 10, 5000);
 *   etcdlock::lock reading = client.read_lock("config", 10, 5000);
 *
 * The service registry: an instance kept registered on a lease of its own, the instances read
 * now, and a discovery that follows them:
 *
 *   etcdlock::registration reg = client.register_instance("svc/api", "node-1", "10.0.0.7:50051", 10);
 *   std::vector<etcdlock::instance> now = client.instances("svc/api");
 *   etcdlock::discovery found = client.discover("svc/api");
 *   std::vector<etcdlock::instance> set;
 *   while (found.next(1000, &set)) { ... set[i].name, set[i].value ... }  // false: no change in time
 *   reg.update("10.0.0.7:50052");                                        // fenced on its lease
 *   reg.close();                                                         // deregistered here
 *
 * The task queue and once-per-period jobs (etcdlock_tasks.hpp, included at the end):
 *
 *   etcdlock::task_queue q = client.queue("jobs/resize", 10, 5);  // TTL 10 s, 5 deliveries
 *   etcdlock::task t = q.claim(5000);                            // t.ack_with(...); not acked: given back
 *   etcdlock::once_slot slot = client.once("reports/daily", 86400000, 10);  // false: not ours
 *
 * Pools of named slots (etcdlock_pool.hpp, included at the end):
 *
 *   etcdlock::pool gpus = client.pool("gpus", {"gpu0", "gpu1", "gpu2"}, 10, 5000);  // reuse delay 5 s
 *   etcdlock::pool_holding held = gpus.acquire(1, 5000);         // held.slots(), held.put(...); released at scope end
 *
 * Lock sets (etcdlock_lockset.hpp, included at the end):
 *
 *   etcdlock::lock_set both = client.lock_set({"acct/1", "acct/2"}, 10);  // any order: no deadlock
 *   etcdlock::lock_set_holding locks = both.acquire(5000);       // locks.put(...) fenced by both; one token
 *
 * Prefix caches (etcdlock_cache.hpp, included at the end):
 *
 *   etcdlock::cache config = client.cache("config/");            // config.get(k, &kv), snapshot(), wait_for(rev, ms)
 *   etcdlock::cache_events changes = config.events();             // changes.next(ms, &ev): PUT, DELETE, RESYNCED
 *
 * Link as for etcdlock.h: pkg-config etcdlock, or CMake's etcdlock::etcdlock.
 */
#ifndef ETCDLOCK_HPP
#define ETCDLOCK_HPP

#include <etcdlock.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace etcdlock {

/** A failed call: `code()` is the ETCDLOCK_E_* status, `what()` its name and message. */
class error : public std::runtime_error {
public:
    error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

namespace detail {
inline void check(int rc, const char *call) {
    if (rc == ETCDLOCK_OK) return;
    std::string msg(etcdlock_last_error(nullptr, 0) + 1, '\0');
    size_t n = etcdlock_last_error(&msg[0], msg.size());
    msg.resize(n < msg.size() ? n : msg.size() - 1);
    throw error(rc, std::string(call) + ": " + etcdlock_status_str(rc) + " (" + msg + ")");
}
inline const uint8_t *bytes(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }
/** A string this library wrote (char **out), copied and freed. */
inline std::string take_string(char *s) {
    std::string out = s ? std::string(s) : std::string();
    etcdlock_string_free(s);
    return out;
}
struct client_free { void operator()(etcdlock_client *p) const noexcept { etcdlock_client_free(p); } };
struct lock_free { void operator()(etcdlock_lock *p) const noexcept { etcdlock_lock_free(p); } };
struct lease_free { void operator()(etcdlock_lease *p) const noexcept { etcdlock_lease_free(p); } };
struct observer_free { void operator()(etcdlock_observer *p) const noexcept { etcdlock_observer_free(p); } };
struct registration_free {
    void operator()(etcdlock_registration *p) const noexcept { etcdlock_registration_free(p); }
};
struct discovery_free { void operator()(etcdlock_discovery *p) const noexcept { etcdlock_discovery_free(p); } };
struct instance_set_free {
    void operator()(etcdlock_instance_set *p) const noexcept { etcdlock_instance_set_free(p); }
};
} // namespace detail

/** An election's leader (etcdlock_leader copied out); `present` is false for "no leader". */
struct leader {
    bool present = false;
    std::string value;
    std::string key;
    /** The leader's fencing token (its key's create revision). */
    int64_t revision = 0;
    int64_t lease = 0;
};

namespace detail {
/** Copies `l` into `*out` (if not NULL) and frees it. */
inline void take_leader(etcdlock_leader *l, etcdlock::leader *out) {
    if (out) {
        *out = etcdlock::leader();
        if (l) {
            out->present = true;
            out->value.assign(reinterpret_cast<const char *>(l->value), l->value_len);
            out->key.assign(reinterpret_cast<const char *>(l->key), l->key_len);
            out->revision = l->revision;
            out->lease = l->lease;
        }
    }
    etcdlock_leader_free(l);
}
} // namespace detail

/** One registered instance of a service (etcdlock_instance copied out). */
struct instance {
    /** Its name: the key after `<service>/`. */
    std::string name;
    /** What it registered (may be empty; for Go gRPC clients an etcdlock_grpc_endpoint value). */
    std::string value;
    /** The lease its key is on (0 for a key put without one, e.g. by hand). */
    int64_t lease = 0;
    /** The revision of its latest put (registration or update). */
    int64_t mod_revision = 0;
};

namespace detail {
/** Copies `s` into `*out` and `*revision` (each if not NULL) and frees it. */
inline void take_instances(etcdlock_instance_set *s, std::vector<etcdlock::instance> *out, int64_t *revision) {
    std::unique_ptr<etcdlock_instance_set, instance_set_free> owned(s);
    if (revision) *revision = s ? s->revision : 0;
    if (!out) return;
    std::vector<etcdlock::instance> v;
    if (s) {
        v.reserve(s->n_instances);
        for (size_t i = 0; i < s->n_instances; i++) {
            const etcdlock_instance &in = s->instances[i];
            etcdlock::instance copy;
            copy.name.assign(reinterpret_cast<const char *>(in.name), in.name_len);
            copy.value.assign(reinterpret_cast<const char *>(in.value), in.value_len);
            copy.lease = in.lease;
            copy.mod_revision = in.mod_revision;
            v.push_back(copy);
        }
    }
    out->swap(v);
}
} // namespace detail

/** A held (or once held) lock: a mutex's, a semaphore's permit, a read-write lock's read or
 *  write, or an election's leadership. The destructor releases it if it is still held. */
class lock {
public:
    /** The fencing token: the lock key's create revision, larger for every later holder. */
    int64_t fencing_token() const noexcept { return etcdlock_lock_fencing_token(p_.get()); }
    /** Conservative: false from the moment the lock may have been lost. */
    bool is_held() const noexcept { return etcdlock_lock_is_held(p_.get()); }
    /** One call's view of the hold (`ok` while held and not in doubt): what a readiness probe
     *  answers. Local reads only. */
    etcdlock_health health() const {
        etcdlock_health h;
        detail::check(etcdlock_lock_health(p_.get(), &h), "etcdlock_lock_health");
        return h;
    }
    /** This holder's queue key in etcd. */
    std::string key() const {
        size_t len = 0;
        const uint8_t *k = etcdlock_lock_key(p_.get(), &len);
        return k ? std::string(reinterpret_cast<const char *>(k), len) : std::string();
    }
    /** The acquisition's fence in its string form (client::check_fence, any binding's, checks
     *  it); throws ETCDLOCK_E_NOT_HELD once released or lost. */
    std::string fence() const {
        char *f = nullptr;
        detail::check(etcdlock_lock_fence(p_.get(), &f), "etcdlock_lock_fence");
        return detail::take_string(f);
    }
    /** Releases now (fenced); throws (ETCDLOCK_E_NOT_HELD) if it was already released or lost. */
    void release() { detail::check(etcdlock_lock_release(p_.get()), "etcdlock_lock_release"); }
    /** A leadership's new value, written only while it still leads (throws ETCDLOCK_E_NOT_HELD
     *  otherwise); returns the write's revision. */
    int64_t proclaim(const std::string &value) {
        int64_t rev = 0;
        detail::check(etcdlock_election_proclaim(p_.get(), detail::bytes(value), value.size(), &rev),
                      "etcdlock_election_proclaim");
        return rev;
    }
    /** A leadership steps down (release). */
    void resign() { detail::check(etcdlock_election_resign(p_.get()), "etcdlock_election_resign"); }
    /** The C handle, for calls this wrapper does not cover (e.g. etcdlock_lock_on_lost). */
    etcdlock_lock *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit lock(etcdlock_lock *p) : p_(p) {}
    std::unique_ptr<etcdlock_lock, detail::lock_free> p_;
};

/** A lease kept alive in the background; the destructor revokes it. */
class lease {
public:
    int64_t id() const noexcept { return etcdlock_lease_id(p_.get()); }
    int64_t ttl() const noexcept { return etcdlock_lease_ttl(p_.get()); }
    bool is_alive() const noexcept { return etcdlock_lease_is_alive(p_.get()); }
    /** Revokes now, deleting every key attached to it. Idempotent. */
    void revoke() { detail::check(etcdlock_lease_revoke(p_.get()), "etcdlock_lease_revoke"); }
    etcdlock_lease *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit lease(etcdlock_lease *p) : p_(p) {}
    std::unique_ptr<etcdlock_lease, detail::lease_free> p_;
};

/** Follows an election's leader; the destructor stops it. */
class observer {
public:
    /** Waits at most `timeout_ms` for the next leader state (the current one first): true and
     *  `*out` (nullable) set when one came (`present` false for no leader), false when nothing
     *  changed in time. Throws ETCDLOCK_E_CLOSED once the client or the observer is closed. */
    bool next(int64_t timeout_ms, etcdlock::leader *out) {
        etcdlock_leader *l = nullptr;
        int rc = etcdlock_observer_next(p_.get(), timeout_ms, &l);
        if (rc == ETCDLOCK_E_TIMEOUT) return false;
        detail::check(rc, "etcdlock_observer_next");
        detail::take_leader(l, out);
        return true;
    }
    /** Ends a next() waiting on another thread (it throws ETCDLOCK_E_CLOSED). */
    void close() noexcept { etcdlock_observer_close(p_.get()); }
    etcdlock_observer *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit observer(etcdlock_observer *p) : p_(p) {}
    std::unique_ptr<etcdlock_observer, detail::observer_free> p_;
};

/** An instance kept registered (client::register_instance): `<service>/<instance>` on a lease
 *  of its own kept alive in the background, registered again on a new lease when that one is
 *  lost, until close(), another registrant taking the name over, or its client closing. The
 *  destructor deregisters one not closed in the background (etcdlock_registration_free); close()
 *  does it before returning. */
class registration {
public:
    /** `<service>/<instance>`. */
    std::string key() const {
        size_t len = 0;
        const uint8_t *k = etcdlock_registration_key(p_.get(), &len);
        return k ? std::string(reinterpret_cast<const char *>(k), len) : std::string();
    }
    /** The lease the key is on now; 0 while it is being registered again or once it ended. */
    int64_t lease_id() const noexcept { return etcdlock_registration_lease_id(p_.get()); }
    /** Cheap local check: registered now, as far as this process knows. */
    bool is_registered() const noexcept { return etcdlock_registration_is_registered(p_.get()); }
    /** Replaces the registered value (also for later registrations), written only while the key
     *  is on this registration's lease: throws ETCDLOCK_E_NOT_HELD, writing nothing, while it is
     *  being registered again, after it was taken over, or once closed. Returns the write's
     *  revision. */
    int64_t update(const std::string &value) {
        int64_t rev = 0;
        detail::check(etcdlock_registration_update(p_.get(), detail::bytes(value), value.size(), &rev),
                      "etcdlock_registration_update");
        return rev;
    }
    /** Waits at most `timeout_ms` for the next event: true and `*out` (nullable) set when one
     *  came (`kind` ETCDLOCK_REGISTRATION_LOST with its `reason`, _RESTORED with the new `lease`,
     *  or _TAKEN_OVER, the last), false when none came in time. Throws ETCDLOCK_E_CLOSED once
     *  closed, after TAKEN_OVER, or once the client is closed. */
    bool next_event(int64_t timeout_ms, etcdlock_registration_event *out) {
        etcdlock_registration_event e = {0, 0, 0};
        int rc = etcdlock_registration_next_event(p_.get(), timeout_ms, &e);
        if (rc == ETCDLOCK_E_TIMEOUT) return false;
        detail::check(rc, "etcdlock_registration_next_event");
        if (out) *out = e;
        return true;
    }
    /** Deregisters now: deletes the key (if still this registration's) and revokes the lease
     *  before returning; a next_event() waiting on another thread throws ETCDLOCK_E_CLOSED.
     *  Idempotent. Throws ETCDLOCK_E_CLOSED if its client was closed first (which left nothing). */
    void close() { detail::check(etcdlock_registration_close(p_.get()), "etcdlock_registration_close"); }
    etcdlock_registration *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit registration(etcdlock_registration *p) : p_(p) {}
    std::unique_ptr<etcdlock_registration, detail::registration_free> p_;
};

/** Follows a service's instances (client::discover); the destructor stops it. Sends nothing
 *  until the first next(). */
class discovery {
public:
    /** Waits at most `timeout_ms` for the next instance set (the current one first, then the
     *  whole set after each change): true and `*out` (nullable; ordered by name) and
     *  `*revision` (nullable; the revision the set is the state at) set when one came, false
     *  when nothing changed in time (nothing is lost: a later call reports it). Throws
     *  ETCDLOCK_E_CLOSED once the client or the discovery is closed. */
    bool next(int64_t timeout_ms, std::vector<etcdlock::instance> *out, int64_t *revision = nullptr) {
        etcdlock_instance_set *s = nullptr;
        int rc = etcdlock_discovery_next(p_.get(), timeout_ms, &s);
        if (rc == ETCDLOCK_E_TIMEOUT) return false;
        detail::check(rc, "etcdlock_discovery_next");
        detail::take_instances(s, out, revision);
        return true;
    }
    /** Ends a next() waiting on another thread (it throws ETCDLOCK_E_CLOSED), and every later one. */
    void close() noexcept { etcdlock_discovery_close(p_.get()); }
    etcdlock_discovery *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit discovery(etcdlock_discovery *p) : p_(p) {}
    std::unique_ptr<etcdlock_discovery, detail::discovery_free> p_;
};

class task_queue;
class once_slot;
class pool;
struct slot_info;
class cache;
class lock_set;
struct set_member;

/** A connection to etcd; may be used by any number of threads at once. */
class client {
public:
    /** `endpoints`: comma-separated URLs; `opts` NULL for the defaults. */
    explicit client(const std::string &endpoints, const etcdlock_client_options *opts = nullptr) {
        etcdlock_client *c = nullptr;
        detail::check(etcdlock_client_new(endpoints.c_str(), opts, &c), "etcdlock_client_new");
        p_.reset(c);
    }

    /** Waits at most `timeout_ms` (ETCDLOCK_WAIT_FOREVER: no limit) for the lock `name`. */
    etcdlock::lock lock(const std::string &name, int64_t ttl_s, int64_t timeout_ms,
                        const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_lock_acquire(p_.get(), name.c_str(), ttl_s, timeout_ms, cancel, &l),
                      "etcdlock_lock_acquire");
        return etcdlock::lock(l);
    }

    /** Campaigns in the election `name` proposing `value`; the lock is the leadership. */
    etcdlock::lock campaign(const std::string &name, const std::string &value, int64_t ttl_s, int64_t timeout_ms,
                            const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_election_campaign(p_.get(), name.c_str(), ttl_s, timeout_ms, cancel, detail::bytes(value),
                                                 value.size(), &l),
                      "etcdlock_election_campaign");
        return etcdlock::lock(l);
    }

    /** The leader of the election `name`: false (and `*out` with `present` false) for none. */
    bool leader(const std::string &name, etcdlock::leader *out) {
        etcdlock_leader *l = nullptr;
        detail::check(etcdlock_election_leader(p_.get(), name.c_str(), &l), "etcdlock_election_leader");
        bool present = l != nullptr;
        detail::take_leader(l, out);
        return present;
    }

    etcdlock::observer observe(const std::string &name) {
        etcdlock_observer *o = nullptr;
        detail::check(etcdlock_election_observe(p_.get(), name.c_str(), &o), "etcdlock_election_observe");
        return etcdlock::observer(o);
    }

    /** One of `permits` permits of the semaphore `name`. */
    etcdlock::lock semaphore_acquire(const std::string &name, uint32_t permits, int64_t ttl_s, int64_t timeout_ms,
                                     const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_semaphore_acquire(p_.get(), name.c_str(), permits, ttl_s, timeout_ms, cancel, &l),
                      "etcdlock_semaphore_acquire");
        return etcdlock::lock(l);
    }

    /** `count` of the `permits` permits of the semaphore `name` at once (1 to `permits`): one
     *  lock; it waits at the head of the queue until that many are free. */
    etcdlock::lock semaphore_acquire_count(const std::string &name, uint32_t permits, uint32_t count, int64_t ttl_s,
                                           int64_t timeout_ms, const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_semaphore_acquire_with_count(p_.get(), name.c_str(), permits, count, ttl_s, timeout_ms, cancel, &l),
                      "etcdlock_semaphore_acquire_with_count");
        return etcdlock::lock(l);
    }

    /** The read-write lock `name` for reading (shared). */
    etcdlock::lock read_lock(const std::string &name, int64_t ttl_s, int64_t timeout_ms,
                             const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_rwlock_read(p_.get(), name.c_str(), ttl_s, timeout_ms, cancel, &l), "etcdlock_rwlock_read");
        return etcdlock::lock(l);
    }

    /** The read-write lock `name` for writing (exclusive). */
    etcdlock::lock write_lock(const std::string &name, int64_t ttl_s, int64_t timeout_ms,
                              const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock *l = nullptr;
        detail::check(etcdlock_rwlock_write(p_.get(), name.c_str(), ttl_s, timeout_ms, cancel, &l), "etcdlock_rwlock_write");
        return etcdlock::lock(l);
    }

    etcdlock::lease grant_lease(int64_t ttl_s) {
        etcdlock_lease *l = nullptr;
        detail::check(etcdlock_lease_grant(p_.get(), ttl_s, &l), "etcdlock_lease_grant");
        return etcdlock::lease(l);
    }

    /** With `if_held`, written only while that lock is held (ETCDLOCK_E_NOT_HELD otherwise). */
    void put(const std::string &key, const std::string &value, const etcdlock::lock *if_held = nullptr) {
        detail::check(etcdlock_put(p_.get(), detail::bytes(key), key.size(), detail::bytes(value), value.size(),
                                   if_held ? if_held->get() : nullptr),
                      "etcdlock_put");
    }

    /** Attached to `lease`: deleted when it ends. */
    void put(const std::string &key, const std::string &value, const etcdlock::lease &lease) {
        detail::check(etcdlock_put_with_lease(p_.get(), detail::bytes(key), key.size(), detail::bytes(value),
                                              value.size(), lease.get()),
                      "etcdlock_put_with_lease");
    }

    /** False when the key does not exist (then `*value` is left alone). */
    bool get(const std::string &key, std::string *value) {
        etcdlock_buf *b = nullptr;
        detail::check(etcdlock_get(p_.get(), detail::bytes(key), key.size(), &b), "etcdlock_get");
        if (!b) return false;
        if (value) value->assign(reinterpret_cast<const char *>(etcdlock_buf_data(b)), etcdlock_buf_len(b));
        etcdlock_buf_free(b);
        return true;
    }

    void del(const std::string &key) {
        detail::check(etcdlock_delete(p_.get(), detail::bytes(key), key.size()), "etcdlock_delete");
    }

    /** Registers `name` as an instance of `service` (the key `<service>/<name>`, the layout of
     *  etcd's Go endpoints manager) with `value` (at most 4096 bytes) on a new lease of `ttl_s`
     *  seconds. `flags`: 0, or ETCDLOCK_REGISTER_REPLACE to take over a name another registrant
     *  holds (without it that throws ETCDLOCK_E_WOULD_BLOCK, leaving nothing in etcd). */
    etcdlock::registration register_instance(const std::string &service, const std::string &name,
                                             const std::string &value, int64_t ttl_s, uint32_t flags = 0) {
        etcdlock_registration *r = nullptr;
        detail::check(etcdlock_register(p_.get(), service.c_str(), name.c_str(), detail::bytes(value), value.size(),
                                        ttl_s, flags, &r),
                      "etcdlock_register");
        return etcdlock::registration(r);
    }

    /** The instances of `service` now, whoever registered them, ordered by name (one
     *  linearizable read); `*revision` (nullable) is the revision they are the state at. */
    std::vector<etcdlock::instance> instances(const std::string &service, int64_t *revision = nullptr) {
        etcdlock_instance_set *s = nullptr;
        detail::check(etcdlock_instances(p_.get(), service.c_str(), &s), "etcdlock_instances");
        std::vector<etcdlock::instance> out;
        detail::take_instances(s, &out, revision);
        return out;
    }

    /** Follows the instances of `service`: see discovery::next. */
    etcdlock::discovery discover(const std::string &service) {
        etcdlock_discovery *d = nullptr;
        detail::check(etcdlock_discover(p_.get(), service.c_str(), &d), "etcdlock_discover");
        return etcdlock::discovery(d);
    }

    /** The task queue `name` (sends nothing): claims on leases of `ttl_s` seconds, an item
     *  delivered at most `max_attempts` times before it goes to the dead letters, and with
     *  `max_processing_ms` (0: no limit) a claim ends that long after it was made, held or not.
     *  Defined in etcdlock_tasks.hpp. */
    etcdlock::task_queue queue(const std::string &name, int64_t ttl_s, uint32_t max_attempts,
                               int64_t max_processing_ms = 0);

    /** Claims the period's slot of the once-per-period job `name`, run at most once per
     *  `every_ms` across every caller (`at_unix_ms` 0: now; done marks kept `keep_periods`
     *  periods): a slot that is true when this caller won it, empty otherwise. Defined in
     *  etcdlock_tasks.hpp. */
    etcdlock::once_slot once(const std::string &name, int64_t every_ms, int64_t ttl_s, int64_t at_unix_ms = 0,
                             uint32_t keep_periods = 3);

    /** The pool `name` of these slots (sends nothing): holdings on leases of `ttl_s` seconds, a
     *  dead holder's slot not handed out again before `reuse_delay_ms`. Every participant must
     *  give the same slots and delay (the first acquire throws ETCDLOCK_E_INVALID_ARGUMENT
     *  otherwise). Defined in etcdlock_pool.hpp. */
    etcdlock::pool pool(const std::string &name, const std::vector<std::string> &slots, int64_t ttl_s = 10,
                        int64_t reuse_delay_ms = 0);
    /** The pool `name` of `size` slots named "0" to "size - 1". */
    etcdlock::pool pool(const std::string &name, size_t size, int64_t ttl_s = 10, int64_t reuse_delay_ms = 0);
    /** The pool `name` as another participant defined it. */
    etcdlock::pool join_pool(const std::string &name, int64_t ttl_s = 10);
    /** The slots of the pool `name` at one revision, in its order; empty (and `*defined`,
     *  nullable, false) when no pool is defined there. */
    std::vector<etcdlock::slot_info> inspect_pool(const std::string &name, bool *defined = nullptr);

    /** A local copy of every key under `prefix` ("": everything), loaded at one revision and
     *  kept in step with etcd. Defined in etcdlock_cache.hpp. */
    etcdlock::cache cache(const std::string &prefix);

    /** The lock set `members` (1 to ETCDLOCK_MAX_LOCK_SET names, none twice, none under
     *  another's queue) on the client's lease of `ttl_s` seconds; sends nothing. Defined in
     *  etcdlock_lockset.hpp. */
    etcdlock::lock_set lock_set(const std::vector<etcdlock::set_member> &members, int64_t ttl_s = 10);

    /** Whether the acquisition a fence (its string form, from any binding) names still holds,
     *  now (one linearizable read; false for another cluster's). A malformed one throws
     *  ETCDLOCK_E_INVALID_ARGUMENT. */
    bool check_fence(const std::string &fence) {
        bool holds = false;
        detail::check(etcdlock_check_fence(p_.get(), fence.c_str(), &holds), "etcdlock_check_fence");
        return holds;
    }

    etcdlock_client *get() const noexcept { return p_.get(); }

private:
    std::unique_ptr<etcdlock_client, detail::client_free> p_;
};

} // namespace etcdlock

#include "etcdlock_tasks.hpp"
#include "etcdlock_pool.hpp"
#include "etcdlock_cache.hpp"
#include "etcdlock_lockset.hpp"

#endif /* ETCDLOCK_HPP */
