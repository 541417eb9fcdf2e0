//! TLS for every connection a client opens: one rustls configuration per client, used by the KV
//! channel of our own and, through tonic, by the lease, keepalive and watch streams.
//!
//! Everything given here is read and checked when the client is made, so that a missing file or
//! a malformed PEM is `InvalidArgument` naming it, before anything is sent.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls::{
    self,
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName},
};

/// PEM text, from a file or given in memory.
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    File(PathBuf),
    Bytes(Vec<u8>),
}

/// Never prints the contents: a PEM may be a private key.
impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pem::File(p) => f.debug_tuple("File").field(p).finish(),
            Pem::Bytes(b) => write!(f, "Bytes(<{} bytes>)", b.len()),
        }
    }
}

/// How to connect over TLS (used with `https://` endpoints).
///
/// ```
/// use etcdlock::{ClientOptions, Pem, TlsOptions};
/// let opts = ClientOptions {
///     tls: Some(TlsOptions {
///         ca: Some(Pem::File("/etc/etcd/ca.pem".into())),
///         cert: Some(Pem::File("/etc/etcd/client.pem".into())),
///         key: Some(Pem::File("/etc/etcd/client-key.pem".into())),
///         server_name: None,
///     }),
///     ..Default::default()
/// };
/// # let _ = opts;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// CA certificates that sign the members' certificates; `None` trusts the system's roots.
    pub ca: Option<Pem>,
    /// This client's certificate chain, for members that require client certificates (mTLS).
    pub cert: Option<Pem>,
    /// The private key of `cert`.
    pub key: Option<Pem>,
    /// The name to check in the members' certificates instead of each endpoint's host (for
    /// endpoints given by IP address whose certificates name a DNS name). The name is sent as
    /// SNI when it is a DNS name; nothing is sent for an IP address.
    pub server_name: Option<String>,
}

/// A client's TLS, ready to connect with.
pub(crate) struct Tls {
    pub connector: tokio_rustls::TlsConnector,
    server_name: Option<ServerName<'static>>,
    /// The same settings for tonic's channel (the lease and watch streams).
    ca_pem: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
    server_name_text: Option<String>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("server_name", &self.server_name).field("client_cert", &self.identity.is_some()).finish()
    }
}

impl Tls {
    pub fn new(opts: &TlsOptions) -> Result<Arc<Tls>> {
        let server_name = match &opts.server_name {
            None => None,
            Some(n) => Some(
                ServerName::try_from(n.clone())
                    .map_err(|_| Error::invalid(format!("server_name {n:?} is neither a DNS name nor an IP address")))?,
            ),
        };
        let ca_pem = opts.ca.as_ref().map(|p| read(p, "ca")).transpose()?;
        let mut roots = rustls::RootCertStore::empty();
        match &ca_pem {
            Some(pem) => {
                for cert in certificates(pem, opts.ca.as_ref().expect("read above"), "ca")? {
                    roots.add(cert).map_err(|e| Error::invalid(format!("{}: {e}", what(opts.ca.as_ref().unwrap(), "ca"))))?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(Error::invalid("no CA certificates found on this system: give the CA that signs the members' certificates"));
                }
            }
        }
        let identity = match (&opts.cert, &opts.key) {
            (None, None) => None,
            (Some(_), None) | (None, Some(_)) => {
                return Err(Error::invalid("a client certificate needs its key, and a key its certificate: give both or neither"))
            }
            (Some(c), Some(k)) => Some((read(c, "cert")?, read(k, "key")?)),
        };
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::new(crate::ErrorKind::Internal, e.to_string()))?
            .with_root_certificates(roots);
        let mut config = match &identity {
            None => builder.with_no_client_auth(),
            Some((cert_pem, key_pem)) => {
                let (cert, key) = (opts.cert.as_ref().unwrap(), opts.key.as_ref().unwrap());
                let chain = certificates(cert_pem, cert, "cert")?;
                let private = PrivateKeyDer::from_pem_slice(key_pem)
                    .map_err(|e| Error::invalid(format!("{}: no private key in it ({e})", what(key, "key"))))?;
                builder
                    .with_client_auth_cert(chain, private)
                    .map_err(|e| Error::invalid(format!("{} and {}: {e}", what(cert, "cert"), what(key, "key"))))?
            }
        };
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Arc::new(Tls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name,
            ca_pem,
            identity,
            server_name_text: opts.server_name.clone(),
        }))
    }

    /// The name to check in the certificate of the member at `host`.
    pub fn server_name(&self, host: &str) -> Result<ServerName<'static>> {
        if let Some(n) = &self.server_name {
            return Ok(n.clone());
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        ServerName::try_from(host.to_string()).map_err(|_| Error::invalid(format!("endpoint host {host:?} is not a valid TLS server name")))
    }

    /// The same settings for etcd-client's (tonic's) channel.
    pub fn for_tonic(&self, handshake_timeout: Duration) -> etcd_client::TlsOptions {
        let mut t = etcd_client::TlsOptions::new().timeout(handshake_timeout);
        t = match &self.ca_pem {
            Some(pem) => t.ca_certificate(etcd_client::Certificate::from_pem(pem)),
            None => t.with_native_roots(),
        };
        if let Some((cert, key)) = &self.identity {
            t = t.identity(etcd_client::Identity::from_pem(cert, key));
        }
        if let Some(n) = &self.server_name_text {
            t = t.domain_name(n.clone());
        }
        t
    }
}

/// How an error names a PEM: by its file, or by the option it was given for.
fn what(pem: &Pem, option: &str) -> String {
    match pem {
        Pem::File(p) => format!("{option} file {}", p.display()),
        Pem::Bytes(_) => format!("{option} (PEM given in memory)"),
    }
}

fn read(pem: &Pem, option: &str) -> Result<Vec<u8>> {
    match pem {
        Pem::Bytes(b) => Ok(b.clone()),
        Pem::File(p) => std::fs::read(p).map_err(|e| Error::invalid(format!("{}: {e}", what(pem, option)))),
    }
}

fn certificates(bytes: &[u8], pem: &Pem, option: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::invalid(format!("{}: not PEM certificates ({e})", what(pem, option))))?;
    if certs.is_empty() {
        return Err(Error::invalid(format!("{}: no CERTIFICATE in it", what(pem, option))));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_are_invalid_arguments_naming_the_file() {
        let missing = TlsOptions { ca: Some(Pem::File("/nonexistent/ca.pem".into())), ..Default::default() };
        let e = Tls::new(&missing).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(e.message().contains("/nonexistent/ca.pem"), "{e}");
        let garbage = TlsOptions { ca: Some(Pem::Bytes(b"not a certificate".to_vec())), ..Default::default() };
        assert!(Tls::new(&garbage).unwrap_err().message().contains("no CERTIFICATE"));
        let half = TlsOptions { key: Some(Pem::Bytes(b"x".to_vec())), ..Default::default() };
        assert_eq!(Tls::new(&half).unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
        let name = TlsOptions { server_name: Some("not a name!".into()), ..Default::default() };
        assert_eq!(Tls::new(&name).unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
    }

    #[test]
    fn debug_output_shows_no_pem_contents() {
        let secret = Pem::Bytes(b"-----BEGIN PRIVATE KEY-----secret".to_vec());
        assert!(!format!("{secret:?}").contains("secret"));
    }
}
