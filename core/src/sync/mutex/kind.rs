//! The rules by which a queue key holds, and how each kind's key stores its value.

use super::{permits, readers};

/// Which rule decides when a queue key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The oldest key holds: a mutex.
    Exclusive,
    /// The oldest keys hold while their counts fit in N: a semaphore (`permits.rs`).
    Permits(permits::Permits),
    /// A key holds while no older key is a writer's: a read-write lock's reader (`readers.rs`).
    Read,
    /// The oldest key holds, as for a mutex; its key says it is a writer's.
    Write,
}

impl Kind {
    /// What a key of this kind stores: the caller's value, after what tells the kinds apart.
    pub(crate) fn stored<'a>(&self, value: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        match self {
            Kind::Exclusive => value.into(),
            Kind::Permits(p) => permits::encode(*p, value).into(),
            Kind::Read => readers::encode(readers::Mode::Read, value).into(),
            Kind::Write => readers::encode(readers::Mode::Write, value).into(),
        }
    }
}
