/*
 * etcdlock_cache.hpp: prefix caches in the C++11 RAII wrapper (hand-written, not generated).
 * Part of etcdlock.hpp, which includes it: include that one. Handles are move-only and freed
 * by their destructors (a cache stops following etcd, a stream ends). Failures throw
 * etcdlock::error.
 *
 *   etcdlock::cache config = client.cache("config/");         // loaded at one revision
 *   etcdlock::kv kv;
 *   if (config.get("config/a", &kv)) { ... kv.value ... }     // from the copy: sends nothing
 *   etcdlock::cache_events events = config.events();
 *   etcdlock::cache_event ev;
 *   while (events.next(1000, &ev)) { ... ev.kind, ev.key ... }  // false: nothing in 1 s
 *   config.wait_for(rev, 5000);                               // false: not there in 5 s
 */
#ifndef ETCDLOCK_CACHE_HPP
#define ETCDLOCK_CACHE_HPP

#include "etcdlock.hpp"

#include <map>
#include <utility>

namespace etcdlock {

namespace detail {
struct cache_free { void operator()(etcdlock_cache *p) const noexcept { etcdlock_cache_free(p); } };
struct cache_stream_free { void operator()(etcdlock_cache_stream *p) const noexcept { etcdlock_cache_stream_free(p); } };
struct kv_free { void operator()(etcdlock_kv *p) const noexcept { etcdlock_kv_free(p); } };
struct kv_set_free { void operator()(etcdlock_kv_set *p) const noexcept { etcdlock_kv_set_free(p); } };
struct cache_event_free { void operator()(etcdlock_cache_event *p) const noexcept { etcdlock_cache_event_free(p); } };
inline std::string str(const uint8_t *p, size_t len) { return p ? std::string(reinterpret_cast<const char *>(p), len) : std::string(); }
} // namespace detail

/** One key of a cache's copy (etcdlock_kv copied out). */
struct kv {
    std::string key;
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;
    /** The lease the key is on (0 for none). */
    int64_t lease = 0;
};

namespace detail {
inline etcdlock::kv copy_kv(const etcdlock_kv &in) {
    etcdlock::kv out;
    out.key = str(in.key, in.key_len);
    out.value = str(in.value, in.value_len);
    out.create_revision = in.create_revision;
    out.mod_revision = in.mod_revision;
    out.version = in.version;
    out.lease = in.lease;
    return out;
}
} // namespace detail

/** One change of a cache's copy (etcdlock_cache_event copied out). */
struct cache_event {
    /** ETCDLOCK_CACHE_PUT, ETCDLOCK_CACHE_DELETE or ETCDLOCK_CACHE_RESYNCED. */
    int kind = 0;
    std::string key;
    /** The new value (empty for a delete and RESYNCED). */
    std::string value;
    /** Whether the copy had the key before; then `prev_value` is its value then. */
    bool has_prev = false;
    std::string prev_value;
    int64_t revision = 0;
};

/** A cache's changes from when it was made (cache::events); the destructor ends it. */
class cache_events {
public:
    /** Waits at most `timeout_ms` for the next change: true and `*out` (nullable) set when one
     *  came, false when none came in time (nothing is lost). Throws ETCDLOCK_E_CLOSED once the
     *  stream, the cache or the client is closed. */
    bool next(int64_t timeout_ms, etcdlock::cache_event *out) {
        etcdlock_cache_event *raw = nullptr;
        int rc = etcdlock_cache_stream_next(p_.get(), timeout_ms, &raw);
        if (rc == ETCDLOCK_E_TIMEOUT) return false;
        detail::check(rc, "etcdlock_cache_stream_next");
        std::unique_ptr<etcdlock_cache_event, detail::cache_event_free> ev(raw);
        if (out) {
            out->kind = raw->kind;
            out->key = detail::str(raw->key, raw->key_len);
            out->value = detail::str(raw->value, raw->value_len);
            out->has_prev = raw->has_prev;
            out->prev_value = detail::str(raw->prev_value, raw->prev_value_len);
            out->revision = raw->revision;
        }
        return true;
    }
    /** Ends a next() waiting on another thread (it throws ETCDLOCK_E_CLOSED), and every later one. */
    void close() noexcept { etcdlock_cache_stream_close(p_.get()); }
    etcdlock_cache_stream *get() const noexcept { return p_.get(); }

private:
    friend class cache;
    explicit cache_events(etcdlock_cache_stream *p) : p_(p) {}
    std::unique_ptr<etcdlock_cache_stream, detail::cache_stream_free> p_;
};

/** A local copy of a prefix kept in step with etcd (client::cache). Reads send nothing and may
 *  be behind etcd: wait_for catches up with a revision. */
class cache {
public:
    /** The revision the copy is at (0 once closed). */
    int64_t revision() const noexcept { return etcdlock_cache_revision(p_.get()); }
    /** How many keys the copy has. */
    size_t size() const noexcept { return etcdlock_cache_len(p_.get()); }
    /** `key` from the copy: false when it has none (then `*out` is left alone). */
    bool get(const std::string &key, etcdlock::kv *out) const {
        etcdlock_kv *raw = nullptr;
        detail::check(etcdlock_cache_get(p_.get(), detail::bytes(key), key.size(), &raw), "etcdlock_cache_get");
        std::unique_ptr<etcdlock_kv, detail::kv_free> owned(raw);
        if (raw && out) *out = detail::copy_kv(*raw);
        return raw != nullptr;
    }
    /** The whole copy by key, and in `*revision` (nullable) the revision it is at, read together. */
    std::map<std::string, etcdlock::kv> snapshot(int64_t *revision = nullptr) const {
        etcdlock_kv_set *raw = nullptr;
        detail::check(etcdlock_cache_snapshot(p_.get(), &raw), "etcdlock_cache_snapshot");
        std::unique_ptr<etcdlock_kv_set, detail::kv_set_free> owned(raw);
        std::map<std::string, etcdlock::kv> out;
        for (size_t i = 0; i < raw->n_kvs; i++) {
            etcdlock::kv copy = detail::copy_kv(raw->kvs[i]);
            std::string key = copy.key;
            out.insert(std::make_pair(key, copy));
        }
        if (revision) *revision = raw->revision;
        return out;
    }
    /** Waits at most `timeout_ms` until the copy is at `revision` or later: false when it did not
     *  get there in time. Throws ETCDLOCK_E_CLOSED once the cache or the client is closed. */
    bool wait_for(int64_t revision, int64_t timeout_ms) const {
        int rc = etcdlock_cache_wait_for(p_.get(), revision, timeout_ms);
        if (rc == ETCDLOCK_E_TIMEOUT) return false;
        detail::check(rc, "etcdlock_cache_wait_for");
        return true;
    }
    /** The copy's changes from now on. */
    etcdlock::cache_events events() const {
        etcdlock_cache_stream *s = nullptr;
        detail::check(etcdlock_cache_events(p_.get(), &s), "etcdlock_cache_events");
        return etcdlock::cache_events(s);
    }
    /** Stops following etcd: a wait_for() on another thread throws ETCDLOCK_E_CLOSED, its streams end. */
    void close() noexcept { etcdlock_cache_close(p_.get()); }
    etcdlock_cache *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit cache(etcdlock_cache *p) : p_(p) {}
    std::unique_ptr<etcdlock_cache, detail::cache_free> p_;
};

inline etcdlock::cache client::cache(const std::string &prefix) {
    etcdlock_cache *c = nullptr;
    detail::check(etcdlock_cache_open(p_.get(), prefix.c_str(), &c), "etcdlock_cache_open");
    return etcdlock::cache(c);
}

} // namespace etcdlock

#endif /* ETCDLOCK_CACHE_HPP */
