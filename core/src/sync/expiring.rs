//! Keys that go by themselves: on a lease that nobody keeps alive, gone when etcd ends it (a
//! task's delay, a once-per-period job's done mark). A client's clock decides nothing.

use crate::client::Client;
use crate::error::{Error, Result};
use crate::lease;
use rand::Rng;
use std::time::Duration;

/// A delay as a lease TTL: whole seconds, rounded up (etcd also raises a TTL below its minimum,
/// 2 s with its default timing).
pub(crate) fn ttl_of(delay: Duration) -> Result<i64> {
    let secs = delay.as_secs().saturating_add(u64::from(delay.subsec_nanos() > 0));
    crate::client::validate::ttl(i64::try_from(secs.max(1)).unwrap_or(i64::MAX)).map_err(|_| Error::invalid(format!("a delay must be at most {} seconds", crate::MAX_TTL_SECS)))
}

/// Grants a lease of `ttl` seconds that is not kept alive. Its ID is chosen here, so a grant
/// sent twice grants one lease.
pub(crate) async fn grant(client: &Client, ttl: i64) -> Result<i64> {
    let id = rand::rng().random_range(1..i64::MAX);
    client
        .call(None, true, move |rpc| {
            let mut c = rpc.lease.clone();
            async move {
                match c.grant(ttl, Some(etcd_client::LeaseGrantOptions::new().with_id(id))).await {
                    Ok(_) => Ok(()),
                    Err(etcd_client::Error::GRpcStatus(s)) if crate::error::etcd_says(s.message()) == Some(crate::error::Says::LeaseExists) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        })
        .await?;
    Ok(id)
}

/// After a Txn that was to write `key` on the delay lease `id` failed or may not have been
/// applied: revokes the lease, in the background, unless `key` is there (a copy of the Txn was
/// applied after all). A copy applied after the revoke fails as a whole: etcd refuses a put on
/// a lease it does not know.
pub(crate) fn discard_unless_used(client: &Client, id: i64, key: Vec<u8>) {
    let client = client.clone();
    crate::runtime::spawn_cleanup(async move {
        if matches!(client.get(&key).await, Ok(Some(kv)) if kv.lease == id) {
            return;
        }
        let _ = lease::revoke_rpc(&client, id, None).await;
    });
}
