//! Per-client hints on the shape of each lock name's next enqueue.

use std::sync::atomic::AtomicBool;

/// Whether a lock name's last enqueue on this client found others queued, which decides the
/// shape of its next enqueue (see `Mutex::enqueue`). Kept per client, not per handle: the
/// C and Node bindings make a handle per call. Names share 256 slots by hash: a collision
/// costs a few microseconds, never correctness.
pub(crate) struct QueueHints(Box<[AtomicBool]>);

impl Default for QueueHints {
    fn default() -> Self {
        QueueHints((0..256).map(|_| AtomicBool::new(false)).collect())
    }
}

impl QueueHints {
    pub(super) fn get(&self, name_hash: u64) -> &AtomicBool {
        &self.0[name_hash as usize % self.0.len()]
    }
}

pub(super) fn hash_name(name: &[u8]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(name)
}
