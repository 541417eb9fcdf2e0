//! Key-value types shared by the KV calls, watches and locks.

/// A key with its value and metadata, as etcd stores it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyValue {
    /// The full key.
    pub key: Vec<u8>,
    /// Its value (bytes: etcd does not interpret them).
    pub value: Vec<u8>,
    /// Revision of the put that created the key (since its last deletion).
    pub create_revision: i64,
    /// Revision of the last modification.
    pub mod_revision: i64,
    /// Number of modifications since creation.
    pub version: i64,
    /// Lease the key is attached to, 0 for none.
    pub lease: i64,
}

impl From<&etcd_client::KeyValue> for KeyValue {
    fn from(kv: &etcd_client::KeyValue) -> Self {
        KeyValue {
            key: kv.key().to_vec(),
            value: kv.value().to_vec(),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
            version: kv.version(),
            lease: kv.lease(),
        }
    }
}

/// One write in a guarded transaction ([`crate::LockGuard::txn`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Writes `value` at `key`. A non-zero `lease` attaches the key to that lease ID (the key
    /// is deleted when the lease ends); 0, as [`Op::put`] makes it, attaches none.
    Put {
        /// The key to write.
        key: Vec<u8>,
        /// The value to write.
        value: Vec<u8>,
        /// The lease ID to attach the key to, or 0 for none.
        lease: i64,
    },
    /// Deletes `key` (nothing if it does not exist).
    Delete {
        /// The key to delete.
        key: Vec<u8>,
    },
}

impl Op {
    /// A put of `value` at `key`, attached to no lease: the key outlives the lock, as data
    /// written under a lock should.
    pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Op::Put { key: key.into(), value: value.into(), lease: 0 }
    }

    /// A delete of `key`.
    pub fn delete(key: impl Into<Vec<u8>>) -> Self {
        Op::Delete { key: key.into() }
    }

    pub(crate) fn key(&self) -> &[u8] {
        match self {
            Op::Put { key, .. } | Op::Delete { key } => key,
        }
    }

    pub(crate) fn to_txn_op(&self) -> etcd_client::TxnOp {
        match self {
            Op::Put { key, value, lease } => {
                let opts = (*lease != 0).then(|| etcd_client::PutOptions::new().with_lease(*lease));
                etcd_client::TxnOp::put(key.clone(), value.clone(), opts)
            }
            Op::Delete { key } => etcd_client::TxnOp::delete(key.clone(), None),
        }
    }
}

/// The end of the range of every key that starts with `prefix` (etcd's rule: the prefix with
/// its last byte below 0xff raised by one, the bytes after it dropped; all keys for "" or an
/// all-0xff prefix).
pub(crate) fn prefix_range_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}
