//! A cluster whose raft (peer) links run through proxies, for faults between members: a slow
//! or silent link makes a follower's forwarded proposals reach the leader late, or not at all.
//!
//! Each member listens on its own peer port and advertises its proxy's, so every connection
//! another member dials to it goes through that proxy. etcd's raft transport sends member i's
//! messages to each peer on the stream that peer dialed to i (and the peer's pipeline posts to
//! i on connections it dials too): [`Etcd::peer_proxy`]`(i)` therefore carries what i sends to
//! the others (its votes, acknowledgements and forwarded proposals) and what they post to it.
//! Delaying it (`proxy::Mode::Delay`) makes member i's messages arrive late; the leader's own
//! messages go through the leader's proxy.

use crate::{proxy, Etcd};

impl Etcd {
    /// [`Etcd::start`] with a proxy in front of each member's peer port.
    pub fn start_peer_proxied(n: usize) -> Etcd {
        Etcd::start_inner(n, &[], true)
    }

    /// The proxy that carries member `i`'s raft messages to the others (see the module's doc).
    /// Panics for a cluster not started by [`Etcd::start_peer_proxied`].
    pub fn peer_proxy(&self, i: usize) -> &proxy::Proxy {
        self.peer_proxies.get(i).expect("a cluster started by Etcd::start_peer_proxied")
    }
}
