//! The bench's own etcd when `tls` rows run: one member serving clients both over plain HTTP/2
//! and over TLS requiring a client certificate (mTLS), on two ports, with its data in /dev/shm
//! and certificates made for the run (rcgen, `etcd_testkit::tls::Certs`, as the core's TLS tests
//! make them).
//!
//! Where etcd has `--listen-client-http-urls` (3.5.8 and later), its HTTP endpoints (health,
//! metrics, the JSON gateway) get a third port, so that both client ports serve gRPC alone, as
//! etcd recommends for production: with HTTP on the same port, etcd serves gRPC over TLS through
//! Go's HTTP server (`grpc.Server.ServeHTTP`) instead of gRPC's own, which costs it about half
//! of its TLS throughput here (etcd-io/etcd#15402). Older members (the 3.5.1 scripts/install-deps.sh
//! installs) have no such flag: their `tls` rows measure that slower path.

use etcd_testkit::tls::Certs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct TlsEtcd {
    pub plain: String,
    pub https: String,
    pub certs: Certs,
    /// Whether HTTP has a port of its own (gRPC over TLS served natively).
    pub separate_http: bool,
    pub version: String,
    root: PathBuf,
    child: Child,
}

impl TlsEtcd {
    pub fn start() -> TlsEtcd {
        let etcd = etcd_testkit::etcd_bin();
        let help = Command::new(&etcd).arg("--help").env_remove("ETCD_BIN").output().expect("etcd --help");
        let separate_http = String::from_utf8_lossy(&help.stdout).contains("--listen-client-http-urls")
            || String::from_utf8_lossy(&help.stderr).contains("--listen-client-http-urls");
        let (major, minor, patch) = etcd_testkit::etcd_version();
        let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let root = base.join(format!("etcdlock-bench-tls-{}-{}", std::process::id(), etcd_testkit::rand_suffix()));
        let certs = Certs::make(root.join("certs"));
        let mut ports = Vec::new();
        while ports.len() < 4 {
            let p = etcd_testkit::free_port();
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        let (tls_port, plain_port, http_port, peer_port) = (ports[0], ports[1], ports[2], ports[3]);
        let clients = format!("https://127.0.0.1:{tls_port},http://127.0.0.1:{plain_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let path = |p: PathBuf| p.to_str().unwrap().to_string();
        let mut args: Vec<String> = vec![
            "--name".into(), "m0".into(),
            "--data-dir".into(), path(root.join("data")),
            "--listen-client-urls".into(), clients.clone(),
            "--advertise-client-urls".into(), clients,
            "--listen-peer-urls".into(), peer.clone(),
            "--initial-advertise-peer-urls".into(), peer.clone(),
            "--initial-cluster".into(), format!("m0={peer}"),
            "--cert-file".into(), path(certs.pem("server")),
            "--key-file".into(), path(certs.key("server")),
            "--client-cert-auth".into(),
            "--trusted-ca-file".into(), path(certs.pem("ca")),
            "--log-level".into(), "error".into(),
        ];
        let health_port = if separate_http {
            args.extend(["--listen-client-http-urls".into(), format!("http://127.0.0.1:{http_port}")]);
            http_port
        } else {
            plain_port
        };
        let log = std::fs::File::create(root.join("etcd.log")).unwrap();
        let child = Command::new(&etcd)
            .args(&args)
            .env_remove("ETCD_BIN")
            .env_remove("ETCDCTL_BIN")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("cannot start etcd");
        let me = TlsEtcd {
            plain: format!("http://127.0.0.1:{plain_port}"),
            https: format!("https://127.0.0.1:{tls_port}"),
            certs,
            separate_http,
            version: format!("{major}.{minor}.{patch}"),
            root,
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !etcd_testkit::health(health_port) {
            assert!(Instant::now() < deadline, "TLS etcd did not become healthy: {}", me.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        me
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("etcd.log")).unwrap_or_default()
    }
}

impl Drop for TlsEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
