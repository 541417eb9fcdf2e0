//! A TCP proxy in front of an etcd member's client port, for network faults on one machine:
//! pass bytes, black-hole them, hold the replies, delay everything, or close every connection.
//!
//! A black hole keeps the sockets open and lets nothing through either way, so nothing but a
//! timeout notices. It holds the bytes rather than dropping them: TCP never loses bytes in the
//! middle of a connection (a partitioned network holds segments for retransmission, delivered
//! if the path comes back in time), whereas dropping whole HTTP/2 frames would leave a stream
//! that still parses with events missing, which no real network does.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Pass = 0,
    /// Nothing gets through, either way.
    Blackhole = 1,
    /// Requests get through, replies do not: for requests that are applied but whose
    /// outcome the client never learns.
    HoldReplies = 2,
    /// Every byte, either way, arrives [`Proxy::delay`] after it was sent (and the end of a
    /// connection too): a slow link, over which a request the client gave up on is still
    /// delivered, and applied, late.
    Delay = 3,
}

struct Shared {
    mode: AtomicU8,
    stop: AtomicBool,
    /// Both ends of every proxied connection, for `reset`.
    conns: Mutex<Vec<TcpStream>>,
    /// Bytes passed on from clients to the member.
    sent: AtomicU64,
    /// How late bytes read in `Mode::Delay` are passed on, in milliseconds.
    delay_ms: AtomicU64,
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
        let shared = Arc::new(Shared { mode: AtomicU8::new(0), stop: AtomicBool::new(false), conns: Mutex::new(Vec::new()), sent: AtomicU64::new(0), delay_ms: AtomicU64::new(0) });
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

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn set(&self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::Release);
    }

    /// `Mode::Delay` by `by`: what is sent from now on arrives that much later, in order.
    pub fn delay(&self, by: Duration) {
        self.shared.delay_ms.store(by.as_millis() as u64, Ordering::Release);
        self.set(Mode::Delay);
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

/// Copies `from` to `to`, holding the bytes while in one of `hold` and delaying those read in
/// `Mode::Delay`; counts them in `sent` if `requests`. A reader thread stamps each chunk with
/// the moment it is due; a writer thread passes chunks on in order, each no sooner than due.
fn pump(shared: Arc<Shared>, mut from: TcpStream, mut to: TcpStream, hold: &'static [Mode], requests: bool) {
    let held = move |shared: &Shared| hold.iter().any(|m| *m as u8 == shared.mode.load(Ordering::Acquire));
    // (due, bytes); empty bytes: the end of the connection.
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = shared.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).unwrap_or(0);
            let delay = match reader.mode.load(Ordering::Acquire) == Mode::Delay as u8 {
                true => Duration::from_millis(reader.delay_ms.load(Ordering::Acquire)),
                false => Duration::ZERO,
            };
            if tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() || n == 0 {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            while (held(&shared) || Instant::now() < due) && !shared.stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(5).min(due.saturating_duration_since(Instant::now())).max(Duration::from_millis(1)));
            }
            if shared.stop.load(Ordering::Acquire) || bytes.is_empty() || to.write_all(&bytes).is_err() {
                break;
            }
            if requests {
                shared.sent.fetch_add(bytes.len() as u64, Ordering::AcqRel);
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free port: what it reads it writes back.
    fn echo() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let (mut r, mut w) = (conn.try_clone().unwrap(), conn);
                    let _ = std::io::copy(&mut r, &mut w);
                });
            }
        });
        port
    }

    /// How long one byte takes there and back through `proxy`.
    fn round_trip(proxy: &Proxy) -> Duration {
        let mut c = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let at = Instant::now();
        c.write_all(b"x").unwrap();
        let mut b = [0u8; 1];
        c.read_exact(&mut b).unwrap();
        at.elapsed()
    }

    #[test]
    fn a_delay_holds_each_byte_that_long_each_way_and_keeps_the_order() {
        let proxy = Proxy::start(echo());
        assert!(round_trip(&proxy) < Duration::from_millis(200));
        proxy.delay(Duration::from_millis(300));
        let took = round_trip(&proxy);
        assert!(took >= Duration::from_millis(600) && took < Duration::from_secs(3), "{took:?}");
        // In order, and the end of the stream comes after the bytes, as late.
        let mut c = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        for i in 0..20u8 {
            c.write_all(&[i]).unwrap();
        }
        c.shutdown(Shutdown::Write).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got, (0..20u8).collect::<Vec<_>>());
        proxy.set(Mode::Pass);
        assert!(round_trip(&proxy) < Duration::from_millis(200));
    }

    #[test]
    fn replies_held_are_passed_on_when_released() {
        let proxy = Proxy::start(echo());
        proxy.set(Mode::HoldReplies);
        let mut c = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
        c.write_all(b"x").unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let mut b = [0u8; 1];
        assert!(c.read_exact(&mut b).is_err(), "a reply got through");
        proxy.set(Mode::Pass);
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"x");
    }
}
