//! Leader election, interoperable with etcd's Go `concurrency.Election` and `etcdctl elect`.
//!
//! A candidate is a queue key of the fair mutex (`<name>/<lease hex>`, the proposal as its
//! value, bound to the candidate's lease); the leader is the candidate with the lowest create
//! revision, as in Go. So campaigning is acquiring the mutex with the proposal as the lock
//! value, and inherits all of it: FIFO, one watch per candidate on its predecessor, nothing
//! left behind after a timeout, a cancel or an error, and no return after the candidate's
//! lease or key is gone (Go's `Campaign` can return a leader whose lease has died,
//! etcd-io/etcd#11007). `docs/design.md` ("Election") has the round trips.

mod leadership;
mod observe;

pub use leadership::Leadership;
pub use observe::Observer;

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::Result;
use crate::lease::Lease;
use crate::sync::mutex::{LockOptions, Mutex};
use crate::sync::queue::{self, Toward};
use etcd_client::{GetOptions, SortOrder, SortTarget};

/// One election: a handle that campaigns, reads and observes. Creating it sends nothing.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let election = client.election("svc/leader", 10)?;
/// let leadership = election.campaign("node-1").await?; // waits to lead
/// leadership.proclaim(b"node-1 ready").await?;         // fenced: NotHeld once not leader
/// if let Some(leader) = election.leader().await? {
///     assert_eq!(leader.value, b"node-1 ready");
///     assert_eq!(leader.revision, leadership.fencing_token());
/// }
/// leadership.resign().await?;
/// # client.close().await; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Election {
    mutex: Mutex,
    client: Client,
    prefix: Vec<u8>,
}

/// The leader of an election as etcd has it: the candidate with the lowest create revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// The proposal: the value given to `campaign` or the last `proclaim`.
    pub value: Vec<u8>,
    /// The leader's key, `<name>/<lease hex>`.
    pub key: Vec<u8>,
    /// The key's create revision: the leader's fencing token, greater than every earlier
    /// leader's.
    pub revision: i64,
    /// The lease the key is bound to.
    pub lease: i64,
}

impl Client {
    /// The election `name`. Candidates' keys are bound to the lease this client's locks with
    /// `ttl_secs` share (see [`Client::mutex`]), which is kept alive while campaigning and
    /// leading. `InvalidArgument` for a bad name or TTL, before anything is sent.
    pub fn election(&self, name: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<Election> {
        Election::on(Mutex::new(self, name.into(), ttl_secs)?)
    }
}

impl Election {
    /// An election whose candidates' keys are bound to `lease` (never revoked here).
    pub fn with_lease(lease: &Lease, name: impl Into<Vec<u8>>) -> Result<Election> {
        Election::on(Mutex::with_lease(lease, name)?)
    }

    fn on(mutex: Mutex) -> Result<Election> {
        let mut prefix = mutex.name().to_vec();
        prefix.push(b'/');
        Ok(Election { client: mutex.client().clone(), mutex, prefix })
    }

    /// The election's name: the prefix its candidates queue under, as etcd's
    /// `concurrency.Election` and `etcdctl elect` use it.
    pub fn name(&self) -> &[u8] {
        self.mutex.name()
    }

    /// Waits to lead, proposing `value` (at most
    /// [`MAX_LOCK_VALUE_LEN`](crate::MAX_LOCK_VALUE_LEN) bytes).
    pub async fn campaign(&self, value: impl Into<Vec<u8>>) -> Result<Leadership> {
        self.campaign_with(LockOptions { value: value.into(), ..Default::default() }).await
    }

    /// Waits to lead within `opts`, proposing `opts.value`: `LockTimeout` when the timeout
    /// passes, `WouldBlock` with a zero timeout when someone else leads or campaigns,
    /// `Cancelled`, and `LockLost` as soon as this candidate's lease or key is gone. On every
    /// failure the candidate's key is deleted before this returns.
    pub async fn campaign_with(&self, opts: LockOptions) -> Result<Leadership> {
        let guard = self.mutex.lock_traced(opts, crate::sync::spans::Traced::Campaign).await?;
        Ok(Leadership::new(guard))
    }

    /// The current leader, or `None` when nobody campaigns. One read (more only when keys
    /// under `<name>/` that are no candidates' come first, see `sync/queue.rs`).
    pub async fn leader(&self) -> Result<Option<Leader>> {
        self.client.check_open()?;
        Ok(read_leader(&self.client, &self.prefix).await?.0)
    }

    /// A stream of leader changes, starting with the current leader (or `None`). Sends
    /// nothing until [`Observer::next`] is called.
    pub fn observe(&self) -> Observer {
        Observer::new(self.client.clone(), self.prefix.clone())
    }
}

/// The leader under `prefix` and the revision it was read at.
pub(crate) async fn read_leader(client: &Client, prefix: &[u8]) -> Result<(Option<Leader>, i64)> {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(1);
    let key = prefix.to_vec();
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key, o) = (rpc.kv.get(), key.clone(), o.clone());
            async move { kv.get(key, Some(o)).await }
        })
        .await?;
    let revision = resp.header().map_or(0, |h| h.revision());
    let first = resp.kvs().first().map(KeyValue::from);
    let (leader, revision) = match first {
        Some(kv) if queue::is_waiter(prefix, &kv) => (Some(kv), revision),
        first => match queue::resolve(client, prefix, first, revision, Toward::Newer).await? {
            // The page read past non-candidate keys holds no values: read the leader's.
            (Some(kv), _) => {
                let fresh = Box::pin(read_leader_key(client, &kv.key)).await?;
                return Ok(match fresh {
                    (Some(f), rev) if f.create_revision == kv.create_revision => (Some(to_leader(f)), rev),
                    // It went meanwhile: read again from the start.
                    _ => Box::pin(read_leader(client, prefix)).await?,
                });
            }
            none => none,
        },
    };
    Ok((leader.map(to_leader), revision))
}

async fn read_leader_key(client: &Client, key: &[u8]) -> Result<(Option<KeyValue>, i64)> {
    let key = key.to_vec();
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key) = (rpc.kv.get(), key.clone());
            async move { kv.get(key, None).await }
        })
        .await?;
    Ok((resp.kvs().first().map(KeyValue::from), resp.header().map_or(0, |h| h.revision())))
}

fn to_leader(kv: KeyValue) -> Leader {
    Leader { value: kv.value, key: kv.key, revision: kv.create_revision, lease: kv.lease }
}
