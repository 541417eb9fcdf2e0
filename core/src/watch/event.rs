//! The changes a watch delivers.

use crate::client::kv::KeyValue;

/// What a [`WatchEvent`] did to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The key was created or its value replaced (`kv.version` is 1 for a creation).
    Put,
    /// The key was deleted, explicitly or by the end of its lease.
    Delete,
}

/// One change. For deletes, `kv` holds the key and the deletion's `mod_revision`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    /// A put or a delete.
    pub event_type: EventType,
    /// The key as the change left it (for a delete, the key and the deletion's revision only).
    pub kv: KeyValue,
    /// The value before this change, when asked for (`WatchOptions::prev_kv`).
    pub prev_kv: Option<KeyValue>,
}

impl WatchEvent {
    /// The revision of the change (`kv.mod_revision`). The changes of one transaction share
    /// it: a watch resumed from the revision + 1 of the last change handled gets what follows
    /// and nothing twice only once every change of that revision was handled.
    pub fn revision(&self) -> i64 {
        self.kv.mod_revision
    }
}

pub(crate) fn convert(e: &etcd_client::Event) -> WatchEvent {
    WatchEvent {
        event_type: match e.event_type() {
            etcd_client::EventType::Put => EventType::Put,
            etcd_client::EventType::Delete => EventType::Delete,
        },
        kv: e.kv().map(KeyValue::from).unwrap_or_default(),
        prev_kv: e.prev_kv().map(KeyValue::from),
    }
}
