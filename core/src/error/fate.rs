//! What a failure of the KV channel (transport/h2_channel.rs) means for sending its request
//! again, carried with the gRPC status (as metadata, which tonic passes on through etcd-client)
//! to the error classifier: messages are for people, and the classifier does not read ours.

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

const KEY: &str = "etcdlock-fate";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Nothing is known: the request may have been applied.
    #[default]
    Unknown,
    /// The request never left this process: sending it again cannot apply it twice.
    Unsent,
    /// Never sent, and sending it again will not help (the member's certificate was not
    /// accepted).
    UnsentForGood,
}

impl Fate {
    pub fn unsent(self) -> bool {
        self != Fate::Unknown
    }

    pub fn permanent(self) -> bool {
        self == Fate::UnsentForGood
    }

    fn value(self) -> &'static str {
        match self {
            Fate::Unknown => "",
            Fate::Unsent => "unsent",
            Fate::UnsentForGood => "unsent-permanent",
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
        Some("unsent-permanent") => Fate::UnsentForGood,
        Some("unsent") => Fate::Unsent,
        _ => Fate::Unknown,
    }
}
