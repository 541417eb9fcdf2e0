//! KV clients kept for reuse. A request needs a client of its own (tonic's take `&mut self`),
//! and cloning one per request (a channel handle: an allocation and a handful of atomics, as
//! much again to drop it) is work on every request that reuse avoids.

use etcd_client::KvClient;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// More idle clients than this are dropped: as many as requests were ever in flight at once
/// would otherwise stay around (up to `max_in_flight`).
const MAX_IDLE: usize = 64;

pub(crate) struct KvPool {
    proto: KvClient,
    idle: Arc<Mutex<Vec<KvClient>>>,
}

impl KvPool {
    pub fn new(proto: KvClient) -> KvPool {
        KvPool { proto, idle: Default::default() }
    }

    /// A client for one request; it goes back to the pool when dropped.
    pub fn get(&self) -> PooledKv {
        let kv = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        PooledKv { kv: Some(kv.unwrap_or_else(|| self.proto.clone())), home: self.idle.clone() }
    }
}

pub(crate) struct PooledKv {
    kv: Option<KvClient>,
    home: Arc<Mutex<Vec<KvClient>>>,
}

impl Deref for PooledKv {
    type Target = KvClient;
    fn deref(&self) -> &KvClient {
        self.kv.as_ref().expect("present until dropped")
    }
}

impl DerefMut for PooledKv {
    fn deref_mut(&mut self) -> &mut KvClient {
        self.kv.as_mut().expect("present until dropped")
    }
}

impl Drop for PooledKv {
    /// Also after a request abandoned half way: each clone is a channel handle of its own
    /// that resumes whatever it was doing, as a clone used for many requests in turn does.
    fn drop(&mut self) {
        let mut idle = self.home.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.extend(self.kv.take());
        }
    }
}
