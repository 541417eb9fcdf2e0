//! When a member counts as silent: one rule for every path to etcd.
//!
//! A member is silent on a path when something it must answer there (a unary request, a ping,
//! a keepalive, a progress request, the opening of a stream) has gone unanswered for longer
//! than that path's bound. The path then leaves the member: new requests, or the reopened
//! stream, go to the next one. What was already sent there is not given up for that (an
//! idempotent request is also sent to the next member). Crashed members, dropped SYNs and
//! refused connections need no bound: they fail at once and the path moves on the same way.
//!
//! The bounds differ by what a late answer costs on each path, not by how the member is judged:
//! every bound is far above a healthy answer (milliseconds) and far below what waits on it.

use std::time::Duration;

/// A unary request on the KV channel: a second without an answer, within the request's
/// deadline (5 s by default), leaves time to ask another member.
pub(crate) const REQUEST: Duration = Duration::from_secs(1);

/// The KV channel's connection pings, sent every [`PING_EVERY`] while requests wait (etcd
/// closes connections that ping more often than every 5 s, or while idle), answered within
/// [`PING`]: they find a connection that died without a word.
pub(crate) const PING_EVERY: Duration = Duration::from_secs(10);
pub(crate) const PING: Duration = Duration::from_secs(5);

/// A keepalive (or opening the keepalive stream): a sixth of the shortest TTL kept alive, so
/// that a stream found silent after a send at TTL/3, and one more silent member, still leave
/// time before the lease could expire; within [0.5 s, 3 s].
pub(crate) fn keepalive(shortest_ttl: Option<Duration>) -> Duration {
    const MIN: Duration = Duration::from_millis(500);
    const MAX: Duration = Duration::from_secs(3);
    shortest_ttl.map_or(MAX, |ttl| ttl / 6).clamp(MIN, MAX)
}

/// A watch stream quiet this long is asked for progress ...
pub(crate) const WATCH_IDLE: Duration = Duration::from_secs(2);
/// ... which (like opening the stream) must be answered within this: a watch has no deadline,
/// so the bound only limits how late its events can be.
pub(crate) const WATCH: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalive_bound_is_a_sixth_of_the_shortest_ttl_within_limits() {
        assert_eq!(keepalive(Some(Duration::from_secs(12))), Duration::from_secs(2));
        assert_eq!(keepalive(Some(Duration::from_secs(1))), Duration::from_millis(500));
        assert_eq!(keepalive(Some(Duration::from_secs(60))), Duration::from_secs(3));
        assert_eq!(keepalive(None), Duration::from_secs(3));
    }
}
