/*
 * etcdlock_pool.hpp: pools of named slots in the C++11 RAII wrapper (hand-written, not
 * generated). Part of etcdlock.hpp, which includes it: include that one. Handles are move-only
 * and freed by their destructors: a holding still held is released (etcdlock_pool_held_free:
 * the last handle on it). Failures throw etcdlock::error.
 *
 *   etcdlock::pool gpus = client.pool("gpus", {"gpu0", "gpu1", "gpu2"}, 10, 5000);  // TTL 10 s, reuse delay 5 s
 *   {
 *       etcdlock::pool_holding held = gpus.acquire(1, 5000);        // wait <= 5 s
 *       run_on(held.slots()[0]);                                    // "gpu1"
 *       held.put("jobs/7/device", held.slots()[0]);                 // only while the slot is held
 *   }                                                               // released here
 *   etcdlock::pool ids = client.pool("snowflake/workers", 1024, 10, 30000);  // slots "0" to "1023"
 */
#ifndef ETCDLOCK_POOL_HPP
#define ETCDLOCK_POOL_HPP

#include "etcdlock.hpp"

#include <utility>

namespace etcdlock {

namespace detail {
struct pool_free { void operator()(etcdlock_pool *p) const noexcept { etcdlock_pool_free(p); } };
struct pool_held_free { void operator()(etcdlock_pool_held *p) const noexcept { etcdlock_pool_held_free(p); } };
struct pool_state_free { void operator()(etcdlock_pool_state *p) const noexcept { etcdlock_pool_state_free(p); } };
/** The C view of `v` (its pointers live as long as `v`). */
inline std::vector<const char *> c_strings(const std::vector<std::string> &v) {
    std::vector<const char *> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); i++) out.push_back(v[i].c_str());
    return out;
}
} // namespace detail

/** One slot of a pool (client::inspect_pool). */
struct slot_info {
    std::string id;
    /** ETCDLOCK_SLOT_FREE, _HELD, _RESTING or _DEAD. */
    int state = ETCDLOCK_SLOT_FREE;
    /** Held: the slot's fencing token. */
    int64_t token = 0;
    /** Held: the holder's lease; resting: the rest's lease. */
    int64_t lease = 0;
    /** Seconds that lease has left; -1 when gone or none. */
    int64_t ttl_s = -1;
    /** Held: the acquisition's fencing token. */
    int64_t acquisition = 0;
    /** Held: the owner it was acquired with (empty for none). */
    std::string owner;
};

/** Slots held from a pool (pool::acquire): a token per slot and one for the acquisition, fenced
 *  writes, release. The destructor releases a holding still held (unless another handle on it,
 *  from an acquire with its owner, is alive). */
class pool_holding {
public:
    /** The slot ids held, in the pool's order. */
    std::vector<std::string> slots() const {
        size_t n = 0;
        const char *const *s = etcdlock_pool_held_slots(p_.get(), &n);
        std::vector<std::string> out;
        for (size_t i = 0; s && i < n; i++) out.push_back(s[i]);
        return out;
    }
    /** Each slot with its fencing token (larger for every later holder of that slot). */
    std::vector<std::pair<std::string, int64_t> > tokens() const {
        size_t n = 0;
        const char *const *s = etcdlock_pool_held_slots(p_.get(), &n);
        const int64_t *t = etcdlock_pool_held_tokens(p_.get(), nullptr);
        std::vector<std::pair<std::string, int64_t> > out;
        for (size_t i = 0; s && t && i < n; i++) out.push_back(std::make_pair(std::string(s[i]), t[i]));
        return out;
    }
    /** The acquisition's fencing token: larger for every later acquisition from the pool. */
    int64_t fencing_token() const noexcept { return etcdlock_pool_held_fencing_token(p_.get()); }
    /** The owner it was acquired with (empty for none). */
    std::string owner() const {
        const char *o = etcdlock_pool_held_owner(p_.get());
        return o ? std::string(o) : std::string();
    }
    int64_t lease_id() const noexcept { return etcdlock_pool_held_lease_id(p_.get()); }
    /** Cheap local check: neither released nor known lost. */
    bool is_held() const noexcept { return etcdlock_pool_held_is_held(p_.get()); }
    /** Why the holding was lost (an ETCDLOCK_LOST_* reason), or 0. */
    int lost_reason() const noexcept { return etcdlock_pool_held_lost_reason(p_.get()); }
    /** One call's view of the hold, as lock::health(). */
    etcdlock_health health() const {
        etcdlock_health h;
        detail::check(etcdlock_pool_held_health(p_.get(), &h), "etcdlock_pool_held_health");
        return h;
    }
    /** Writes `value` at `key` only while every slot is held (throws ETCDLOCK_E_NOT_HELD otherwise,
     *  nothing written). A key under the pool's own `<name>/` throws ETCDLOCK_E_INVALID_ARGUMENT. */
    void put(const std::string &key, const std::string &value) {
        detail::check(etcdlock_pool_held_put(p_.get(), detail::bytes(key), key.size(), detail::bytes(value), value.size()),
                      "etcdlock_pool_held_put");
    }
    /** Deletes `key` only while every slot is held. */
    void del(const std::string &key) {
        detail::check(etcdlock_pool_held_delete(p_.get(), detail::bytes(key), key.size()), "etcdlock_pool_held_delete");
    }
    /** Applies `ops` (1 to 64) in one transaction, only while every slot is held; returns its
     *  revision. */
    int64_t txn(const std::vector<op> &ops) {
        std::vector<etcdlock_op> raw;
        raw.reserve(ops.size());
        for (size_t i = 0; i < ops.size(); i++) {
            etcdlock_op r = {ops[i].kind, detail::bytes(ops[i].key), ops[i].key.size(), detail::bytes(ops[i].value),
                             ops[i].value.size()};
            raw.push_back(r);
        }
        int64_t rev = 0;
        detail::check(etcdlock_pool_held_txn(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), &rev),
                      "etcdlock_pool_held_txn");
        return rev;
    }
    /** The fence of slot `slot` (its key at the slot's token) in its string form, for
     *  client::check_fence; throws ETCDLOCK_E_INVALID_ARGUMENT for a slot it does not hold. */
    std::string fence(const std::string &slot) const {
        char *f = nullptr;
        detail::check(etcdlock_pool_held_fence(p_.get(), slot.c_str(), &f), "etcdlock_pool_held_fence");
        return detail::take_string(f);
    }
    /** Gives every slot back at once (free for the next request); throws ETCDLOCK_E_NOT_HELD if
     *  already released or lost. */
    void release() { detail::check(etcdlock_pool_held_release(p_.get()), "etcdlock_pool_held_release"); }
    /** The C handle, for calls this wrapper does not cover (etcdlock_pool_held_on_lost). */
    etcdlock_pool_held *get() const noexcept { return p_.get(); }

private:
    friend class pool;
    explicit pool_holding(etcdlock_pool_held *p) : p_(p) {}
    std::unique_ptr<etcdlock_pool_held, detail::pool_held_free> p_;
};

/** A handle on a pool of named slots (client::pool, client::join_pool); sends nothing until
 *  used. Its holdings outlive it. */
class pool {
public:
    /** Takes `count` slots nobody else holds, waiting at most `timeout_ms` (0: try once, throws
     *  ETCDLOCK_E_WOULD_BLOCK; ETCDLOCK_WAIT_FOREVER; otherwise throws ETCDLOCK_E_LOCK_TIMEOUT).
     *  Requests are served in arrival order; a request for several waits at the head until they
     *  are free. With an `owner` (not empty), an acquire while this client holds slots acquired
     *  with that owner returns that holding again. */
    etcdlock::pool_holding acquire(uint32_t count, int64_t timeout_ms, const std::string &owner = std::string(),
                                   const etcdlock_cancel *cancel = nullptr) {
        etcdlock_pool_held *h = nullptr;
        detail::check(etcdlock_pool_acquire(p_.get(), count, owner.empty() ? nullptr : owner.c_str(), timeout_ms, cancel, &h),
                      "etcdlock_pool_acquire");
        return etcdlock::pool_holding(h);
    }
    /** Adds slots (ids not in the pool yet); returns the pool's size after. */
    size_t add_slots(const std::vector<std::string> &ids) {
        std::vector<const char *> raw = detail::c_strings(ids);
        size_t size = 0;
        detail::check(etcdlock_pool_add_slots(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), &size),
                      "etcdlock_pool_add_slots");
        return size;
    }
    /** Removes slots (a held one goes when its holder releases it); returns the pool's size after. */
    size_t remove_slots(const std::vector<std::string> &ids) {
        std::vector<const char *> raw = detail::c_strings(ids);
        size_t size = 0;
        detail::check(etcdlock_pool_remove_slots(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), &size),
                      "etcdlock_pool_remove_slots");
        return size;
    }
    etcdlock_pool *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit pool(etcdlock_pool *p) : p_(p) {}
    std::unique_ptr<etcdlock_pool, detail::pool_free> p_;
};

inline etcdlock::pool client::pool(const std::string &name, const std::vector<std::string> &slots, int64_t ttl_s,
                                   int64_t reuse_delay_ms) {
    std::vector<const char *> raw = detail::c_strings(slots);
    // A pointer even for no slots: NULL would mean "a pool of 0 numbered slots".
    static const char *const none[1] = {nullptr};
    etcdlock_pool *p = nullptr;
    detail::check(etcdlock_pool_open(p_.get(), name.c_str(), raw.empty() ? none : &raw[0], raw.size(), ttl_s, reuse_delay_ms, &p),
                  "etcdlock_pool_open");
    return etcdlock::pool(p);
}

inline etcdlock::pool client::pool(const std::string &name, size_t size, int64_t ttl_s, int64_t reuse_delay_ms) {
    etcdlock_pool *p = nullptr;
    detail::check(etcdlock_pool_open(p_.get(), name.c_str(), nullptr, size, ttl_s, reuse_delay_ms, &p), "etcdlock_pool_open");
    return etcdlock::pool(p);
}

inline etcdlock::pool client::join_pool(const std::string &name, int64_t ttl_s) {
    etcdlock_pool *p = nullptr;
    detail::check(etcdlock_pool_join(p_.get(), name.c_str(), ttl_s, &p), "etcdlock_pool_join");
    return etcdlock::pool(p);
}

inline std::vector<etcdlock::slot_info> client::inspect_pool(const std::string &name, bool *defined) {
    etcdlock_pool_state *raw = nullptr;
    detail::check(etcdlock_inspect_pool(p_.get(), name.c_str(), &raw), "etcdlock_inspect_pool");
    std::unique_ptr<etcdlock_pool_state, detail::pool_state_free> st(raw);
    if (defined) *defined = raw != nullptr;
    std::vector<etcdlock::slot_info> out;
    for (size_t i = 0; raw && i < raw->n_slots; i++) {
        const etcdlock_slot_info &s = raw->slots[i];
        etcdlock::slot_info copy;
        copy.id = s.id;
        copy.state = s.state;
        copy.token = s.token;
        copy.lease = s.lease;
        copy.ttl_s = s.ttl_s;
        copy.acquisition = s.acquisition;
        copy.owner = s.owner;
        out.push_back(copy);
    }
    return out;
}

} // namespace etcdlock

#endif /* ETCDLOCK_POOL_HPP */
