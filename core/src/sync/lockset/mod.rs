//! A lock set: several lock names held together, all or none, with one fencing token.
//!
//! One Txn puts a key in every member's queue on one lease, so all the keys share one create
//! revision `r`: the set's fencing token. Each key then waits under its own queue's rule (a
//! mutex's head, a reader's turn, one of a semaphore's permits), exactly as a lone acquire of
//! that name would, and the set holds once all of them hold. Every wait is for a key older than
//! `r`, and revisions are totally ordered, so no cycle of waits can form: no deadlock, whatever
//! order callers list the names in, and beside etcd's Go `Mutex` and `etcdctl lock` users of
//! the same names (whose keys are in the same queues). See `docs/design.md`.
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
//! use etcdlock::SetMember;
//! let set = client.lock_set(["acct/1", "acct/2"], 10)?;
//! let locks = set.lock().await?;
//! // One token for the set; writes fenced by every member at once:
//! locks.put(b"balances/acct-1", b"5").await?;
//! println!("token {}", locks.fencing_token());
//! locks.release().await?;
//! // Members may read a read-write lock or take one of a semaphore's permits:
//! let mixed = client.lock_set([SetMember::read("cfg"), SetMember::write("jobs/a"), SetMember::permit("gpus", 4)], 10)?;
//! # let _ = mixed; client.close().await; Ok(()) }
//! ```

mod acquire;
mod guard;
mod join;
mod pending;

pub use guard::LockSetGuard;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::sync::mutex::permits::Permits;
use crate::sync::mutex::{Kind, Mutex};
use crate::sync::session::Session;
use std::sync::Arc;

/// The most names a set may have. Its enqueue is one Txn with a comparison and a put per name,
/// and etcd refuses a Txn with more than `--max-txn-ops` (128 by default) of either; 64 leaves a
/// fenced write through the set room for its own operations.
pub const MAX_LOCK_SET: usize = 64;

/// How a set holds one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetMode {
    /// As [`Client::mutex`] does: alone.
    Exclusive,
    /// As a read-write lock's reader ([`RwLock::read`](crate::RwLock::read)).
    Read,
    /// As a read-write lock's writer ([`RwLock::write`](crate::RwLock::write)).
    Write,
    /// One permit of a semaphore of this many ([`Client::semaphore`]).
    Permit(u32),
}

/// One name of a lock set and how it is held. A plain name (`"acct/1"`) is exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetMember {
    /// The lock name, as [`Client::mutex`] and the other recipes take it.
    pub name: Vec<u8>,
    /// How the set holds it. Every participant of the name must use the same recipe for it,
    /// in a set or not (a semaphore's with the same number of permits).
    pub mode: SetMode,
}

impl SetMember {
    /// `name` held alone, as [`Client::mutex`] holds it (what a plain `&str` converts to).
    pub fn exclusive(name: impl Into<Vec<u8>>) -> Self {
        SetMember { name: name.into(), mode: SetMode::Exclusive }
    }
    /// `name` held as a read-write lock's reader: beside other readers, never beside a writer.
    pub fn read(name: impl Into<Vec<u8>>) -> Self {
        SetMember { name: name.into(), mode: SetMode::Read }
    }
    /// `name` held as a read-write lock's writer: alone.
    pub fn write(name: impl Into<Vec<u8>>) -> Self {
        SetMember { name: name.into(), mode: SetMode::Write }
    }
    /// One permit of the semaphore `name` of `permits` permits; every participant of the name
    /// must give the same count (one that gives another fails with `InvalidArgument`).
    pub fn permit(name: impl Into<Vec<u8>>, permits: u32) -> Self {
        SetMember { name: name.into(), mode: SetMode::Permit(permits) }
    }
}

impl From<&str> for SetMember {
    fn from(name: &str) -> Self {
        SetMember::exclusive(name)
    }
}

impl From<String> for SetMember {
    fn from(name: String) -> Self {
        SetMember::exclusive(name)
    }
}

/// A handle on a set of lock names, taken together. Creating it sends nothing.
#[derive(Debug)]
pub struct LockSet {
    client: Client,
    members: Vec<Mutex>,
    modes: Vec<SetMode>,
    session: Arc<Session>,
}

impl Client {
    /// A handle on the lock set `members` (1 to [`MAX_LOCK_SET`] names, none twice, none under
    /// another's queue `name/`), whose keys are bound to the lease this client's locks with
    /// `ttl_secs` share. `InvalidArgument` for anything else, before anything is sent.
    pub fn lock_set<M: Into<SetMember>>(&self, members: impl IntoIterator<Item = M>, ttl_secs: i64) -> Result<LockSet> {
        let members: Vec<SetMember> = members.into_iter().map(Into::into).collect();
        check_members(&members)?;
        let mut handles = Vec::with_capacity(members.len());
        for m in &members {
            let kind = match m.mode {
                SetMode::Exclusive => Kind::Exclusive,
                SetMode::Read => Kind::Read,
                SetMode::Write => Kind::Write,
                SetMode::Permit(n) => {
                    crate::sync::semaphore::check_permits(n)?;
                    Kind::Permits(Permits::one_of(n))
                }
            };
            handles.push(Mutex::new(self, m.name.clone(), ttl_secs)?.with_kind(kind));
        }
        let session = crate::sync::PerClient::of(self).sessions.get(ttl_secs);
        Ok(LockSet { client: self.clone(), members: handles, modes: members.iter().map(|m| m.mode).collect(), session })
    }
}

impl LockSet {
    /// The members' names, in the order given.
    pub fn names(&self) -> Vec<&[u8]> {
        self.members.iter().map(Mutex::name).collect()
    }

    /// The members, in the order given.
    pub fn members(&self) -> Vec<SetMember> {
        self.members.iter().zip(&self.modes).map(|(m, mode)| SetMember { name: m.name().to_vec(), mode: *mode }).collect()
    }
}

fn check_members(members: &[SetMember]) -> Result<()> {
    if members.is_empty() || members.len() > MAX_LOCK_SET {
        return Err(Error::invalid(format!("a lock set has 1 to {MAX_LOCK_SET} names, got {}", members.len())));
    }
    for (i, a) in members.iter().enumerate() {
        crate::client::validate::lock_name(&a.name)?;
        for b in &members[i + 1..] {
            let (short, long) = if a.name.len() <= b.name.len() { (a, b) } else { (b, a) };
            if short.name == long.name {
                return Err(Error::invalid(format!("{:?} is in the lock set twice", String::from_utf8_lossy(&a.name))));
            }
            // `a`'s queue is everything under `a/`: a key of `a/b` would stand in it.
            if long.name.starts_with(&short.name) && long.name.get(short.name.len()) == Some(&b'/') {
                return Err(Error::invalid(format!(
                    "{:?} is under {:?}: a lock set's names must not contain one another",
                    String::from_utf8_lossy(&long.name),
                    String::from_utf8_lossy(&short.name)
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<SetMember> {
        n.iter().map(|s| SetMember::from(*s)).collect()
    }

    #[test]
    fn members_are_checked() {
        assert!(check_members(&names(&["a", "b"])).is_ok());
        assert!(check_members(&names(&["a", "ab", "a-b"])).is_ok());
        for bad in [&[][..], &["a", "a"], &["a", "a/b"], &["x/a/b", "x/a"], &[""]] {
            assert_eq!(check_members(&names(bad)).unwrap_err().kind(), crate::ErrorKind::InvalidArgument, "{bad:?}");
        }
        let many: Vec<String> = (0..=MAX_LOCK_SET).map(|i| format!("n{i}")).collect();
        let many: Vec<SetMember> = many.into_iter().map(SetMember::from).collect();
        assert!(check_members(&many[..MAX_LOCK_SET]).is_ok());
        assert!(check_members(&many).is_err());
    }
}
