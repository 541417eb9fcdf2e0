//! What a failure of the KV channel means for sending its request again, carried with the gRPC
//! status (as metadata, which tonic passes on through etcd-client) to the client's error:
//! messages are for people, and the classifier does not read ours.

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

const KEY: &str = "etcdlock-fate";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fate {
    /// The request never left this process: sending it again cannot apply it twice.
    pub unsent: bool,
    /// Sending it again will not help (the member's certificate was not accepted).
    pub permanent: bool,
}

impl Fate {
    pub const UNSENT: Fate = Fate { unsent: true, permanent: false };
    pub const UNSENT_FOR_GOOD: Fate = Fate { unsent: true, permanent: true };

    fn value(self) -> &'static str {
        match (self.unsent, self.permanent) {
            (true, true) => "unsent-permanent",
            (true, false) => "unsent",
            (false, true) => "permanent",
            (false, false) => "",
        }
    }
}

/// An Unavailable status that says `fate`.
pub(crate) fn status(fate: Fate, message: impl Into<String>) -> Status {
    let mut metadata = MetadataMap::new();
    metadata.insert(KEY, MetadataValue::from_static(fate.value()));
    Status::with_metadata(Code::Unavailable, message, metadata)
}

/// What `status` says of its request (nothing, unless the KV channel made it).
pub(crate) fn of(status: &Status) -> Fate {
    match status.metadata().get(KEY).and_then(|v| v.to_str().ok()) {
        Some("unsent-permanent") => Fate::UNSENT_FOR_GOOD,
        Some("unsent") => Fate::UNSENT,
        Some("permanent") => Fate { unsent: false, permanent: true },
        _ => Fate::default(),
    }
}
