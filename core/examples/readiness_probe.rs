//! A Kubernetes readiness probe for a leader-elected worker: `GET /readyz` answers 200 while this
//! process leads (`health().is_ok()`) and 503 otherwise, so a Service routes only to the leader.
//!
//! `ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 PORT=8080 cargo run -p etcdlock --example readiness_probe`
//!
//! See the "Health and readiness" guide for the pod spec. (core/tests/integration/health.rs runs
//! `serve` against a real etcd.)

use std::io::{Read, Write};
use std::net::TcpListener;

/// Serves `GET /readyz` on `listener` from `health`, in a thread of its own: 200 while the view
/// is ok, 503 otherwise. `health()` reads local state only, cheap enough for every probe.
pub fn serve(listener: TcpListener, health: impl Fn() -> etcdlock::Health + Send + 'static) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The request up to the end of its headers (a probe sends no body), bounded in size
            // and time: a client that sends nothing cannot stall the probe.
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let (mut request, mut buf) = (Vec::new(), [0u8; 1024]);
            while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 8192 {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let (status, body) = if request.starts_with(b"GET /readyz ") {
                let h = health();
                let body = format!("{} {} token={}\n", h.state.as_str(), h.lost_reason().map_or("", |r| r.as_str()), h.fencing_token);
                (if h.is_ok() { "200 OK" } else { "503 Service Unavailable" }, body)
            } else {
                ("404 Not Found", String::new())
            };
            let _ = write!(stream, "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
}

#[tokio::main]
#[allow(dead_code)] // also compiled as a module of the tests, which call `serve` only
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoints = std::env::var("ETCDLOCK_ENDPOINTS").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    let endpoints: Vec<String> = endpoints.split(',').map(str::to_string).collect();
    let client = etcdlock::Client::connect(&endpoints, Default::default()).await?;
    let me = std::env::var("HOSTNAME").unwrap_or_else(|_| "me".into());
    let leadership = std::sync::Arc::new(client.election("jobs/leader", 10)?.campaign(me).await?);
    let port = std::env::var("PORT").unwrap_or_else(|_| "8080".into());
    let listener = TcpListener::bind(format!("0.0.0.0:{port}"))?;
    let probe = leadership.clone();
    serve(listener, move || probe.health());
    println!("leading, token {}", leadership.fencing_token());
    // The leader's work runs here; on loss it stops at once. The probe says 503 from then on:
    // the pod is not broken (liveness stays fine), it is just not the leader.
    let reason = leadership.lost().wait().await;
    println!("lost ({reason}): not ready");
    tokio::signal::ctrl_c().await.ok();
    client.close().await;
    Ok(())
}
