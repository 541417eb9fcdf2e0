//! Tells a watch refused for a stale auth token from one the user may not make.
//!
//! etcd checks a new watch against the auth token its stream was opened with. etcd 3.5 refuses
//! a watch made with an expired token in the words of a denied permission ("permission
//! denied"), so the refusal alone does not say whether to refresh the token or to fail the
//! watch. etcd lets whoever may read a range watch it; a read of that range (one key, keys
//! only) with the connection's token, refreshed once if etcd finds it stale, answers which it
//! was. That answer holds however long ago the last refresh was: a token can go stale again
//! within seconds (`--auth-token-ttl`), so no time since a refresh can tell.

use crate::error::{denied, stale_token};
use std::time::Duration;

/// Whether the connection's user may read (and so watch) `key`, or every key under it with
/// `prefix`: `None` if etcd did not say within `limit` per request.
pub(super) async fn may_read(etcd: &etcd_client::Client, key: &[u8], prefix: bool, limit: Duration) -> Option<bool> {
    let mut options = etcd_client::GetOptions::new().with_keys_only().with_limit(1);
    if prefix {
        options = options.with_prefix();
    }
    for refreshed in [false, true] {
        let mut kv = etcd.kv_client();
        match tokio::time::timeout(limit, kv.get(key.to_vec(), Some(options.clone()))).await.ok()? {
            Ok(_) => return Some(true),
            Err(e) if !refreshed && stale_token(&e) => {
                tokio::time::timeout(limit, etcd.refresh_token()).await.ok()?.ok()?;
            }
            Err(e) if denied(&e) => return Some(false),
            Err(_) => return None,
        }
    }
    None
}
