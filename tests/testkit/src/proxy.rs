//! A TCP proxy in front of an etcd member's client port, for network faults on one machine:
//! pass bytes, black-hole them, or close every connection.
//!
//! A black hole keeps the sockets open and lets nothing through either way, so nothing but a
//! timeout notices. It holds the bytes rather than dropping them: TCP never loses bytes in the
//! middle of a connection (a partitioned network holds segments for retransmission, delivered
//! if the path comes back in time), whereas dropping whole HTTP/2 frames would leave a stream
//! that still parses with events missing, which no real network does.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Pass = 0,
    /// Nothing gets through, either way.
    Blackhole = 1,
    /// Requests get through, replies do not: for requests that are applied but whose
    /// outcome the client never learns.
    HoldReplies = 2,
}

struct Shared {
    mode: AtomicU8,
    stop: AtomicBool,
    /// Both ends of every proxied connection, for `reset`.
    conns: Mutex<Vec<TcpStream>>,
    /// Bytes passed on from clients to the member.
    sent: AtomicU64,
}

pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on a free 127.0.0.1 port and forwards to `127.0.0.1:target`.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared { mode: AtomicU8::new(0), stop: AtomicBool::new(false), conns: Mutex::new(Vec::new()), sent: AtomicU64::new(0) });
        let s = shared.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stop.load(Ordering::Acquire) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect_timeout(&([127, 0, 0, 1], target).into(), Duration::from_secs(1)) else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                {
                    let mut conns = s.conns.lock().unwrap();
                    conns.retain(|c| c.peer_addr().is_ok());
                    conns.extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                }
                pump(s.clone(), client.try_clone().unwrap(), server.try_clone().unwrap(), &[Mode::Blackhole], true);
                pump(s.clone(), server, client, &[Mode::Blackhole, Mode::HoldReplies], false);
            }
        });
        Proxy { port, shared }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn set(&self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::Release);
    }

    /// Bytes passed on from clients to the member so far: which member a client's requests go
    /// to shows here.
    pub fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Acquire)
    }

    /// Closes every connection through the proxy (new ones are still accepted).
    pub fn reset(&self) {
        for c in self.shared.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.reset();
        // Wakes the accept loop so that it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies `from` to `to` on a thread of its own, holding the bytes while in one of `hold`;
/// counts them in `sent` if `requests`.
fn pump(shared: Arc<Shared>, mut from: TcpStream, mut to: TcpStream, hold: &'static [Mode], requests: bool) {
    let held = move |shared: &Shared| hold.iter().any(|m| *m as u8 == shared.mode.load(Ordering::Acquire));
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            while held(&shared) && !shared.stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(10));
            }
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
            if requests {
                shared.sent.fetch_add(n as u64, Ordering::AcqRel);
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
