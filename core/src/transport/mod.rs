//! How requests reach etcd: the KV channel of our own (HTTP/2 straight from the calling task),
//! TLS, and the connections per member that the lease and watch streams use. Public only for the
//! benchmarks, which compare this channel with etcd-client's; not part of the API.

pub(crate) mod backoff;
pub mod h2_channel;
pub(crate) mod health;
pub(crate) mod kv_pool;
pub(crate) mod paths;
pub(crate) mod stats;
pub(crate) mod tls;
