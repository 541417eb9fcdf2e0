//! `--health-addr HOST:PORT` of `run` and `elect`: a small HTTP/1.1 server on the command
//! line's runtime. `GET /healthz` answers 200 "ok" only while this process holds its lock (or
//! leads) and its command has not ended, asking the guard itself on every request, so it says
//! 503 as soon as the loss is known (the local deadline passed, the key deleted, the lease
//! revoked), before the command is stopped. `GET /metrics` answers the client's Prometheus text.
//!
//! One per process: the state is process-wide, and every setter is a no-op cost when no server
//! was started (`queue work`, a run without the option).

use crate::exit::{Exit, USAGE};
use crate::hold::Held;
use etcdlock::{Client, LostSignal};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Something held that can say, cheaply and locally, whether it still is.
pub trait Active: Send + Sync {
    fn active(&self) -> bool;
    fn lost(&self) -> LostSignal;
}

impl<T: Held + Send + Sync> Active for T {
    fn active(&self) -> bool {
        self.lost_reason().is_none()
    }
    fn lost(&self) -> LostSignal {
        Held::lost(self)
    }
}

enum Phase {
    Waiting,
    /// Not owned: dropping what is held (after its release) ends the hold here too. The loss
    /// outlives it, to tell "lost" from "ended".
    Holding(Weak<dyn Active>, LostSignal),
    Ended(&'static str),
}

struct State {
    phase: Phase,
    client: Option<Client>,
}

static STATE: Mutex<State> = Mutex::new(State { phase: Phase::Waiting, client: None });

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Listens on `addr` (nothing without one) and serves from now on, before etcd is contacted: a
/// probe meanwhile gets 503. An address that cannot be listened on is a usage error.
pub async fn start(addr: Option<SocketAddr>) -> Result<(), Exit> {
    let Some(addr) = addr else { return Ok(()) };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| Exit::fail(USAGE, format!("--health-addr {addr}: cannot listen there: {e}")))?;
    if addr.port() == 0 {
        // The port the system chose is known only here: say it, once.
        if let Ok(bound) = listener.local_addr() {
            eprintln!("etcdlock: health endpoints on http://{bound} (/healthz, /metrics)");
        }
    }
    tokio::spawn(serve(listener));
    Ok(())
}

/// The client whose metrics `/metrics` shows, labelled with its name (before this: only
/// `etcdlock_cli_active`, as there is no client yet).
pub fn connected(client: &Client) {
    state().client = Some(client.clone());
}

/// Holding `held` from now on: `/healthz` says 200 while it is active and not dropped.
pub fn holding<T: Active + 'static>(held: &Arc<T>) {
    let weak: Weak<dyn Active> = Arc::downgrade(held) as Weak<dyn Active>;
    state().phase = Phase::Holding(weak, held.lost());
}

/// The command ended, or the leader resigns: 503 from now on ("lost" if it was).
pub fn ended() {
    let mut state = state();
    let word = match status_of(&state.phase) {
        Err("lost") => "lost",
        _ => "ended",
    };
    state.phase = Phase::Ended(word);
}

/// Whether `/healthz` says 200, and the word it says otherwise.
fn status() -> Result<(), &'static str> {
    status_of(&state().phase)
}

fn status_of(phase: &Phase) -> Result<(), &'static str> {
    match phase {
        Phase::Waiting => Err("waiting"),
        Phase::Ended(word) => Err(word),
        Phase::Holding(held, lost) => match held.upgrade() {
            Some(h) if h.active() => Ok(()),
            Some(_) => Err("lost"),
            None if lost.reason().is_some() => Err("lost"),
            None => Err("ended"),
        },
    }
}

fn metrics() -> String {
    let client = state().client.clone();
    let mut text = client.map(|c| c.metrics().prometheus_text()).unwrap_or_default();
    let active = u8::from(status().is_ok());
    text += "# HELP etcdlock_cli_active 1 while this etcdlock holds its lock or leads (as /healthz answers 200).\n";
    text += &format!("# TYPE etcdlock_cli_active gauge\netcdlock_cli_active {active}\n");
    text
}

/// At most this many connections are answered at once; more are closed unanswered.
const CONNECTIONS: usize = 64;
/// A request's head (request line and headers) must come within this, and fit in this size.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
const HEAD_MAX: usize = 8192;

async fn serve(listener: TcpListener) {
    let slots = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    loop {
        match listener.accept().await {
            Ok((conn, _)) => {
                if let Ok(slot) = slots.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        let _ = tokio::time::timeout(HEAD_TIMEOUT * 2, answer(conn)).await;
                        drop(slot);
                    });
                }
            }
            // Out of descriptors, or a connection reset before it was accepted: later.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// One request, one response, then the connection is closed.
async fn answer(mut conn: TcpStream) {
    let Some(head) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut conn)).await.ok().flatten() else {
        return;
    };
    let response = respond(&head);
    let _ = conn.write_all(&response).await;
    let _ = conn.shutdown().await;
}

/// Up to the blank line that ends the headers (read whole, so that closing after the answer
/// does not reset the connection under the client); `None` if it never comes.
async fn read_head(conn: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            return Some(String::from_utf8_lossy(&head).into_owned());
        }
        if head.len() > HEAD_MAX {
            return Some(String::new()); // answered 400
        }
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The response to a request whose head is `head`.
pub fn respond(head: &str) -> Vec<u8> {
    let mut words = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target, version) = (words.next(), words.next(), words.next());
    let path = target.map(|t| t.split('?').next().unwrap_or(t));
    let known = matches!(path, Some("/healthz" | "/metrics"));
    let (code, kind, body) = match (method, path) {
        _ if !version.is_some_and(|v| v.starts_with("HTTP/1.")) => (400, TEXT, "bad request\n".to_string()),
        (Some("GET" | "HEAD"), Some("/healthz")) => match status() {
            Ok(()) => (200, TEXT, "ok\n".to_string()),
            Err(word) => (503, TEXT, format!("{word}\n")),
        },
        (Some("GET" | "HEAD"), Some("/metrics")) => (200, PROMETHEUS, metrics()),
        _ if known => (405, TEXT, "only GET and HEAD\n".to_string()),
        _ => (404, TEXT, "not found: GET /healthz or /metrics\n".to_string()),
    };
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n{}\r\n",
        body.len(),
        if code == 405 { "Allow: GET, HEAD\r\n" } else { "" }
    )
    .into_bytes();
    if method != Some("HEAD") {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_line(r: &[u8]) -> String {
        String::from_utf8_lossy(r).lines().next().unwrap_or("").to_string()
    }

    #[test]
    fn requests_get_their_status() {
        // No hold was ever registered in this test process: waiting.
        let r = respond("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(first_line(&r), "HTTP/1.1 503 Service Unavailable");
        assert!(String::from_utf8_lossy(&r).ends_with("\r\n\r\nwaiting\n"));
        let m = String::from_utf8_lossy(&respond("GET /metrics?x=1 HTTP/1.0\r\n\r\n")).into_owned();
        assert!(m.starts_with("HTTP/1.1 200 OK") && !m.contains("etcdlock_lock_acquisitions_total") && m.contains("etcdlock_cli_active 0"), "{m}");
        let head = String::from_utf8_lossy(&respond("HEAD /healthz HTTP/1.1\r\n\r\n")).into_owned();
        assert!(head.ends_with("\r\n\r\n") && head.contains("Content-Length: 8\r\n"), "{head}");
        assert_eq!(first_line(&respond("POST /healthz HTTP/1.1\r\n\r\n")), "HTTP/1.1 405 Method Not Allowed");
        assert_eq!(first_line(&respond("GET / HTTP/1.1\r\n\r\n")), "HTTP/1.1 404 Not Found");
        assert_eq!(first_line(&respond("GET /healthz\r\n\r\n")), "HTTP/1.1 400 Bad Request");
        assert_eq!(first_line(&respond("")), "HTTP/1.1 400 Bad Request");
    }
}
