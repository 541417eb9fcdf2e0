//! What a client is told when it connects.

use std::time::Duration;

/// How to connect. `Default` gives 5 s timeouts and 256 requests in flight.
#[derive(Clone)]
pub struct ClientOptions {
    /// Bound on establishing the first connection (and on the connect probe).
    pub connect_timeout: Duration,
    /// Bound on each request, retries included, unless the caller gives a deadline.
    pub request_timeout: Duration,
    /// User name and password, for etcd with authentication enabled.
    pub user: Option<(String, String)>,
    /// At most this many unary requests of this client are in flight at once; more wait.
    pub max_in_flight: usize,
    /// The lease the client's locks of one TTL share is revoked after this long without any
    /// acquisition or held lock (see [`Client::mutex`](crate::Client::mutex)).
    pub idle_lease_timeout: Duration,
    /// TLS settings for `https://` endpoints (`None` with `https://` trusts the system's roots).
    /// Giving them with `http://` endpoints is an error: the endpoints say which it is.
    pub tls: Option<crate::TlsOptions>,
    /// The client's name: the `client` label of every metric series it exports, so that two
    /// clients in one process (and one registry) never collide. Any non-empty UTF-8 text.
    /// `None` takes `etcdlock-<n>`, `n` counting the clients named so in this process
    /// ([`ClientOptions::resolve_name`]).
    pub name: Option<String>,
}

/// Numbers the clients given no name, process-wide (`etcdlock-1`, `etcdlock-2`...).
static UNNAMED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl ClientOptions {
    /// Checks the name given (non-empty), or fills in the next default one, and returns it.
    /// [`Client::connect`](crate::Client::connect) does this; a binding that shows metrics
    /// before connecting calls it first, so that the name it shows is the one the client keeps.
    /// Calling it again keeps the name.
    pub fn resolve_name(&mut self) -> crate::Result<&str> {
        match &self.name {
            Some(n) if n.is_empty() => return Err(crate::Error::invalid("client name must not be empty")),
            Some(_) => {}
            None => {
                let n = UNNAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.name = Some(format!("etcdlock-{n}"));
            }
        }
        Ok(self.name.as_deref().unwrap_or_default())
    }
}

/// Never prints the password.
impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("user", &self.user.as_ref().map(|(user, _)| (user, "<password>")))
            .field("max_in_flight", &self.max_in_flight)
            .field("idle_lease_timeout", &self.idle_lease_timeout)
            .field("tls", &self.tls)
            .field("name", &self.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_output_shows_no_password() {
        let opts = super::ClientOptions { user: Some(("app".into(), "s3cret".into())), ..Default::default() };
        let shown = format!("{opts:?}");
        assert!(shown.contains("app") && !shown.contains("s3cret"), "{shown}");
    }

    // covers: METRICS-LABEL-001
    #[test]
    fn names_default_to_distinct_ones_and_empty_is_refused() {
        let (mut a, mut b) = (super::ClientOptions::default(), super::ClientOptions::default());
        let (na, nb) = (a.resolve_name().unwrap().to_string(), b.resolve_name().unwrap().to_string());
        assert!(na.starts_with("etcdlock-") && nb.starts_with("etcdlock-") && na != nb, "{na} {nb}");
        assert_eq!(a.resolve_name().unwrap(), na, "resolving again keeps the name");
        let mut given = super::ClientOptions { name: Some("billing \"eu\"".into()), ..Default::default() };
        assert_eq!(given.resolve_name().unwrap(), "billing \"eu\"");
        let mut empty = super::ClientOptions { name: Some(String::new()), ..Default::default() };
        let e = empty.resolve_name().unwrap_err();
        assert!(e.kind() == crate::ErrorKind::InvalidArgument && e.to_string().contains("name"), "{e}");
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            user: None,
            max_in_flight: 256,
            idle_lease_timeout: Duration::from_secs(10),
            tls: None,
            name: None,
        }
    }
}
