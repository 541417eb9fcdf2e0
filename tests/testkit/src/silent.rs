//! Endpoints that never answer, for tests of member selection: one whose kernel accepts
//! connections that nobody serves, and one that accepts none at all.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A listener that accepts connections and never reads or writes a byte, like a member whose
/// process is stopped or stuck while its kernel still completes handshakes. Counts them.
pub struct Silent {
    port: u16,
    shared: Arc<Shared>,
}

struct Shared {
    accepted: AtomicUsize,
    stop: AtomicBool,
    /// Kept open, unread, until the listener is dropped.
    held: Mutex<Vec<TcpStream>>,
}

impl Silent {
    pub fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared { accepted: AtomicUsize::new(0), stop: AtomicBool::new(false), held: Mutex::new(Vec::new()) });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::Acquire) {
                    return;
                }
                if let Ok(conn) = conn {
                    s.accepted.fetch_add(1, Ordering::AcqRel);
                    s.held.lock().unwrap().push(conn);
                }
            }
        });
        Silent { port, shared }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::Acquire)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.held.lock().unwrap().clear();
        // Wakes the accept loop so that it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A listening socket whose accept queue is full (backlog 0, one connection queued), so the
/// kernel drops every further SYN: a connect neither succeeds nor fails until the client gives
/// up, like a member behind a firewall that drops packets.
pub struct Unaccepting {
    _fd: OwnedFd,
    _fillers: Vec<TcpStream>,
    port: u16,
}

impl Unaccepting {
    pub fn start() -> Unaccepting {
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(unsafe { libc::bind(raw, &addr as *const _ as *const libc::sockaddr, len) }, 0, "bind");
        assert_eq!(unsafe { libc::listen(raw, 0) }, 0, "listen");
        let mut got: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut got_len = len;
        assert_eq!(unsafe { libc::getsockname(raw, &mut got as *mut _ as *mut libc::sockaddr, &mut got_len) }, 0);
        let port = u16::from_be(got.sin_port);
        let target: SocketAddr = ([127, 0, 0, 1], port).into();
        // Fill the queue until a connect no longer completes (the kernel's notion of "full"
        // differs by one between versions); a handful at most.
        let mut fillers = Vec::new();
        for _ in 0..8 {
            match TcpStream::connect_timeout(&target, Duration::from_millis(300)) {
                Ok(s) => fillers.push(s),
                Err(_) => return Unaccepting { _fd: fd, _fillers: fillers, port },
            }
        }
        panic!("the accept queue of a backlog-0 socket never filled");
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}
