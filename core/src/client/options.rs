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
        }
    }
}
