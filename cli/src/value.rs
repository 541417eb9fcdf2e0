//! What `etcdlock run` stores in its queue key, for `etcdlock status` to show who waits or holds
//! and since when: `etcdlock host=<host> pid=<pid> queued=<unix ms>`, then ` held=<unix ms>`
//! once it holds. Other clients store other values (`etcdctl lock` none); status shows those as
//! they are, without times.
//!
//! And what `etcdlock queue work` stores in its claims (the core's `ClaimOptions::worker`):
//! `<host>:<pid> since=<unix ms>`, the moment it asked for the task.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The value of a key placed now by this process.
pub fn queued() -> Vec<u8> {
    format!("etcdlock host={} pid={} queued={}", hostname(), std::process::id(), now_ms()).into_bytes()
}

/// The same value once the key holds.
pub fn held(queued: &[u8]) -> Vec<u8> {
    let mut v = queued.to_vec();
    v.extend_from_slice(format!(" held={}", now_ms()).as_bytes());
    v
}

/// The (queued, held) times a value records, in unix ms.
pub fn times(value: &[u8]) -> (Option<u64>, Option<u64>) {
    let text = String::from_utf8_lossy(value);
    let Some(rest) = text.strip_prefix("etcdlock ") else { return (None, None) };
    let field = |name: &str| rest.split(' ').find_map(|f| f.strip_prefix(name)?.strip_prefix('=')?.parse().ok());
    (field("queued"), field("held"))
}

/// A task claim's worker value, asked for now.
pub fn worker() -> Vec<u8> {
    format!("{}:{} since={}", hostname(), std::process::id(), now_ms()).into_bytes()
}

/// The worker (`<host>:<pid>`, or the whole value if it is not ours) and the time it asked.
pub fn worker_since(value: &[u8]) -> (String, Option<u64>) {
    let text = String::from_utf8_lossy(value);
    match text.rsplit_once(" since=") {
        Some((worker, ms)) if ms.parse::<u64>().is_ok() => (worker.to_string(), ms.parse().ok()),
        _ => (text.into_owned(), None),
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "?".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).replace(' ', "_")
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_read_back() {
        let q = super::queued();
        let (queued, held) = super::times(&q);
        assert!(queued.is_some() && held.is_none(), "{}", String::from_utf8_lossy(&q));
        let (q2, held) = super::times(&super::held(&q));
        assert_eq!(q2, queued);
        assert!(held >= queued);
        assert_eq!(super::times(b"from etcdctl"), (None, None));
    }

    #[test]
    fn a_worker_reads_back() {
        let (worker, since) = super::worker_since(&super::worker());
        assert_eq!(worker, format!("{}:{}", super::hostname(), std::process::id()));
        assert!(since.is_some_and(|t| t <= super::now_ms()));
        assert_eq!(super::worker_since(b"someone"), ("someone".to_string(), None));
    }
}
