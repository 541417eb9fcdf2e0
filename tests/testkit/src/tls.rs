//! One etcd member that serves clients over TLS, with throwaway certificates made at test time
//! (rcgen): a CA, a server certificate for `IP:127.0.0.1` and `DNS:localhost`, a client
//! certificate, a certificate for another name, and a second, unrelated CA with a client
//! certificate of its own. The member also listens on a plain port, for health checks and for
//! etcdctl checks that must not depend on the library under test (and, in the benchmark, for
//! the plain rows beside the TLS ones).

use super::{cleanup_at_exit, data_base, etcd_bin, free_port, health, rand_suffix, CLEANUP};
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Writes an ES256 key pair for etcd's JWT auth tokens into `dir` and returns the value of
/// etcd's `--auth-token` flag that uses it.
pub fn jwt_keys(dir: &std::path::Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let key = KeyPair::generate().unwrap(); // ECDSA P-256
    let (private, public) = (dir.join("jwt.key"), dir.join("jwt.pub"));
    std::fs::write(&private, key.serialize_pem()).unwrap();
    std::fs::write(&public, key.public_key_pem()).unwrap();
    format!("jwt,pub-key={},priv-key={},sign-method=ES256", public.display(), private.display())
}

/// Paths of the PEM files in [`Certs::dir`].
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    /// `name` is one of `ca`, `server`, `client`, `other-name`, `other-ca`, `other-ca-client`;
    /// `.pem` is the certificate, `.key` its key.
    pub fn pem(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.pem"))
    }
    pub fn key(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }

    /// Makes every certificate in `dir`.
    pub fn make(dir: PathBuf) -> Certs {
        std::fs::create_dir_all(&dir).unwrap();
        let certs = Certs { dir };
        let ca = certs.ca("ca", "etcdlock test CA");
        certs.leaf(&ca, "server", &["127.0.0.1", "localhost"], "etcd");
        // Not the name of any etcd user: with --client-cert-auth etcd takes the CN for the user.
        certs.leaf(&ca, "client", &["client"], "etcdlock-test-client");
        certs.leaf(&ca, "other-name", &["other.example"], "other");
        let other = certs.ca("other-ca", "an unrelated CA");
        certs.leaf(&other, "other-ca-client", &["client"], "etcdlock-test-client");
        certs.leaf(&other, "other-ca-server", &["127.0.0.1", "localhost"], "etcd");
        certs
    }

    fn ca(&self, name: &str, cn: &str) -> Issuer<'static, KeyPair> {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, cn);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().unwrap();
        std::fs::write(self.pem(name), p.self_signed(&key).unwrap().pem()).unwrap();
        std::fs::write(self.key(name), key.serialize_pem()).unwrap();
        Issuer::new(p, key)
    }

    fn leaf(&self, ca: &Issuer<'_, KeyPair>, name: &str, sans: &[&str], cn: &str) {
        let mut p = CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        // Go checks the client-auth usage on client certificates.
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().unwrap();
        std::fs::write(self.pem(name), p.signed_by(&key, ca).unwrap().pem()).unwrap();
        std::fs::write(self.key(name), key.serialize_pem()).unwrap();
    }
}

/// A single-member etcd serving TLS on one port and plain HTTP on another. Killed on drop.
pub struct TlsEtcd {
    pub tls_port: u16,
    pub plain_port: u16,
    /// The port of etcd's HTTP endpoints (health, metrics, the JSON gateway) when they have one
    /// of their own ([`TlsEtcd::start_with`]); `None`: they share the client ports.
    pub http_port: Option<u16>,
    pub certs: Certs,
    root: PathBuf,
    child: Child,
}

impl TlsEtcd {
    /// Serves TLS with the certificate `server` of [`Certs`] (`server`, `other-name` or
    /// `other-ca-server`). With `client_cert_auth`, the TLS port requires a client certificate
    /// signed by the CA. `extra`: more etcd flags (e.g. `--auth-token-ttl`).
    pub fn start(server: &str, client_cert_auth: bool, extra: &[&str]) -> TlsEtcd {
        TlsEtcd::start_with(server, client_cert_auth, extra, false)
    }

    /// [`TlsEtcd::start`]; with `separate_http`, where etcd has `--listen-client-http-urls`
    /// (3.5.8 and later), its HTTP endpoints get a third port ([`TlsEtcd::http_port`]), so that
    /// both client ports serve gRPC alone, as etcd recommends for production. With HTTP on the
    /// same port, etcd serves gRPC over TLS through Go's HTTP server (`grpc.Server.ServeHTTP`)
    /// instead of gRPC's own, which costs it much of its TLS throughput (etcd-io/etcd#15402;
    /// bench/README.md, TLS). Older members (the 3.5.1 scripts/install-deps.sh installs) have no
    /// such flag and keep HTTP on the client ports.
    pub fn start_with(server: &str, client_cert_auth: bool, extra: &[&str], separate_http: bool) -> TlsEtcd {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| unsafe {
            libc::atexit(cleanup_at_exit);
        });
        let root = data_base().join(format!("etcdlock-tls-{}-{}", std::process::id(), rand_suffix()));
        let certs = Certs::make(root.join("certs"));
        let mut ports: Vec<u16> = Vec::new();
        while ports.len() < 4 {
            let p = free_port();
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        let (tls_port, plain_port, peer_port) = (ports[0], ports[1], ports[2]);
        let http_port = (separate_http && etcd_has_flag("--listen-client-http-urls")).then_some(ports[3]);
        let clients = format!("https://127.0.0.1:{tls_port},http://127.0.0.1:{plain_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let (cert, key, ca) = (certs.pem(server), certs.key(server), certs.pem("ca"));
        let mut args: Vec<String> = [
            "--name", "m0",
            "--data-dir", root.join("data").to_str().unwrap(),
            "--listen-client-urls", &clients,
            "--advertise-client-urls", &clients,
            "--listen-peer-urls", &peer,
            "--initial-advertise-peer-urls", &peer,
            "--initial-cluster", &format!("m0={peer}"),
            "--cert-file", cert.to_str().unwrap(),
            "--key-file", key.to_str().unwrap(),
            "--log-level", "error",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // etcd 3.5 requires client certificates as soon as it has a trusted CA file.
        if client_cert_auth {
            args.extend(["--client-cert-auth".to_string(), "--trusted-ca-file".to_string(), ca.to_str().unwrap().to_string()]);
        }
        if let Some(port) = http_port {
            args.extend(["--listen-client-http-urls".to_string(), format!("http://127.0.0.1:{port}")]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let log = std::fs::File::create(root.join("etcd.log")).unwrap();
        let child = Command::new(etcd_bin())
            .args(&args)
            .env_remove("ETCD_BIN")
            .env_remove("ETCDCTL_BIN")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("cannot start etcd");
        CLEANUP.lock().unwrap().push((child.id(), root.clone()));
        let etcd = TlsEtcd { tls_port, plain_port, http_port, certs, root, child };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !health(http_port.unwrap_or(plain_port)) {
            assert!(Instant::now() < deadline, "TLS etcd did not become healthy: {}", etcd.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        etcd
    }

    pub fn https(&self) -> String {
        format!("https://127.0.0.1:{}", self.tls_port)
    }

    pub fn plain(&self) -> String {
        format!("http://127.0.0.1:{}", self.plain_port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("etcd.log")).unwrap_or_default()
    }
}

/// Whether `etcd --help` lists `flag`.
fn etcd_has_flag(flag: &str) -> bool {
    let help = Command::new(etcd_bin()).arg("--help").env_remove("ETCD_BIN").output().expect("etcd --help");
    String::from_utf8_lossy(&help.stdout).contains(flag) || String::from_utf8_lossy(&help.stderr).contains(flag)
}

impl Drop for TlsEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
