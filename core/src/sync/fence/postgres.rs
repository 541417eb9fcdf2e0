//! The database's fence check on your own [`tokio_postgres`] connection (cargo feature
//! `postgres`): [`install`] creates the table of marks once; [`check`], first in the transaction
//! that writes, refuses a fence that a newer holder of the lock has written with (an
//! [`Error`](crate::Error) of kind [`NotHeld`](crate::ErrorKind::NotHeld): roll back) and
//! raises the mark to its token, so the transaction commits only if no newer holder has written.
//!
//! ```no_run
//! # async fn demo(client: etcdlock::Client, db: &mut tokio_postgres::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use etcdlock::fencing::postgres;
//! postgres::install(&*db).await?; // once: CREATE TABLE IF NOT EXISTS etcdlock_fence
//! let guard = client.mutex("accounts/7", 10)?.lock().await?;
//! let fence = guard.fence().await?;
//! let txn = db.transaction().await?;
//! postgres::check(&txn, &fence, None).await?; // NotHeld ("stale fence ...") if a newer holder wrote
//! txn.execute("UPDATE accounts SET balance = balance - 5 WHERE id = 7", &[]).await?;
//! txn.commit().await?; // a dropped transaction (after the `?` above) rolls back
//! guard.release().await?;
//! # Ok(()) }
//! ```
//!
//! The mark is `>=`: the same holder's repeated writes pass. A fence of another etcd cluster is
//! refused with a message saying an operator must reset the mark (a restored etcd starts its
//! revisions again). Under READ COMMITTED the mark's row lock makes a concurrent check wait for
//! this transaction, then judge the committed mark (`docs/design.md`, "Fencing at the database").
//! The statement goes in one round trip (typed parameters, no prepare).

use super::sql::{self, CHECK, DDL, MARK};
use super::Fence;
use crate::error::{Error, ErrorKind, Result};
use tokio_postgres::types::Type;
use tokio_postgres::GenericClient;

/// Creates the table of marks if it is not there (in `db`'s transaction, if it is one).
pub async fn install<C: GenericClient>(db: &C) -> Result<()> {
    db.batch_execute(DDL).await.map_err(database)
}

/// In the caller's transaction (`db`: a [`tokio_postgres::Transaction`], or any
/// [`GenericClient`] inside one), before its writes: fails with kind
/// [`NotHeld`](crate::ErrorKind::NotHeld) unless `fence` may write `resource` (the lock's name
/// when `None`), and raises the mark to its token, which it returns. After a refusal nothing
/// the transaction writes may commit: roll it back (dropping a `Transaction` does).
///
/// A database failure is an error of kind [`Unavailable`](crate::ErrorKind::Unavailable) when
/// the connection is closed, else [`Internal`](crate::ErrorKind::Internal), with the
/// database's message and SQLSTATE.
pub async fn check<C: GenericClient>(db: &C, fence: &Fence, resource: Option<&str>) -> Result<i64> {
    let (resource, cluster) = sql::args(fence, resource)?;
    let row = db
        .query_typed_opt(CHECK, &[(&resource, Type::TEXT), (&cluster, Type::TEXT), (&fence.token, Type::INT8)])
        .await
        .map_err(database)?;
    if let Some(row) = row {
        return row.try_get(0).map_err(database);
    }
    let mark = db.query_typed_opt(MARK, &[(&resource, Type::TEXT)]).await.map_err(database)?;
    let mark = mark.map(|m| Ok::<_, Error>((m.try_get(0).map_err(database)?, m.try_get(1).map_err(database)?))).transpose()?;
    Err(sql::refused(fence, &resource, mark))
}

fn database(e: tokio_postgres::Error) -> Error {
    let kind = if e.is_closed() { ErrorKind::Unavailable } else { ErrorKind::Internal };
    let why = match (e.as_db_error(), std::error::Error::source(&e)) {
        (Some(db), _) => format!("{db} (SQLSTATE {})", db.code().code()),
        (None, Some(cause)) => format!("{e}: {cause}"),
        (None, None) => e.to_string(),
    };
    Error::new(kind, format!("the fence check failed in the database: {why}"))
}
