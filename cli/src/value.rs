//! What `etcdlock run` stores in its queue key, for `etcdlock status` to show who waits or holds
//! and since when: `etcdlock host=<host> pid=<pid> queued=<unix ms>`, then ` held=<unix ms>`
//! once it holds. Other clients store other values (`etcdctl lock` none); status shows those as
//! they are, without times.

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
}
