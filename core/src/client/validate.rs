//! Input checks that run before anything is sent, so bad input changes nothing.

use crate::error::{Error, Result};
use std::time::Duration;

/// etcd's largest lease TTL (`MaxLeaseTTL`, 9e9 seconds).
pub const MAX_TTL_SECS: i64 = 9_000_000_000;
/// etcd's default request size limit, less room for the rest of the request.
const MAX_KEY_LEN: usize = 1024 * 1024;

/// Checks a lease TTL as every call that takes one does (for bindings that validate early).
pub fn check_ttl(ttl_secs: i64) -> Result<()> {
    ttl(ttl_secs).map(drop)
}

/// The longest value an acquire may attach to its queue key ([`crate::LockOptions::value`]):
/// it is for a holder's identity (host, pid, a short text), and every queue read carries it.
pub const MAX_LOCK_VALUE_LEN: usize = 4096;

/// Checks a lock value as [`crate::Mutex::lock_with`] does.
pub fn check_lock_value(value: &[u8]) -> Result<()> {
    if value.len() > MAX_LOCK_VALUE_LEN {
        return Err(Error::invalid(format!("lock value must be at most {MAX_LOCK_VALUE_LEN} bytes, got {}", value.len())));
    }
    Ok(())
}

/// Checks a lock name as [`crate::Client::mutex`] does.
pub fn check_lock_name(name: &[u8]) -> Result<()> {
    lock_name(name)
}

pub(crate) fn ttl(ttl_secs: i64) -> Result<i64> {
    if ttl_secs <= 0 {
        return Err(Error::invalid(format!("ttl must be a positive number of seconds, got {ttl_secs}")));
    }
    if ttl_secs > MAX_TTL_SECS {
        return Err(Error::invalid(format!("ttl must be at most {MAX_TTL_SECS} seconds, got {ttl_secs}")));
    }
    Ok(ttl_secs)
}

/// A lock name: non-empty, no trailing `/` (the queue lives under `<name>/`, and a name with a
/// trailing slash would silently share a queue with the name without it), no NUL byte.
pub(crate) fn lock_name(name: &[u8]) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid("lock name must not be empty"));
    }
    if name.ends_with(b"/") {
        return Err(Error::invalid("lock name must not end with '/'"));
    }
    if name.contains(&0) {
        return Err(Error::invalid("lock name must not contain a NUL byte"));
    }
    if name.len() > MAX_KEY_LEN {
        return Err(Error::invalid("lock name is too long"));
    }
    Ok(())
}

pub(crate) fn key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        return Err(Error::invalid("key must not be empty"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(Error::invalid("key is too long"));
    }
    Ok(())
}

/// The longest timeout of the client's options: a year. Longer ones would overflow a point in
/// time, and none is meant.
const MAX_OPTION_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

pub(crate) fn timeout(what: &str, d: Duration) -> Result<Duration> {
    if d.is_zero() {
        return Err(Error::invalid(format!("{what} must be positive")));
    }
    if d > MAX_OPTION_TIMEOUT {
        return Err(Error::invalid(format!("{what} must be at most a year, got {d:?}")));
    }
    Ok(d)
}

/// Endpoint URLs: `http://host:port` or `https://host:port`, or a bare `host:port`.
pub(crate) fn endpoints<S: AsRef<str>>(endpoints: &[S]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(endpoints.len());
    for e in endpoints {
        let e = e.as_ref().trim();
        if e.is_empty() {
            continue;
        }
        let rest = e.strip_prefix("http://").or_else(|| e.strip_prefix("https://"));
        let hostport = match rest {
            Some(r) => r.trim_end_matches('/'),
            None if e.contains("://") => {
                return Err(Error::invalid(format!("endpoint {e:?}: only http:// and https:// are supported")))
            }
            None => e,
        };
        let ok = match hostport.rsplit_once(':') {
            Some((host, port)) => !host.is_empty() && !host.contains('/') && port.parse::<u16>().is_ok_and(|p| p > 0),
            None => false,
        };
        if !ok {
            return Err(Error::invalid(format!("endpoint {e:?} is not a URL like http://127.0.0.1:2379")));
        }
        out.push(if rest.is_some() { e.trim_end_matches('/').to_string() } else { format!("http://{e}") });
    }
    if out.is_empty() {
        return Err(Error::invalid("no endpoints given"));
    }
    Ok(out)
}

/// Whether the (checked) endpoints use TLS: all `https://`, or none. TLS options with plain
/// `http://` endpoints are a mistake, not a request for TLS: each endpoint says which it is.
pub(crate) fn uses_tls(endpoints: &[String], tls_options: bool) -> Result<bool> {
    let https = endpoints.iter().filter(|e| e.starts_with("https://")).count();
    if https > 0 && https < endpoints.len() {
        return Err(Error::invalid("endpoints mix http:// and https://: a cluster is reached one way"));
    }
    if https == 0 && tls_options {
        return Err(Error::invalid("TLS options were given with http:// endpoints: use https:// endpoints for TLS"));
    }
    Ok(https > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_checked() {
        assert_eq!(endpoints(&["127.0.0.1:2379"]).unwrap(), vec!["http://127.0.0.1:2379"]);
        assert_eq!(endpoints(&["http://a:1/", " "]).unwrap(), vec!["http://a:1"]);
        for bad in [&[][..], &[""], &["nope"], &["http://:1"], &["ftp://a:1"], &["http://a:0"], &["http://a:99999"]] {
            assert!(endpoints(bad).is_err(), "{bad:?}");
        }
        let (plain, tls, mixed) = (endpoints(&["a:1"]).unwrap(), endpoints(&["https://a:1"]).unwrap(), endpoints(&["https://a:1", "http://b:1"]).unwrap());
        assert!(!uses_tls(&plain, false).unwrap());
        assert!(uses_tls(&tls, false).unwrap() && uses_tls(&tls, true).unwrap());
        assert!(uses_tls(&plain, true).is_err());
        assert!(uses_tls(&mixed, false).is_err());
    }

    #[test]
    fn names_and_ttls_are_checked() {
        assert!(lock_name(b"").is_err());
        assert!(lock_name(b"a/").is_err());
        assert!(lock_name(b"a\0b").is_err());
        assert!(lock_name(b"jobs/a").is_ok());
        assert!(ttl(0).is_err());
        assert!(ttl(-1).is_err());
        assert!(ttl(MAX_TTL_SECS + 1).is_err());
        assert_eq!(ttl(5).unwrap(), 5);
        assert!(timeout("t", Duration::ZERO).is_err());
        assert!(timeout("t", Duration::MAX).is_err());
        assert!(timeout("t", Duration::from_secs(5)).is_ok());
    }
}
