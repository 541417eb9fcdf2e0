/*
 * etcdlock_tasks.hpp: the task queue and once-per-period jobs of the C++11 RAII wrapper
 * (hand-written, not generated). Part of etcdlock.hpp, which includes it: include that one.
 * Handles are move-only and freed by their destructors: a task neither acked nor nacked is
 * given back (etcdlock_task_free: a nack without delay), a once slot neither done nor released
 * is released (etcdlock_once_free), as a lock still held is released. Failures throw
 * etcdlock::error.
 *
 *   etcdlock::task_queue q = client.queue("jobs/resize", 10, 5);   // TTL 10 s, 5 deliveries
 *   q.put("img-17.png", "img-17");                                  // idempotent by id
 *   {
 *       etcdlock::task t = q.claim(5000);                           // wait <= 5 s
 *       ... t.payload() ...
 *       t.ack_with({etcdlock::op::put("results/img-17", "ok")});    // the result and the ack
 *   }                                                               // not acked: given back
 *   etcdlock::once_slot slot = client.once("reports/daily", 86400000, 10);
 *   if (slot) { ... slot.done(); }                                  // empty: not ours
 */
#ifndef ETCDLOCK_TASKS_HPP
#define ETCDLOCK_TASKS_HPP

#include "etcdlock.hpp"

#include <utility>

namespace etcdlock {

namespace detail {
struct queue_free { void operator()(etcdlock_queue *p) const noexcept { etcdlock_queue_free(p); } };
struct task_free { void operator()(etcdlock_task *p) const noexcept { etcdlock_task_free(p); } };
struct once_free { void operator()(etcdlock_once_slot *p) const noexcept { etcdlock_once_free(p); } };
struct counts_free { void operator()(etcdlock_queue_counts *p) const noexcept { etcdlock_queue_counts_free(p); } };
struct dead_list_free {
    void operator()(etcdlock_dead_task_list *p) const noexcept { etcdlock_dead_task_list_free(p); }
};
inline std::string text(const uint8_t *p, size_t len) {
    return p ? std::string(reinterpret_cast<const char *>(p), len) : std::string();
}
} // namespace detail

/** One write of the caller's own in an ack's transaction (task::ack_with). */
struct op {
    /** ETCDLOCK_OP_PUT or ETCDLOCK_OP_DELETE. */
    int kind;
    std::string key;
    /** The put's value. */
    std::string value;
    static op put(const std::string &key, const std::string &value) {
        op o = {ETCDLOCK_OP_PUT, key, value};
        return o;
    }
    static op del(const std::string &key) {
        op o = {ETCDLOCK_OP_DELETE, key, std::string()};
        return o;
    }
};

/** A queue's items by state, read at one revision (task_queue::stats). */
struct queue_stats {
    /** Claimable now. */
    uint64_t pending = 0;
    /** `pending` by priority, the highest first: (priority, count). */
    std::vector<std::pair<int32_t, uint64_t> > by_priority;
    /** Put or given back with a delay that has not passed. */
    uint64_t delayed = 0;
    /** Held by a worker. */
    uint64_t claimed = 0;
    /** In the dead letters. */
    uint64_t dead = 0;
    /** The etcd revision the counts are at. */
    int64_t revision = 0;
};

/** An item in the dead letters (task_queue::dead). */
struct dead_task {
    std::string id;
    std::string payload;
    /** The deliveries it had. */
    uint32_t attempts = 0;
    int32_t priority = 0;
};

/** A claimed task (task_queue::claim): its claim lives on the client's lease, kept alive while
 *  it is held. ack() ends it by deleting the item, nack() by giving it back; the destructor
 *  gives back one neither acked nor nacked, so an exception that unwinds past it hands the item
 *  to the next worker. */
class task {
public:
    /** The item's id (the one given to put, or the random one it made). */
    std::string id() const {
        const char *s = etcdlock_task_id(p_.get());
        return s ? std::string(s) : std::string();
    }
    std::string payload() const {
        size_t len = 0;
        const uint8_t *b = etcdlock_task_payload(p_.get(), &len);
        return detail::text(b, len);
    }
    int32_t priority() const noexcept { return etcdlock_task_priority(p_.get()); }
    /** Deliveries of the item so far, this one included (1 the first time). */
    uint32_t attempts() const noexcept { return etcdlock_task_attempts(p_.get()); }
    /** The claim key's create revision: larger for every later claim of any item. */
    int64_t fencing_token() const noexcept { return etcdlock_task_fencing_token(p_.get()); }
    /** The claim's fence in its string form (the claim's lock `<queue>/claim/<slot>` at the
     *  claim's token), for client::check_fence or a database's mark; throws
     *  ETCDLOCK_E_NOT_HELD once the task was acked, nacked or its claim lost. */
    std::string fence() const {
        char *f = nullptr;
        detail::check(etcdlock_task_fence(p_.get(), &f), "etcdlock_task_fence");
        return detail::take_string(f);
    }
    /** Cheap local check: neither acked, nacked nor lost. */
    bool is_held() const noexcept { return etcdlock_task_is_held(p_.get()); }
    /** Why the claim was lost (an ETCDLOCK_LOST_* reason), or 0. */
    int lost_reason() const noexcept { return etcdlock_task_lost_reason(p_.get()); }
    /** One call's view of the hold, as lock::health(). */
    etcdlock_health health() const {
        etcdlock_health h;
        detail::check(etcdlock_task_health(p_.get(), &h), "etcdlock_task_health");
        return h;
    }
    /** Writes `value` at `key` only while the claim holds (throws ETCDLOCK_E_NOT_HELD otherwise,
     *  nothing written). A key under the queue's own `<name>/` throws ETCDLOCK_E_INVALID_ARGUMENT. */
    void put(const std::string &key, const std::string &value) {
        detail::check(etcdlock_task_put(p_.get(), detail::bytes(key), key.size(), detail::bytes(value), value.size()),
                      "etcdlock_task_put");
    }
    /** Deletes `key` only while the claim holds. */
    void del(const std::string &key) {
        detail::check(etcdlock_task_delete(p_.get(), detail::bytes(key), key.size()), "etcdlock_task_delete");
    }
    /** Deletes the item and its claim in one transaction that applies only while the claim
     *  holds; throws ETCDLOCK_E_NOT_HELD, nothing changed, once it was lost or ended. Returns the
     *  ack's revision. */
    int64_t ack() { return ack_with(std::vector<op>()); }
    /** ack() with writes of your own in the same transaction: the result stored and the item
     *  acked together, or neither. A bad op throws ETCDLOCK_E_INVALID_ARGUMENT (still held). */
    int64_t ack_with(const std::vector<op> &ops) {
        std::vector<etcdlock_op> raw;
        raw.reserve(ops.size());
        for (size_t i = 0; i < ops.size(); i++) {
            const op &o = ops[i];
            etcdlock_op r = {o.kind, detail::bytes(o.key), o.key.size(), detail::bytes(o.value), o.value.size()};
            raw.push_back(r);
        }
        int64_t rev = 0;
        detail::check(etcdlock_task_ack_with(p_.get(), raw.empty() ? nullptr : &raw[0], raw.size(), &rev),
                      "etcdlock_task_ack_with");
        return rev;
    }
    /** Gives the item back: claimable at once (0) or not before `delay_ms` (whole seconds,
     *  rounded up); after its last delivery, to the dead letters. Throws ETCDLOCK_E_NOT_HELD once
     *  it was lost or ended. */
    void nack(int64_t delay_ms = 0) { detail::check(etcdlock_task_nack(p_.get(), delay_ms), "etcdlock_task_nack"); }
    /** The C handle, for calls this wrapper does not cover (etcdlock_task_on_lost). */
    etcdlock_task *get() const noexcept { return p_.get(); }

private:
    friend class task_queue;
    explicit task(etcdlock_task *p) : p_(p) {}
    std::unique_ptr<etcdlock_task, detail::task_free> p_;
};

/** A handle on a task queue (client::queue); sends nothing until used. Its tasks outlive it. */
class task_queue {
public:
    /** Adds an item; returns its id. `id` empty: a random one; otherwise a put of an item that
     *  exists (pending, claimed, delayed or dead) changes nothing. Higher `priority` first; not
     *  claimable before `delay_ms` (0: at once). */
    std::string put(const std::string &payload, const std::string &id = std::string(), int32_t priority = 0,
                    int64_t delay_ms = 0) {
        char *out = nullptr;
        detail::check(etcdlock_queue_put(p_.get(), detail::bytes(payload), payload.size(), id.empty() ? nullptr : id.c_str(),
                                         priority, delay_ms, &out),
                      "etcdlock_queue_put");
        std::string got(out ? out : "");
        etcdlock_string_free(out);
        return got;
    }
    /** Claims the next item, waiting at most `timeout_ms` (0: try once, throws
     *  ETCDLOCK_E_WOULD_BLOCK; ETCDLOCK_WAIT_FOREVER; otherwise throws ETCDLOCK_E_LOCK_TIMEOUT).
     *  `worker` (at most 4096 bytes) is stored in the claim key for `etcdlock status`. */
    etcdlock::task claim(int64_t timeout_ms, const etcdlock_cancel *cancel = nullptr,
                         const std::string &worker = std::string()) {
        etcdlock_task *t = nullptr;
        detail::check(etcdlock_queue_claim(p_.get(), timeout_ms, cancel, worker.empty() ? nullptr : detail::bytes(worker),
                                           worker.size(), &t),
                      "etcdlock_queue_claim");
        return etcdlock::task(t);
    }
    /** Counts of pending (by priority), delayed, claimed and dead items at one revision. */
    queue_stats stats() {
        etcdlock_queue_counts *raw = nullptr;
        detail::check(etcdlock_queue_stats(p_.get(), &raw), "etcdlock_queue_stats");
        std::unique_ptr<etcdlock_queue_counts, detail::counts_free> c(raw);
        queue_stats s;
        s.pending = c->pending;
        for (size_t i = 0; i < c->n_by_priority; i++) {
            s.by_priority.push_back(std::make_pair(c->by_priority[i].priority, c->by_priority[i].count));
        }
        s.delayed = c->delayed;
        s.claimed = c->claimed;
        s.dead = c->dead;
        s.revision = c->revision;
        return s;
    }
    /** The dead letters, in id order. */
    std::vector<dead_task> dead() {
        etcdlock_dead_task_list *raw = nullptr;
        detail::check(etcdlock_queue_dead(p_.get(), &raw), "etcdlock_queue_dead");
        std::unique_ptr<etcdlock_dead_task_list, detail::dead_list_free> l(raw);
        std::vector<dead_task> out;
        for (size_t i = 0; i < l->n_tasks; i++) {
            dead_task d;
            d.id = l->tasks[i].id;
            d.payload = detail::text(l->tasks[i].payload, l->tasks[i].payload_len);
            d.attempts = l->tasks[i].attempts;
            d.priority = l->tasks[i].priority;
            out.push_back(d);
        }
        return out;
    }
    /** Puts the dead item `id` back, its attempts at 0; false if no dead item has that id. */
    bool requeue_dead(const std::string &id) {
        bool found = false;
        detail::check(etcdlock_queue_requeue_dead(p_.get(), id.c_str(), &found), "etcdlock_queue_requeue_dead");
        return found;
    }
    /** Deletes the dead item `id`; false if no dead item has that id. */
    bool delete_dead(const std::string &id) {
        bool found = false;
        detail::check(etcdlock_queue_delete_dead(p_.get(), id.c_str(), &found), "etcdlock_queue_delete_dead");
        return found;
    }
    etcdlock_queue *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit task_queue(etcdlock_queue *p) : p_(p) {}
    std::unique_ptr<etcdlock_queue, detail::queue_free> p_;
};

/** The period's slot of a once-per-period job (client::once): true when this caller won it
 *  (run the job, then done(); release() if it failed), false (empty) when the period's job is
 *  done or another caller runs it. The destructor releases one neither done nor released. */
class once_slot {
public:
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /** Its period boundary is `index * every_ms` after the epoch. */
    int64_t index() const noexcept { return etcdlock_once_index(p_.get()); }
    int64_t fencing_token() const noexcept { return etcdlock_once_fencing_token(p_.get()); }
    /** Cheap local check: neither done, released nor lost. */
    bool is_held() const noexcept { return etcdlock_once_is_held(p_.get()); }
    /** Why the claim was lost (an ETCDLOCK_LOST_* reason), or 0. */
    int lost_reason() const noexcept { return etcdlock_once_lost_reason(p_.get()); }
    /** One call's view of the hold, as lock::health(). */
    etcdlock_health health() const {
        etcdlock_health h;
        detail::check(etcdlock_once_health(p_.get(), &h), "etcdlock_once_health");
        return h;
    }
    /** Writes `value` at `key` only while the claim holds (throws ETCDLOCK_E_NOT_HELD otherwise,
     *  nothing written). A key under the job's own `<name>/` throws ETCDLOCK_E_INVALID_ARGUMENT. */
    void put(const std::string &key, const std::string &value) {
        detail::check(etcdlock_once_put(p_.get(), detail::bytes(key), key.size(), detail::bytes(value), value.size()),
                      "etcdlock_once_put");
    }
    /** Deletes `key` only while the claim holds. */
    void del(const std::string &key) {
        detail::check(etcdlock_once_delete(p_.get(), detail::bytes(key), key.size()), "etcdlock_once_delete");
    }
    /** Marks the period's job done and ends the claim, fenced: throws ETCDLOCK_E_NOT_HELD,
     *  nothing marked, once the claim was lost or ended. */
    void done() { detail::check(etcdlock_once_done(p_.get()), "etcdlock_once_done"); }
    /** Ends the claim without the mark (the job failed): the next trigger runs it. */
    void release() { detail::check(etcdlock_once_release(p_.get()), "etcdlock_once_release"); }
    /** The C handle (etcdlock_once_on_lost); NULL when empty. */
    etcdlock_once_slot *get() const noexcept { return p_.get(); }

private:
    friend class client;
    explicit once_slot(etcdlock_once_slot *p) : p_(p) {}
    std::unique_ptr<etcdlock_once_slot, detail::once_free> p_;
};

inline etcdlock::task_queue client::queue(const std::string &name, int64_t ttl_s, uint32_t max_attempts,
                                          int64_t max_processing_ms) {
    etcdlock_queue *q = nullptr;
    detail::check(etcdlock_queue_open_with_max_processing(p_.get(), name.c_str(), ttl_s, max_attempts, max_processing_ms, &q),
                  "etcdlock_queue_open_with_max_processing");
    return etcdlock::task_queue(q);
}

inline etcdlock::once_slot client::once(const std::string &name, int64_t every_ms, int64_t ttl_s, int64_t at_unix_ms,
                                        uint32_t keep_periods) {
    etcdlock_once_slot *s = nullptr;
    detail::check(etcdlock_once(p_.get(), name.c_str(), every_ms, ttl_s, at_unix_ms, keep_periods, &s), "etcdlock_once");
    return etcdlock::once_slot(s);
}

} // namespace etcdlock

#endif /* ETCDLOCK_TASKS_HPP */
