//! Replacing the value of a key of ours (a lock's queue key, a leader's, a registration's) so
//! that the values land in the order they were written.
//!
//! Such a put is idempotent and may therefore be sent twice (to a second member when the first
//! stays silent, or again after a lost reply), and a copy can be applied seconds later: etcd
//! cannot cancel a proposal it has forwarded to its leader. A put fenced only on the key being
//! ours would then let an older value overwrite a newer one (a leader's proclamation going back).
//! Each put here also compares the key's mod revision with that of the last write its writer
//! knows of, so a late copy of an earlier put finds the key changed and does nothing.

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};

/// How often a put is tried again when the key changed under it (another writer).
const TRIES: usize = 3;

/// One writer's puts to one key.
pub(crate) struct OrderedPut<'a> {
    pub client: &'a Client,
    pub key: &'a [u8],
    /// The compare that says the key is still ours (its create revision, or its lease).
    pub ours: Compare,
    /// The same rule, for the key as read back.
    pub is_ours: &'a (dyn Fn(&KeyValue) -> bool + Sync),
    pub lease: i64,
}

impl OrderedPut<'_> {
    /// Puts `value` if the key is ours and unchanged since `last` (the mod revision of the
    /// writer's last write, 0 when unknown), and moves `last` to this write's revision. `None`
    /// when the key is not ours (gone, or another's). A key changed by someone else meanwhile
    /// (or when `last` was unknown) is read with the failed compare, and put again on top of it.
    pub async fn put(&self, value: &[u8], last: &mut i64) -> Result<Option<i64>> {
        for _ in 0..TRIES {
            let txn = || {
                Txn::new()
                    .when([self.ours.clone(), Compare::mod_revision(self.key, CompareOp::Equal, *last)])
                    .and_then([TxnOp::put(self.key, value, Some(PutOptions::new().with_lease(self.lease)))])
                    .or_else([TxnOp::get(self.key, None)])
            };
            let resp = self.client.txn(txn, true).await?;
            if resp.succeeded() {
                *last = resp.header().map_or(0, |h| h.revision());
                return Ok(Some(*last));
            }
            let now = match resp.op_responses().first() {
                Some(TxnOpResponse::Get(g)) => g.kvs().first().map(KeyValue::from),
                _ => return Err(Error::new(ErrorKind::Internal, "unexpected Txn response")),
            };
            match now {
                Some(kv) if (self.is_ours)(&kv) => {
                    *last = kv.mod_revision;
                    // Our own put, applied by the copy that was not answered.
                    if kv.value == value {
                        return Ok(Some(kv.mod_revision));
                    }
                }
                _ => return Ok(None),
            }
        }
        Err(Error::new(ErrorKind::Unavailable, "the key kept changing under the write; try again"))
    }
}
