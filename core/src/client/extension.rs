//! A typed slot for per-client state of what is built on the client. The recipes (`sync`) keep
//! their shared leases, queue hints and held-lock monitors there, so the client needs to know
//! nothing of them (as etcd's Go `clientv3` knows nothing of `concurrency`).

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// Filled on first use, dropped with the client. One slot: the recipes keep one value in it.
#[derive(Default)]
pub(crate) struct Extension(OnceLock<Arc<dyn Any + Send + Sync>>);

impl Extension {
    /// The value of type `T`, made by `init` on first use.
    ///
    /// # Panics
    /// If the slot already holds a value of another type: one type of the crate uses it.
    pub fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let any = self.0.get_or_init(|| Arc::new(init())).clone();
        any.downcast().unwrap_or_else(|_| unreachable!("the client's extension slot holds one type"))
    }
}
