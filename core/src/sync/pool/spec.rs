//! A pool's definition, stored in etcd by its first participant (`<name>/spec`): the slot ids
//! and the reuse delay. Every later participant must give the same; `add_slots` and
//! `remove_slots` change it in place.

use crate::error::{Error, Result};
use std::time::Duration;

/// The most slots a pool may have.
pub const MAX_POOL_SLOTS: usize = 1024;
/// The longest slot id, in bytes.
pub const MAX_SLOT_ID_LEN: usize = 128;

/// What a pool is: its slots, in order, and how long a dead holder's slot rests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    pub(crate) slots: Vec<String>,
    pub(crate) reuse_delay: Duration,
}

impl Spec {
    /// `reuse_delay_ms=<ms>` on the first line, then one slot id per line.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = format!("reuse_delay_ms={}", self.reuse_delay.as_millis());
        for s in &self.slots {
            v.push('\n');
            v.push_str(s);
        }
        v.into_bytes()
    }

    pub(crate) fn decode(value: &[u8]) -> Option<Spec> {
        let text = std::str::from_utf8(value).ok()?;
        let mut lines = text.split('\n');
        let ms: u64 = lines.next()?.strip_prefix("reuse_delay_ms=")?.parse().ok()?;
        Some(Spec { slots: lines.map(str::to_string).collect(), reuse_delay: Duration::from_millis(ms) })
    }

    pub(crate) fn has(&self, slot: &str) -> bool {
        self.slots.iter().any(|s| s == slot)
    }

    /// How it reads in an error message.
    pub(crate) fn describe(&self) -> String {
        let shown: Vec<&str> = self.slots.iter().take(8).map(String::as_str).collect();
        let more = if self.slots.len() > 8 { format!(" and {} more", self.slots.len() - 8) } else { String::new() };
        format!("slots [{}{more}] with reuse_delay {:?}", shown.join(", "), self.reuse_delay)
    }
}

/// Checks slot ids: 1 to [`MAX_SLOT_ID_LEN`] bytes, no `/` or newline, no duplicates, and at
/// least one and at most [`MAX_POOL_SLOTS`] of them (`min` 0 for a change's list).
pub(crate) fn check_slots(slots: &[String], min: usize) -> Result<()> {
    if slots.len() < min || slots.len() > MAX_POOL_SLOTS {
        return Err(Error::invalid(format!("a pool has 1 to {MAX_POOL_SLOTS} slots, got {}", slots.len())));
    }
    let mut seen = std::collections::HashSet::new();
    for s in slots {
        if s.is_empty() || s.len() > MAX_SLOT_ID_LEN || s.contains('/') || s.contains('\n') {
            return Err(Error::invalid(format!("a slot id is 1 to {MAX_SLOT_ID_LEN} bytes without '/' or a newline, got {s:?}")));
        }
        if !seen.insert(s.as_str()) {
            return Err(Error::invalid(format!("slot id {s:?} appears twice")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_travels_as_text() {
        let s = Spec { slots: vec!["gpu0".into(), "gpu1".into()], reuse_delay: Duration::from_millis(1500) };
        assert_eq!(s.encode(), b"reuse_delay_ms=1500\ngpu0\ngpu1");
        assert_eq!(Spec::decode(&s.encode()), Some(s));
        assert_eq!(Spec::decode(b"gpu0"), None);
    }

    #[test]
    fn slot_ids_are_checked() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_slots(&ids(&["a", "b"]), 1).is_ok());
        for bad in [ids(&[]), ids(&[""]), ids(&["a/b"]), ids(&["a", "a"]), ids(&["x\ny"])] {
            assert!(check_slots(&bad, 1).is_err(), "{bad:?}");
        }
    }
}
