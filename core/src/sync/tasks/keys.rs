//! Where a task queue keeps what in etcd, and how its values are written.
//!
//! Under the queue's name `Q` (every key durable unless said otherwise):
//! - `Q/items/<priority>/<seq>`: an item not yet acked, its value `<id>\n<payload>`. `<priority>`
//!   is 8 hex digits that sort the highest priority first; `<seq>` 16 hex digits, the revision at
//!   which etcd committed the put's first step, so that key order is claim order.
//! - `Q/id/<id>`: the item's id: empty while the put is between its two steps (then on the
//!   producer's lease, so that a producer that died there leaves nothing), else `<priority>/<seq>`
//!   while the item is queued or `dead` once it is in the dead letters.
//! - `Q/attempts/<priority>/<seq>`: its version counts the deliveries.
//! - `Q/claim/<priority>/<seq>/<lease hex>`: a claim, the queue key of a lock named
//!   `Q/claim/<priority>/<seq>` on the worker's lease (its create revision is the task's fencing
//!   token); or, with the value `delayed`, on a lease of the delay's TTL that nobody keeps alive.
//!   An item with any key here is not available; when the key goes (ack, nack, the worker's lease
//!   ended, the delay's lease expired) it is, with nothing else to do.
//! - `Q/workers/<lease hex>`: workers waiting to claim, the queue of a lock named `Q/workers`:
//!   the one that holds it takes the next item, the others wait behind it in order.
//! - `Q/dead/<id>`: a dead letter, `<attempts>\n<priority>\n<payload>`.

use crate::error::{Error, Result};

/// The value of a claim key that delays an item rather than holding it.
pub(crate) const DELAYED: &[u8] = b"delayed";
/// The value of the id key of a dead item.
pub(crate) const DEAD: &[u8] = b"dead";

/// The longest id.
pub const MAX_TASK_ID_LEN: usize = 256;
/// The largest payload: etcd's default request limit (1.5 MiB) less room for the keys and ids
/// that travel with it.
pub const MAX_TASK_PAYLOAD_LEN: usize = 1536 * 1024 - 8 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct Keys {
    name: Vec<u8>,
}

impl Keys {
    pub fn new(name: &[u8]) -> Keys {
        Keys { name: name.to_vec() }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    fn under(&self, part: &str, rest: &[u8]) -> Vec<u8> {
        let mut k = self.name.clone();
        k.push(b'/');
        k.extend_from_slice(part.as_bytes());
        k.push(b'/');
        k.extend_from_slice(rest);
        k
    }

    pub fn items(&self) -> Vec<u8> {
        self.under("items", b"")
    }
    pub fn item(&self, slot: &[u8]) -> Vec<u8> {
        self.under("items", slot)
    }
    pub fn id(&self, id: &str) -> Vec<u8> {
        self.under("id", id.as_bytes())
    }
    pub fn attempts(&self, slot: &[u8]) -> Vec<u8> {
        self.under("attempts", slot)
    }
    pub fn claims(&self) -> Vec<u8> {
        self.under("claim", b"")
    }
    /// The name of the lock whose holder has claimed the item at `slot`.
    pub fn claim_lock(&self, slot: &[u8]) -> Vec<u8> {
        self.under("claim", slot)
    }
    /// The key that delays the item at `slot`, on the delay's lease `lease`.
    pub fn delay_claim(&self, slot: &[u8], lease: i64) -> Vec<u8> {
        let mut k = self.claim_lock(slot);
        k.extend_from_slice(format!("/{lease:x}").as_bytes());
        k
    }
    pub fn workers_lock(&self) -> Vec<u8> {
        let mut k = self.name.clone();
        k.extend_from_slice(b"/workers");
        k
    }
    pub fn dead_prefix(&self) -> Vec<u8> {
        self.under("dead", b"")
    }
    pub fn dead(&self, id: &str) -> Vec<u8> {
        self.under("dead", id.as_bytes())
    }

    /// The item slot (`<priority>/<seq>`) of a key under `Q/items/` or `Q/claim/`.
    pub fn slot_of<'a>(&self, prefix: &[u8], key: &'a [u8]) -> Option<&'a [u8]> {
        let rest = key.strip_prefix(prefix)?;
        (rest.len() >= SLOT_LEN && rest[8] == b'/').then(|| &rest[..SLOT_LEN])
    }
}

/// `<priority 8 hex>/<seq 16 hex>`.
pub(crate) const SLOT_LEN: usize = 8 + 1 + 16;

pub(crate) fn slot(priority: i32, seq: i64) -> Vec<u8> {
    // Order-preserving as unsigned (flip the sign bit), then inverted: the highest first.
    let p = !((priority as u32) ^ 0x8000_0000);
    format!("{p:08x}/{seq:016x}").into_bytes()
}

pub(crate) fn priority_of(slot: &[u8]) -> i32 {
    let hex = std::str::from_utf8(&slot[..8]).unwrap_or("7fffffff");
    let p = u32::from_str_radix(hex, 16).unwrap_or(0x7fff_ffff);
    (!p ^ 0x8000_0000) as i32
}

pub(crate) fn encode_item(id: &str, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(id.len() + 1 + payload.len());
    v.extend_from_slice(id.as_bytes());
    v.push(b'\n');
    v.extend_from_slice(payload);
    v
}

/// (id, payload) of an item's value.
pub(crate) fn decode_item(value: &[u8]) -> Option<(String, Vec<u8>)> {
    let nl = value.iter().position(|&b| b == b'\n')?;
    Some((String::from_utf8(value[..nl].to_vec()).ok()?, value[nl + 1..].to_vec()))
}

pub(crate) fn encode_dead(attempts: u32, priority: i32, payload: &[u8]) -> Vec<u8> {
    let mut v = format!("{attempts}\n{priority}\n").into_bytes();
    v.extend_from_slice(payload);
    v
}

/// (attempts, priority, payload) of a dead letter.
pub(crate) fn decode_dead(value: &[u8]) -> Option<(u32, i32, Vec<u8>)> {
    let mut parts = value.splitn(3, |&b| b == b'\n');
    let attempts = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    let priority = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    Some((attempts, priority, parts.next()?.to_vec()))
}

/// An id: 1 to [`MAX_TASK_ID_LEN`] bytes of UTF-8, no newline and no NUL.
pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_TASK_ID_LEN {
        return Err(Error::invalid(format!("a task id must be 1 to {MAX_TASK_ID_LEN} bytes, got {}", id.len())));
    }
    if id.contains(['\n', '\0']) {
        return Err(Error::invalid("a task id must not contain a newline or a NUL byte"));
    }
    Ok(())
}

pub(crate) fn check_payload(payload: &[u8]) -> Result<()> {
    if payload.len() > MAX_TASK_PAYLOAD_LEN {
        return Err(Error::invalid(format!(
            "a task payload must be at most {MAX_TASK_PAYLOAD_LEN} bytes (etcd's default request limit less room for its keys), got {}",
            payload.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_sort_by_priority_first_then_sequence() {
        let mut slots = vec![slot(0, 5), slot(-3, 1), slot(7, 9), slot(7, 2), slot(i32::MIN, 0), slot(i32::MAX, 100), slot(0, 4)];
        slots.sort();
        let order: Vec<(i32, &[u8])> = slots.iter().map(|s| (priority_of(s), &s[9..])).collect();
        let prios: Vec<i32> = order.iter().map(|o| o.0).collect();
        assert_eq!(prios, vec![i32::MAX, 7, 7, 0, 0, -3, i32::MIN]);
        assert!(slots[1] < slots[2] && slots[3] < slots[4]);
        assert_eq!(slots[1], slot(7, 2));
    }

    #[test]
    fn values_round_trip() {
        assert_eq!(decode_item(&encode_item("a b", b"x\ny")), Some(("a b".into(), b"x\ny".to_vec())));
        assert_eq!(decode_dead(&encode_dead(5, -2, b"p\nq")), Some((5, -2, b"p\nq".to_vec())));
        let k = Keys::new(b"q");
        let s = slot(1, 42);
        let mut claim = k.claim_lock(&s);
        claim.extend_from_slice(b"/1a2b");
        assert_eq!(k.slot_of(&k.claims(), &claim), Some(&s[..]));
        assert_eq!(k.slot_of(&k.items(), &k.item(&s)), Some(&s[..]));
        assert!(check_id("").is_err() && check_id("a\nb").is_err() && check_id("ok").is_ok());
    }
}
