//! Real etcd servers on 127.0.0.1 with free ports and temporary data dirs, for tests and
//! benchmarks. Every member is killed by PID when its `Etcd` is dropped and, as a backstop,
//! by an atexit hook when the process exits.

use std::net::{TcpListener, TcpStream};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod peers;
pub mod proxy;
pub mod tls;
pub mod silent;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

pub fn etcd_bin() -> PathBuf {
    if let Ok(p) = std::env::var("ETCD_BIN") {
        return p.into();
    }
    let local = repo_root().join(".tools/bin/etcd");
    if local.exists() {
        return local;
    }
    for p in ["/usr/bin/etcd", "/usr/local/bin/etcd"] {
        if Path::new(p).exists() {
            return p.into();
        }
    }
    panic!("no etcd found: run scripts/install-deps.sh or set ETCD_BIN");
}

/// The version of the etcd server the tests run, from `etcd --version` (e.g. (3, 5, 1)).
pub fn etcd_version() -> (u32, u32, u32) {
    let out = Command::new(etcd_bin()).arg("--version").env_remove("ETCD_BIN").output().expect("etcd --version");
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.lines().find_map(|l| l.strip_prefix("etcd Version: ")).expect("a version line");
    let mut parts = v.trim().split('.').map(|p| p.parse().expect("a numeric version"));
    (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap())
}

pub fn etcdctl_bin() -> PathBuf {
    if let Ok(p) = std::env::var("ETCDCTL_BIN") {
        return p.into();
    }
    let next = etcd_bin().with_file_name("etcdctl");
    if next.exists() {
        return next;
    }
    "/usr/bin/etcdctl".into()
}

/// A port of 127.0.0.1 free at the time of the call, and never handed out before in this
/// process. Picked below the kernel's ephemeral range when there is room: a port the kernel
/// chose would be free only until the kernel hands it to some outgoing connection (a proxy's, a
/// client's) before the etcd meant to listen on it binds it.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    const LOW: u16 = 10000;
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    if ephemeral > LOW + 1000 {
        // A different start per process (pid), then a stride through the range.
        let span = u32::from(ephemeral - LOW);
        let mut x = std::process::id().wrapping_mul(2_654_435_761) ^ given.len() as u32;
        for _ in 0..2000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let port = LOW + ((x >> 8) % span) as u16;
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.push(port);
                return port;
            }
        }
    }
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    given.push(port);
    port
}

/// Where members keep their data: /dev/shm where it exists (a disk's fsyncs would set the pace
/// of every write), else the temporary directory.
fn data_base() -> PathBuf {
    if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() }
}

/// PIDs and dirs to clean up when the test process exits.
static CLEANUP: Mutex<Vec<(u32, PathBuf)>> = Mutex::new(Vec::new());

extern "C" fn cleanup_at_exit() {
    if let Ok(list) = CLEANUP.lock() {
        for (pid, dir) in list.iter() {
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

pub struct Member {
    pub name: String,
    pub client_port: u16,
    pub peer_port: u16,
    /// The peer port the others dial: `peer_port`, or its proxy's (`Etcd::start_peer_proxied`).
    pub advertised_peer_port: u16,
    pub data_dir: PathBuf,
    child: Option<Child>,
}

impl Member {
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
}

pub struct Etcd {
    pub members: Vec<Member>,
    root: PathBuf,
    initial_cluster: String,
    token: String,
    /// More etcd flags for every member.
    extra: Vec<String>,
    /// In front of each member's peer port, when started by `start_peer_proxied`.
    peer_proxies: Vec<proxy::Proxy>,
}

impl Etcd {
    /// Starts an `n`-member cluster and waits until every member is healthy.
    pub fn start(n: usize) -> Etcd {
        Etcd::start_with_args(n, &[])
    }

    /// [`Etcd::start`], with more etcd flags for every member (e.g. `--auth-token-ttl 2`).
    pub fn start_with_args(n: usize, extra: &[&str]) -> Etcd {
        Etcd::start_inner(n, extra, false)
    }

    fn start_inner(n: usize, extra: &[&str], peer_proxied: bool) -> Etcd {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| unsafe {
            libc::atexit(cleanup_at_exit);
        });
        let token = format!("etcdlock-test-{}-{}", std::process::id(), rand_suffix());
        let root = data_base().join(&token);
        std::fs::create_dir_all(&root).unwrap();
        let mut peer_proxies = Vec::new();
        let members: Vec<Member> = (0..n)
            .map(|i| {
                let peer_port = free_port();
                let advertised_peer_port = match peer_proxied {
                    true => {
                        peer_proxies.push(proxy::Proxy::start(peer_port));
                        peer_proxies[i].port()
                    }
                    false => peer_port,
                };
                Member { name: format!("m{i}"), client_port: free_port(), peer_port, advertised_peer_port, data_dir: root.join(format!("m{i}")), child: None }
            })
            .collect();
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.advertised_peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let extra = extra.iter().map(|s| s.to_string()).collect();
        let mut etcd = Etcd { members, root, initial_cluster, token, extra, peer_proxies };
        for i in 0..n {
            etcd.spawn(i, "new");
        }
        for i in 0..n {
            etcd.wait_healthy(i);
        }
        etcd
    }

    /// [`Etcd::start_with_args`] with JWT auth tokens, signed with a throwaway ES256 key pair
    /// (removed once the members have read it). A JWT carries the auth revision it was issued
    /// at, so any change to users or roles makes every earlier token "old"; etcd's default
    /// simple tokens never are, since it checks them against its current revision.
    pub fn start_with_jwt(n: usize, extra: &[&str]) -> Etcd {
        let dir = data_base().join(format!("etcdlock-jwt-{}-{}", std::process::id(), rand_suffix()));
        let flag = tls::jwt_keys(&dir);
        let mut args = vec!["--auth-token", flag.as_str()];
        args.extend_from_slice(extra);
        let etcd = Etcd::start_with_args(n, &args);
        let _ = std::fs::remove_dir_all(&dir);
        etcd
    }

    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(Member::endpoint).collect()
    }

    fn spawn(&mut self, i: usize, state: &str) {
        let m = &self.members[i];
        let log = std::fs::File::create(self.root.join(format!("{}.log", m.name))).unwrap();
        let mut cmd = Command::new(etcd_bin());
        cmd.args([
            "--name", &m.name,
            "--data-dir", m.data_dir.to_str().unwrap(),
            "--listen-client-urls", &m.endpoint(),
            "--advertise-client-urls", &m.endpoint(),
            "--listen-peer-urls", &format!("http://127.0.0.1:{}", m.peer_port),
            "--initial-advertise-peer-urls", &format!("http://127.0.0.1:{}", m.advertised_peer_port),
            "--initial-cluster", &self.initial_cluster,
            "--initial-cluster-state", state,
            "--initial-cluster-token", &self.token,
            "--log-level", "error",
        ])
        .args(&self.extra)
        .env_remove("ETCD_BIN")
        .env_remove("ETCDCTL_BIN")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
        let child = cmd.spawn().expect("cannot start etcd");
        CLEANUP.lock().unwrap().push((child.id(), self.root.clone()));
        self.members[i].child = Some(child);
    }

    fn wait_healthy(&self, i: usize) {
        let port = self.members[i].client_port;
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if health(port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(self.root.join(format!("m{i}.log"))).unwrap_or_default();
        panic!("etcd member {i} did not become healthy:\n{log}");
    }

    /// SIGKILLs member `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again with its data, and waits until it is healthy.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i, "existing");
        self.wait_healthy(i);
    }

    pub fn signal(&self, i: usize, sig: i32) {
        if let Some(pid) = self.members[i].pid() {
            unsafe { libc::kill(pid as i32, sig) };
        }
    }

    /// Index of the current leader, asked of the live members.
    pub async fn leader(&self) -> usize {
        for _ in 0..100 {
            for (i, m) in self.members.iter().enumerate() {
                if m.child.is_none() {
                    continue;
                }
                let Ok(mut c) = etcd_client::Client::connect([m.endpoint()], None).await else { continue };
                if let Ok(s) = c.status().await {
                    if s.leader() != 0 && s.header().map(|h| h.member_id()) == Some(s.leader()) {
                        return i;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no leader found");
    }

    /// Runs etcdctl against the live members.
    pub fn etcdctl(&self, args: &[&str]) -> std::process::Output {
        etcdctl_cmd(&self.live_endpoints(), args).output().expect("cannot run etcdctl")
    }

    pub fn live_endpoints(&self) -> String {
        self.members.iter().filter(|m| m.child.is_some()).map(Member::endpoint).collect::<Vec<_>>().join(",")
    }
}

pub fn etcdctl_cmd(endpoints: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(etcdctl_bin());
    cmd.env("ETCDCTL_API", "3").arg(format!("--endpoints={endpoints}")).args(args);
    cmd
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl Etcd {
    /// Member `i`'s Prometheus metrics, as text.
    pub fn metrics(&self, i: usize) -> String {
        http_get(self.members[i].client_port, "/metrics").unwrap_or_default()
    }
}

/// The sum of the samples of `name` whose labels contain every one of `labels` (each written
/// as in the exposition format, e.g. `grpc_method="Txn"`), in Prometheus text `metrics`.
pub fn metric_sum(metrics: &str, name: &str, labels: &[&str]) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).ok()?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).ok()?;
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    Some(body)
}

/// Whether the etcd whose HTTP endpoints are on `port` of 127.0.0.1 answers `/health` healthy.
pub fn health(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body.contains("\"health\":\"true\"")
}

pub fn rand_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    format!("{:x}", h.finish() & 0xffff_ffff)
}

