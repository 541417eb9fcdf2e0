//! What an election's [`Observer`] and a service's [`Discovery`] have in common: a stream of
//! states read one `next` at a time, which a caller may cut off at any point (a timeout, a
//! close) and resume later without losing anything. Bindings wait on either through this.

use crate::error::Result;
use crate::sync::election::{Leader, Observer};
use crate::sync::registry::{Discovery, Instances};
use std::future::Future;

/// A stream of states whose `next` is cancel-safe: a call dropped before it returns leaves what
/// it read for the next one.
///
/// ```no_run
/// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
/// use etcdlock::Follow;
/// async fn within<F: Follow>(f: &mut F, limit: std::time::Duration) -> Option<etcdlock::Result<F::Item>> {
///     tokio::time::timeout(limit, f.next()).await.ok()
/// }
/// let mut discovery = client.discover("svc/api")?;
/// let first = within(&mut discovery, std::time::Duration::from_secs(5)).await;
/// # Ok(()) }
/// ```
pub trait Follow: Send + 'static {
    /// One state of the stream.
    type Item: Send + 'static;
    /// Waits for the next state (the current one on the first call).
    fn next(&mut self) -> impl Future<Output = Result<Self::Item>> + Send + '_;
}

impl Follow for Observer {
    type Item = Option<Leader>;
    fn next(&mut self) -> impl Future<Output = Result<Option<Leader>>> + Send + '_ {
        Observer::next(self)
    }
}

impl Follow for Discovery {
    type Item = Instances;
    fn next(&mut self) -> impl Future<Output = Result<Instances>> + Send + '_ {
        Discovery::next(self)
    }
}
