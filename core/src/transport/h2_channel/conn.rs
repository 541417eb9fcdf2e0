//! One connection of the channel: opening it (proved live by an answered ping), its I/O task
//! and keepalive pings, and the pieces of a request and its answer.

use super::{Conn, Shared, CALL};
use crate::transport::tls::Tls;
use bytes::Bytes;
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_util::either::Either;
use http_body::{Body as _, Frame};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tonic::Status;

type Io = tokio_util::either::Either<TcpStream, tokio_rustls::client::TlsStream<TcpStream>>;
type Connection = h2::client::Connection<Io, Bytes>;

/// Why a connection could not be opened.
#[derive(Debug)]
pub(crate) enum Failed {
    /// No connection, or no answer: the member may answer later.
    Io(String),
    /// The member's certificate was not accepted, or TLS failed otherwise: trying again
    /// will not help.
    Tls(String),
    /// The member refused our client certificate (or wanted one): an authentication failure.
    Refused(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (Failed::Io(m) | Failed::Tls(m) | Failed::Refused(m)) = self;
        f.write_str(m)
    }
}

/// Pings on an established connection, and how long a ping may go unanswered before the
/// connection counts as dead: see transport/health.rs.
const KEEPALIVE: Duration = crate::transport::health::PING_EVERY;
const KEEPALIVE_TIMEOUT: Duration = crate::transport::health::PING;

/// Opens a connection to `endpoint` within `limit`: TCP, the HTTP/2 handshake, and a ping
/// answered. h2's handshake only writes our preface and does not wait for the server's, so a
/// member that accepts connections and never answers (a stopped or stuck process whose kernel
/// still accepts) would look connected, and every request sent to it would wait out its whole
/// deadline; the ping's answer shows the member is serving. etcd allows one ping on a
/// connection without requests (it counts only the ones that follow too soon).
pub(super) async fn connect(home: &Arc<Shared>, endpoint: usize, limit: Duration) -> Result<Conn, Failed> {
    let addr = home.endpoints[endpoint].addr.clone();
    let tls = home.tls.clone().zip(home.endpoints[endpoint].server_name.clone());
    let plain = tls.is_none();
    let id = home.ids.fetch_add(1, Ordering::Relaxed);
    let weak = Arc::downgrade(home);
    // On the shared runtime: a socket belongs to the reactor of the runtime that opened it,
    // and the caller's runtime may be gone long before the connection is.
    let opened = crate::runtime::spawn(async move {
        let deadline = Instant::now() + limit;
        let (send, mut connection) = match tokio::time::timeout_at(deadline, open(&addr, tls)).await {
            Ok(r) => r.map_err(|e| e.at(&addr))?,
            Err(_) => return Err(Failed::Io(format!("{addr}: no connection within {limit:?}"))),
        };
        let pings = connection.ping_pong();
        let waiting = Arc::new(AtomicUsize::new(0));
        let (live, is_live) = oneshot::channel();
        tokio::spawn(drive(connection, pings, deadline, live, waiting.clone(), weak, id, plain));
        match is_live.await {
            Ok(Ok(())) => Ok((send, waiting)),
            Ok(Err(e)) => Err(e.at(&addr)),
            Err(_) => Err(Failed::Io(format!("{addr}: connected, but no answer to a ping within {limit:?}"))),
        }
    });
    let (send, waiting) = opened.await.map_err(|e| Failed::Io(e.to_string()))??;
    Ok(Conn { send, endpoint, id, waiting })
}

impl Failed {
    fn at(self, addr: &str) -> Failed {
        match self {
            Failed::Io(m) => Failed::Io(format!("{addr}: {m}")),
            Failed::Tls(m) => Failed::Tls(format!("{addr}: {m}")),
            Failed::Refused(m) => Failed::Refused(format!("{addr}: {m}")),
        }
    }
}

async fn open(addr: &str, tls: Option<(Arc<Tls>, ServerName<'static>)>) -> Result<(h2::client::SendRequest<Bytes>, Connection), Failed> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| Failed::Io(e.to_string()))?;
    let _ = tcp.set_nodelay(true);
    let io = match tls {
        None => Either::Left(tcp),
        Some((tls, name)) => {
            let stream = tls.connector.connect(name, tcp).await.map_err(handshake_failed)?;
            if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
                return Err(Failed::Tls("TLS: the member did not agree to HTTP/2 (ALPN h2)".into()));
            }
            Either::Right(stream)
        }
    };
    h2::client::Builder::new()
        // h2's 64 KiB defaults would take a round trip per 64 KiB of a large range.
        .initial_window_size(1 << 20)
        .initial_connection_window_size(4 << 20)
        .handshake(io)
        .await
        .map_err(|e| Failed::Io(e.to_string()))
}

/// What a failed TLS handshake means for the caller.
fn handshake_failed(e: std::io::Error) -> Failed {
    use tokio_rustls::rustls::Error as Tls;
    match e.get_ref().and_then(|inner| inner.downcast_ref::<Tls>()) {
        Some(Tls::InvalidCertificate(c)) => {
            let hint = match c {
                tokio_rustls::rustls::CertificateError::NotValidForName
                | tokio_rustls::rustls::CertificateError::NotValidForNameContext { .. } => {
                    "give server_name if the certificate names the member differently"
                }
                _ => "check the CA given (ca) or the member's certificate",
            };
            Failed::Tls(format!("TLS: the member's certificate was not accepted: {e} ({hint})"))
        }
        Some(Tls::AlertReceived(_)) => Failed::Refused(refused(&e.to_string())),
        Some(other) => Failed::Tls(format!("TLS handshake failed: {other}")),
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Failed::Tls("TLS handshake failed: the member closed the connection (does it serve plain http://?)".into())
        }
        None => Failed::Io(format!("TLS handshake failed: {e}")),
    }
}

/// Whether the member ended the connection with a TLS alert. By words: h2 keeps only the kind
/// and the message of the I/O error that ended a connection, not rustls' error inside it, and
/// this is how rustls words `Error::AlertReceived`.
fn alert_received(e: &h2::Error) -> bool {
    e.to_string().contains("received fatal alert")
}

fn refused(alert: &str) -> String {
    format!("TLS: the member refused this client's certificate, or wanted one and none was given ({alert}): permission denied")
}

/// Why a connection ended before its first ping was answered. TLS 1.3 members refuse a client
/// certificate after the handshake, on the first read: that comes through here.
/// `plain`: without TLS, where a member that requires it closes the connection this way.
fn ended_early(e: Option<h2::Error>, plain: bool) -> Failed {
    let hint = if plain { " (does the member require TLS? use https://)" } else { "" };
    match e {
        Some(e) if alert_received(&e) => Failed::Refused(refused(&e.to_string())),
        Some(e) => Failed::Io(format!("the connection failed before the member answered HTTP/2: {e}{hint}")),
        None => Failed::Io(format!("the connection closed before the member answered HTTP/2{hint}")),
    }
}

/// A connection's I/O task. It first waits for the answer to one ping until `verify_by` and
/// reports it on `live` (without one the connection is dropped). It ends when the connection
/// does (also when the channel is gone and no request is left on it: h2 closes a connection
/// without handles), or when a ping goes unanswered; then the channel stops using the
/// connection.
async fn drive(
    connection: Connection,
    mut pings: Option<h2::PingPong>,
    verify_by: Instant,
    live: oneshot::Sender<Result<(), Failed>>,
    waiting: Arc<AtomicUsize>,
    home: Weak<Shared>,
    id: u64,
    plain: bool,
) {
    tokio::pin!(connection);
    let verify = async {
        if let Some(p) = pings.as_mut() {
            if !matches!(tokio::time::timeout_at(verify_by, p.ping(h2::Ping::opaque())).await, Ok(Ok(_))) {
                return false;
            }
        }
        true
    };
    let verified = tokio::select! {
        ended = &mut connection => Err(ended_early(ended.err(), plain)),
        ok = verify => if ok { Ok(()) } else { Err(Failed::Io(String::new())) },
    };
    let go_on = match verified {
        // The caller says "no answer to a ping" when the sender goes without a word.
        Err(Failed::Io(m)) if m.is_empty() => false,
        Err(e) => {
            let _ = live.send(Err(e));
            false
        }
        Ok(()) => live.send(Ok(())).is_ok(),
    };
    if go_on {
        tokio::select! {
            _ = connection => {}
            _ = keepalive(pings, waiting) => {}
        }
    }
    if let Some(home) = home.upgrade() {
        home.forget_id(id);
    }
}

/// Returns when a ping goes unanswered (never, without pings). Pings only while a request
/// waits for its answer, which is when a dead connection costs something: etcd counts pings on
/// a connection without requests as abuse and closes it after the third (gRPC's keepalive
/// enforcement without `PermitWithoutStream`), and the next request would then fail with it.
async fn keepalive(pings: Option<h2::PingPong>, waiting: Arc<AtomicUsize>) {
    let Some(mut pings) = pings else { return std::future::pending().await };
    loop {
        tokio::time::sleep(KEEPALIVE).await;
        if waiting.load(Ordering::Relaxed) == 0 {
            continue;
        }
        match tokio::time::timeout(KEEPALIVE_TIMEOUT, pings.ping(h2::Ping::opaque())).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
    }
}

/// The time left before the current request's deadline ([`CALL`]), as a `grpc-timeout` value
/// (none outside a request made through `Client::send`).
pub(super) fn grpc_timeout() -> Option<http::HeaderValue> {
    let deadline = CALL.try_with(|c| c.deadline).ok()?;
    let left = deadline.saturating_duration_since(Instant::now());
    Some(http::HeaderValue::from_str(&encode_timeout(left)).expect("digits and a unit"))
}

/// Whether the current request may be applied twice (no: outside `Client::send`, where
/// nobody said).
pub(super) fn idempotent() -> bool {
    CALL.try_with(|c| c.idempotent).unwrap_or(false)
}

/// gRPC's timeout format: at most 8 digits and a unit. Milliseconds, rounded up (zero would
/// tell the server the caller already gave up), in seconds beyond 8 digits of them.
fn encode_timeout(left: Duration) -> String {
    let ms = left.as_nanos().div_ceil(1_000_000).max(1);
    if ms <= 99_999_999 {
        format!("{ms}m")
    } else {
        format!("{}S", left.as_secs().min(99_999_999))
    }
}

pub(super) async fn collect(mut body: tonic::body::Body) -> Result<Bytes, Status> {
    let mut out = Vec::new();
    let mut first = None;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        if let Ok(data) = frame?.into_data() {
            // The usual case, one frame: no copy.
            if first.is_none() && out.is_empty() {
                first = Some(data);
                continue;
            }
            out.extend_from_slice(&first.take().unwrap_or_default());
            out.extend_from_slice(&data);
        }
    }
    Ok(first.unwrap_or_else(|| out.into()))
}

/// A response body: h2's data frames, then its trailers (where gRPC puts the status).
pub(super) struct RecvBody {
    pub recv: h2::RecvStream,
    pub data_done: bool,
}

impl http_body::Body for RecvBody {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = self.get_mut();
        if !this.data_done {
            match ready!(this.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.recv.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => this.data_done = true,
            }
        }
        Poll::Ready(ready!(this.recv.poll_trailers(cx)).transpose().map(|t| t.map(Frame::trailers)))
    }

    fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_whole_milliseconds_rounded_up_then_seconds() {
        assert_eq!(encode_timeout(Duration::ZERO), "1m");
        assert_eq!(encode_timeout(Duration::from_micros(1500)), "2m");
        assert_eq!(encode_timeout(Duration::from_secs(5)), "5000m");
        assert_eq!(encode_timeout(Duration::from_secs(100_000)), "100000S");
        assert_eq!(encode_timeout(Duration::from_secs(u64::MAX)), "99999999S");
    }

    #[tokio::test]
    async fn a_request_carries_the_time_left_to_its_deadline_and_none_without_one() {
        assert!(grpc_timeout().is_none());
        let deadline = Instant::now() + Duration::from_secs(3);
        let call = crate::transport::h2_channel::Call { deadline, idempotent: true };
        let sent = CALL.scope(call, async { grpc_timeout() }).await.expect("a timeout");
        let ms: u64 = sent.to_str().unwrap().strip_suffix('m').unwrap().parse().unwrap();
        assert!((2900..=3000).contains(&ms), "{ms}");
    }
}
