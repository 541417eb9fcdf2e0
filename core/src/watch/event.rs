//! The changes a watch delivers.

use crate::client::kv::KeyValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Put,
    Delete,
}

/// One change. For deletes, `kv` holds the key and the deletion's `mod_revision`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    pub event_type: EventType,
    pub kv: KeyValue,
    /// The value before this change, when asked for (`WatchOptions::prev_kv`).
    pub prev_kv: Option<KeyValue>,
}

impl WatchEvent {
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
