/*
 * etcdlock_lockset.hpp: lock sets in the C++11 RAII wrapper (hand-written, not generated). Part of
 * etcdlock.hpp, which includes it: include that one. Handles are move-only and freed by their
 * destructors: a holding still held is released (etcdlock_lock_set_held_free). Failures throw
 * etcdlock::error.
 *
 *   etcdlock::lock_set accounts = client.lock_set({"acct/1", "acct/2"}, 10);  // any order: no deadlock
 *   {
 *       etcdlock::lock_set_holding locks = accounts.acquire(5000);           // both, or throws
 *       locks.put("ledger/acct-1", "95");                                   // fenced by both names
 *       std::string fence = locks.fence("acct/1");                           // for a database to check
 *   }                                                                        // released here (one Txn)
 *   etcdlock::lock_set job = client.lock_set({etcdlock::set_member::read("cfg"), "jobs/a",
 *                                             etcdlock::set_member::permit("gpus", 4)}, 10);
 */
#ifndef ETCDLOCK_LOCKSET_HPP
#define ETCDLOCK_LOCKSET_HPP

#include "etcdlock.hpp"

namespace etcdlock {

namespace detail {
struct lock_set_free { void operator()(etcdlock_lock_set *p) const noexcept { etcdlock_lock_set_free(p); } };
struct lock_set_held_free { void operator()(etcdlock_lock_set_held *p) const noexcept { etcdlock_lock_set_held_free(p); } };
} // namespace detail

/** One name of a lock set and how the set holds it; a plain name is exclusive. */
struct set_member {
    std::string name;
    /** ETCDLOCK_SET_EXCLUSIVE, _READ, _WRITE or _PERMIT. */
    int mode;
    /** ETCDLOCK_SET_PERMIT: the semaphore's number of permits; 0 otherwise. */
    uint32_t permits;
    set_member(const char *n) : name(n), mode(ETCDLOCK_SET_EXCLUSIVE), permits(0) {}
    set_member(const std::string &n) : name(n), mode(ETCDLOCK_SET_EXCLUSIVE), permits(0) {}
    static set_member exclusive(const std::string &n) { return set_member(n); }
    /** A read-write lock's read (shared with other readers). */
    static set_member read(const std::string &n) { return with(n, ETCDLOCK_SET_READ, 0); }
    /** A read-write lock's write. */
    static set_member write(const std::string &n) { return with(n, ETCDLOCK_SET_WRITE, 0); }
    /** One of `permits` permits of a semaphore. */
    static set_member permit(const std::string &n, uint32_t permits) { return with(n, ETCDLOCK_SET_PERMIT, permits); }

private:
    static set_member with(const std::string &n, int mode, uint32_t permits) {
        set_member m(n);
        m.mode = mode;
        m.permits = permits;
        return m;
    }
};

/** Every member of a lock set, held together (lock_set::acquire): one fencing token, writes
 *  fenced by every member, one Txn to release. The destructor releases a holding still held. */
class lock_set_holding {
public:
    /** The create revision every member's key shares: larger than every earlier holder's token
     *  of each member name. */
    int64_t fencing_token() const noexcept { return etcdlock_lock_set_held_fencing_token(p_.get()); }
    /** The member names, in the set's order. */
    std::vector<std::string> names() const {
        size_t n = 0;
        const char *const *s = etcdlock_lock_set_held_names(p_.get(), &n);
        std::vector<std::string> out;
        for (size_t i = 0; s && i < n; i++) out.push_back(s[i]);
        return out;
    }
    /** Each member's queue key in etcd, in the set's order. */
    std::vector<std::string> keys() const {
        std::vector<std::string> out;
        size_t len = 0;
        for (size_t i = 0; const uint8_t *k = etcdlock_lock_set_held_key(p_.get(), i, &len); i++)
            out.push_back(std::string(reinterpret_cast<const char *>(k), len));
        return out;
    }
    int64_t lease_id() const noexcept { return etcdlock_lock_set_held_lease_id(p_.get()); }
    /** Cheap local check: not released, no member known lost. */
    bool is_held() const noexcept { return etcdlock_lock_set_held_is_held(p_.get()); }
    /** Why the set was lost (an ETCDLOCK_LOST_* reason), or 0. */
    int lost_reason() const noexcept { return etcdlock_lock_set_held_lost_reason(p_.get()); }
    /** One call's view of the hold, as lock::health(). */
    etcdlock_health health() const {
        etcdlock_health h;
        detail::check(etcdlock_lock_set_held_health(p_.get(), &h), "etcdlock_lock_set_held_health");
        return h;
    }
    /** Writes `value` at `key` only while every member is held (throws ETCDLOCK_E_NOT_HELD
     *  otherwise, nothing written). A key under a member's `<name>/` throws INVALID_ARGUMENT. */
    void put(const std::string &key, const std::string &value) {
        detail::check(etcdlock_lock_set_held_put(p_.get(), detail::bytes(key), key.size(), detail::bytes(value), value.size()),
                      "etcdlock_lock_set_held_put");
    }
    /** Deletes `key` only while every member is held. */
    void del(const std::string &key) {
        detail::check(etcdlock_lock_set_held_delete(p_.get(), detail::bytes(key), key.size()), "etcdlock_lock_set_held_delete");
    }
    /** Applies `ops` (1 to 127) in one transaction, only while every member is held; returns its
     *  revision. */
    int64_t txn(const std::vector<op> &ops) {
        std::vector<etcdlock_op> raw;
        for (size_t i = 0; i < ops.size(); i++) {
            etcdlock_op r = {ops[i].kind, detail::bytes(ops[i].key), ops[i].key.size(), detail::bytes(ops[i].value),
                             ops[i].value.size()};
            raw.push_back(r);
        }
        int64_t rev = 0;
        detail::check(etcdlock_lock_set_held_txn(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), &rev),
                      "etcdlock_lock_set_held_txn");
        return rev;
    }
    /** Member `name`'s fence in its string form (client::check_fence checks it); throws
     *  ETCDLOCK_E_NOT_HELD once released or lost, INVALID_ARGUMENT for a name not in the set. */
    std::string fence(const std::string &name) const {
        char *f = nullptr;
        detail::check(etcdlock_lock_set_held_fence(p_.get(), name.c_str(), &f), "etcdlock_lock_set_held_fence");
        return detail::take_string(f);
    }
    /** Releases every member in one Txn; throws ETCDLOCK_E_NOT_HELD if already released or a
     *  member was lost (the keys left are deleted either way). */
    void release() { detail::check(etcdlock_lock_set_held_release(p_.get()), "etcdlock_lock_set_held_release"); }
    /** The C handle, for calls this wrapper does not cover (etcdlock_lock_set_held_on_lost). */
    etcdlock_lock_set_held *get() const noexcept { return p_.get(); }

private:
    friend class lock_set;
    explicit lock_set_holding(etcdlock_lock_set_held *p) : p_(p) {}
    std::unique_ptr<etcdlock_lock_set_held, detail::lock_set_held_free> p_;
};

/** A handle on a lock set (client::lock_set); sends nothing until acquired. Its holdings
 *  outlive it. */
class lock_set {
public:
    /** Takes every member, waiting at most `timeout_ms` for the whole set (0: try once, throws
     *  ETCDLOCK_E_WOULD_BLOCK; ETCDLOCK_WAIT_FOREVER; otherwise throws ETCDLOCK_E_LOCK_TIMEOUT). On
     *  any failure no key is left in any queue. */
    etcdlock::lock_set_holding acquire(int64_t timeout_ms, const etcdlock_cancel *cancel = nullptr) {
        etcdlock_lock_set_held *h = nullptr;
        detail::check(etcdlock_lock_set_acquire(p_.get(), timeout_ms, cancel, &h), "etcdlock_lock_set_acquire");
        return etcdlock::lock_set_holding(h);
    }
    /** The number of members. */
    size_t size() const noexcept { return etcdlock_lock_set_len(p_.get()); }
    etcdlock_lock_set *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit lock_set(etcdlock_lock_set *p) : p_(p) {}
    std::unique_ptr<etcdlock_lock_set, detail::lock_set_free> p_;
};

inline etcdlock::lock_set client::lock_set(const std::vector<etcdlock::set_member> &members, int64_t ttl_s) {
    std::vector<etcdlock_set_member> raw;
    for (size_t i = 0; i < members.size(); i++) {
        etcdlock_set_member m = {members[i].name.c_str(), members[i].mode, members[i].permits};
        raw.push_back(m);
    }
    etcdlock_lock_set *s = nullptr;
    detail::check(etcdlock_lock_set_open(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), ttl_s, &s), "etcdlock_lock_set_open");
    return etcdlock::lock_set(s);
}

} // namespace etcdlock

#endif /* ETCDLOCK_LOCKSET_HPP */
