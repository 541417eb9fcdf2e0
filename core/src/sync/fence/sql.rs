//! The database's high-water mark for fences: the table, the one statement that checks and raises
//! it inside the writer's own transaction, and what a refusal means. The same table, statement
//! and messages as every binding's helpers (Python's `etcdlock.fencing`, Node's
//! `etcdlock/fencing`); `docs/design.md`, "Fencing at the database", says why it is safe.
//!
//! The statements are in PostgreSQL's `$n` form; they are public so that another driver (sqlx,
//! diesel, a pool's wrapper) can run them the way `etcdlock::fencing::postgres` does: [`CHECK`]
//! first in the transaction, with the resource, the cluster in hex and the token; no row back
//! means refused: read [`MARK`] to tell why, and roll back.

// What a check's answers mean, for the drivers' helpers (only `postgres` so far).
#[cfg(any(feature = "postgres", test))]
use {super::Fence, crate::error::{Error, ErrorKind, Result}};

/// The table the marks are kept in, one row per resource.
pub const TABLE: &str = "etcdlock_fence";

/// Creates the table of marks if it is not there.
pub const DDL: &str = "CREATE TABLE IF NOT EXISTS etcdlock_fence (
    resource TEXT PRIMARY KEY,
    cluster  TEXT NOT NULL,
    token    BIGINT NOT NULL
)";

/// Inserts the mark, or raises it to the fence's token if the fence is of the same cluster and
/// not older (`>=`: the same holder writes again): one row back when the fence may write, none
/// when it is stale or of another cluster. Parameters: `$1` the resource (TEXT), `$2` the
/// cluster's ID in lowercase hex (TEXT), `$3` the token (BIGINT). In PostgreSQL the conflicting
/// row stays locked until the caller's transaction ends, so a concurrent check waits and then
/// judges the committed mark (READ COMMITTED suffices).
pub const CHECK: &str = "INSERT INTO etcdlock_fence (resource, cluster, token) VALUES ($1, $2, $3)
ON CONFLICT (resource) DO UPDATE SET token = excluded.token
WHERE etcdlock_fence.cluster = excluded.cluster AND etcdlock_fence.token <= excluded.token
RETURNING token";

/// The mark of resource `$1` (cluster, token), read after a refusal to say why.
pub const MARK: &str = "SELECT cluster, token FROM etcdlock_fence WHERE resource = $1";

/// The resource a check is for (the lock's name unless the caller names another, which must not
/// be empty) and the cluster's ID as the table keeps it.
#[cfg(any(feature = "postgres", test))]
pub(crate) fn args(fence: &Fence, resource: Option<&str>) -> Result<(String, String)> {
    let resource = match resource {
        Some("") => return Err(Error::invalid("resource must be a non-empty string")),
        Some(r) => r.to_string(),
        None => String::from_utf8_lossy(&fence.name).into_owned(),
    };
    Ok((resource, format!("{:x}", fence.cluster)))
}

/// Why the database refused `fence` for `resource`, given the mark it has (cluster, token), if
/// any: a stale fence, or one of another cluster that an operator must reset the mark for.
/// Kind [`ErrorKind::NotHeld`], as the bindings' `StaleFence`.
#[cfg(any(feature = "postgres", test))]
pub(crate) fn refused(fence: &Fence, resource: &str, mark: Option<(String, i64)>) -> Error {
    let cluster = format!("{:x}", fence.cluster);
    match mark {
        Some((theirs, _)) if theirs != cluster => Error::new(
            ErrorKind::NotHeld,
            format!(
                "the fence for {resource:?} is of etcd cluster {cluster}, but the mark was set by cluster {theirs}: \
                 tokens of two clusters are not comparable (was etcd restored or replaced?); an operator must reset the mark: \
                 DELETE FROM {TABLE} WHERE resource = '{resource}'"
            ),
        ),
        mark => Error::new(
            ErrorKind::NotHeld,
            format!(
                "stale fence for {resource:?}: token {}, but a newer holder wrote with token {}",
                fence.token,
                mark.map_or("?".to_string(), |(_, token)| token.to_string())
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::fence::FenceKind;

    #[test]
    fn the_resource_defaults_to_the_name_and_a_refusal_says_why() {
        let f = Fence { kind: FenceKind::Queue, name: b"acct".to_vec(), token: 7, cluster: 0xab };
        assert_eq!(args(&f, None).unwrap(), ("acct".to_string(), "ab".to_string()));
        assert_eq!(args(&f, Some("other")).unwrap().0, "other");
        assert_eq!(args(&f, Some("")).unwrap_err().kind(), ErrorKind::InvalidArgument);
        let stale = refused(&f, "acct", Some(("ab".into(), 9)));
        assert_eq!(stale.kind(), ErrorKind::NotHeld);
        assert!(stale.message().starts_with("stale fence for \"acct\": token 7, but a newer holder wrote with token 9"), "{stale}");
        let alien = refused(&f, "acct", Some(("cd".into(), 3)));
        assert_eq!(alien.kind(), ErrorKind::NotHeld);
        assert!(alien.message().contains("an operator must reset the mark"), "{alien}");
        assert!(alien.message().ends_with("DELETE FROM etcdlock_fence WHERE resource = 'acct'"), "{alien}");
    }
}
