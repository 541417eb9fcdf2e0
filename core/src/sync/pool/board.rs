//! A pool's keys, and its state read at one revision (one Txn of five ranges): the definition,
//! who holds which slot, and each slot's markers.
//!
//! Under `<name>/`: `spec` (the definition), `queue/` (admission: a semaphore's queue keys),
//! `slot/<id>` (its holder's key, on the holder's lease; value `<token>;<owner>`), `used/<id>`
//! (the slot was handed out once), `free/<id>` (released cleanly, or rested after a death),
//! `cool/<id>` (resting after its holder died, on a lease of the reuse delay nobody keeps alive).
//! A slot is available when nobody holds it, it is not resting, and it is either free or was
//! never used. Used, not free and not held means its holder died: it rests first.

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::pool::spec::Spec;
use etcd_client::{GetOptions, Txn, TxnOp, TxnOpResponse};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub(crate) struct Keys {
    name: Vec<u8>,
}

impl Keys {
    pub(crate) fn new(name: Vec<u8>) -> Keys {
        Keys { name }
    }
    pub(crate) fn name(&self) -> &[u8] {
        &self.name
    }
    fn key(&self, part: &str) -> Vec<u8> {
        [self.name.as_slice(), b"/", part.as_bytes()].concat()
    }
    pub(crate) fn spec(&self) -> Vec<u8> {
        self.key("spec")
    }
    /// The admission semaphore's name (its keys are under `<this>/`).
    pub(crate) fn queue(&self) -> Vec<u8> {
        self.key("queue")
    }
    pub(crate) fn dir(&self, kind: &str) -> Vec<u8> {
        self.key(&format!("{kind}/"))
    }
    pub(crate) fn slot(&self, id: &str) -> Vec<u8> {
        self.key(&format!("slot/{id}"))
    }
    pub(crate) fn used(&self, id: &str) -> Vec<u8> {
        self.key(&format!("used/{id}"))
    }
    pub(crate) fn free(&self, id: &str) -> Vec<u8> {
        self.key(&format!("free/{id}"))
    }
    pub(crate) fn cool(&self, id: &str) -> Vec<u8> {
        self.key(&format!("cool/{id}"))
    }
}

/// How a slot can be taken, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Avail {
    /// Never handed out.
    Fresh,
    /// Released cleanly (or rested): its free marker was created at this revision.
    Freed(i64),
    /// Its holder died and it need not rest (a reuse delay of zero).
    Dead,
}

/// A pool's state at one revision.
#[derive(Debug)]
pub(crate) struct Board {
    pub(crate) revision: i64,
    /// The definition and its mod revision, if stored.
    pub(crate) spec: Option<(Spec, i64)>,
    pub(crate) held: HashMap<String, KeyValue>,
    pub(crate) used: HashMap<String, i64>,
    pub(crate) free: HashMap<String, i64>,
    /// Resting slots: the cool key's lease.
    pub(crate) cool: HashMap<String, KeyValue>,
}

impl Board {
    pub(crate) async fn read(client: &Client, keys: &Keys) -> Result<Board> {
        let dirs = ["slot", "used", "free", "cool"];
        let txn = || {
            let mut ops = vec![TxnOp::get(keys.spec(), None)];
            ops.extend(dirs.iter().map(|d| TxnOp::get(keys.dir(d), Some(GetOptions::new().with_prefix()))));
            Txn::new().and_then(ops)
        };
        let resp = client.txn(txn, true).await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let mut ranges = resp.op_responses().into_iter().map(|r| match r {
            TxnOpResponse::Get(g) => Ok(g.kvs().iter().map(KeyValue::from).collect::<Vec<_>>()),
            _ => Err(Error::new(ErrorKind::Internal, "unexpected Txn response")),
        });
        let mut next = || ranges.next().unwrap_or_else(|| Err(Error::new(ErrorKind::Internal, "short Txn response")));
        let spec = match next()?.into_iter().next() {
            None => None,
            Some(kv) => Some((Spec::decode(&kv.value).ok_or_else(|| bad_spec(keys))?, kv.mod_revision)),
        };
        let mut by_id = |dir: &str| -> Result<HashMap<String, KeyValue>> {
            let prefix = keys.dir(dir);
            Ok(next()?.into_iter().filter_map(|kv| Some((String::from_utf8(kv.key.strip_prefix(prefix.as_slice())?.to_vec()).ok()?, kv))).collect())
        };
        let held = by_id("slot")?;
        let used = by_id("used")?.into_iter().map(|(k, kv)| (k, kv.create_revision)).collect();
        let free = by_id("free")?.into_iter().map(|(k, kv)| (k, kv.create_revision)).collect();
        let cool = by_id("cool")?;
        Ok(Board { revision, spec, held, used, free, cool })
    }

    /// How slot `id` can be taken now, if it can.
    pub(crate) fn avail(&self, id: &str, reuse_delay_zero: bool) -> Option<Avail> {
        if self.held.contains_key(id) || self.cool.contains_key(id) {
            return None;
        }
        match (self.free.get(id), self.used.contains_key(id)) {
            (Some(rev), _) => Some(Avail::Freed(*rev)),
            (None, false) => Some(Avail::Fresh),
            (None, true) if reuse_delay_zero => Some(Avail::Dead),
            (None, true) => None,
        }
    }

    /// Slots whose holder died and that have not started resting.
    pub(crate) fn dead(&self, spec: &Spec) -> Vec<String> {
        spec.slots.iter().filter(|s| self.used.contains_key(*s) && !self.free.contains_key(*s) && !self.held.contains_key(*s) && !self.cool.contains_key(*s)).cloned().collect()
    }
}

pub(crate) fn bad_spec(keys: &Keys) -> Error {
    Error::invalid(format!("{:?} is not a pool's definition", String::from_utf8_lossy(&keys.spec())))
}
