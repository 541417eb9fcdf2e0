//! The command line: subcommands, their options, and the `ETCDLOCK_*` variable of each
//! connection option, so that a cron line needs no flags beyond the lock's name.

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

const ABOUT: &str = "Distributed locks, semaphores and leader election on etcd, from the shell";

/// `etcdlock --version`: the version and the git commit it was built from (cli/build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("ETCDLOCK_GIT_COMMIT"), ")");

const EXAMPLES: &str = "\
Examples:
  etcdlock run nightly-backup -- /usr/local/bin/backup.sh
  etcdlock run --timeout 0 --conflict-exit-code 0 reports -- make reports   # skip if busy
  etcdlock run --permits 3 encoders -- ffmpeg -i in.mkv out.mp4            # at most 3 at once
  etcdlock status nightly-backup
  etcdlock elect svc/leader node-1 -- ./serve --primary
  etcdlock elect --observe svc/leader
  etcdlock queue put resize --data img-17.png
  etcdlock queue work resize -- ./resize.sh          # the payload on stdin, one task at a time
  etcdlock run --health-addr :8080 svc/indexer -- ./indexer   # GET /healthz: 200 only while held
  source <(etcdlock completions bash)                 # or zsh, fish; `etcdlock man | man -l -`

Connection options may come from the environment instead (ETCDLOCK_ENDPOINTS, ETCDLOCK_USER,
ETCDLOCK_PASSWORD, ETCDLOCK_CA_FILE, ...): see each subcommand's --help.";

#[derive(Debug, Parser)]
#[command(name = "etcdlock", version = VERSION, about = ABOUT, after_help = EXAMPLES, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command while holding a lock (or a semaphore permit); release when it exits
    #[command(after_help = RUN_HELP)]
    Run(Run),
    /// Show a lock's holder and its queue, in order; exit 0 if held, 1 if free
    #[command(after_help = STATUS_HELP)]
    Status(Status),
    /// Campaign in an election: print or run a command while leader; or observe the leader
    #[command(after_help = ELECT_HELP)]
    Elect(Elect),
    /// A task queue: add tasks, or work on them one at a time with a command
    #[command(subcommand)]
    Queue(Queue),
    /// Fences (ETCDLOCK_FENCE): check whether the acquisition a fence names still holds
    #[command(subcommand)]
    Fence(FenceCmd),
    /// Print a shell completion script (bash, zsh, fish, ...) on stdout
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(Completions),
    /// Print the manual page (roff) on stdout, or write one page per command to a directory
    #[command(after_help = MAN_HELP)]
    Man(Man),
}

#[derive(Debug, Args)]
pub struct Completions {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct Man {
    /// Write etcdlock.1 and a page per subcommand (etcdlock-run.1, ...) into DIR instead
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum FenceCmd {
    /// Exit 0 if the acquisition FENCE names still holds the lock now, 1 if not (advisory: it
    /// may stop holding right after; a database that checks the token is what refuses late writes)
    Check(FenceCheck),
}

#[derive(Debug, Args)]
pub struct FenceCheck {
    /// A fence's string form, as `etcdlock run` passes it in ETCDLOCK_FENCE
    pub fence: String,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Subcommand)]
pub enum Queue {
    /// Add a task (its payload from --data, else stdin); print its id
    #[command(after_help = PUT_HELP)]
    Put(Put),
    /// Claim tasks one at a time and run a command for each: exit status 0 acks, other nacks
    #[command(after_help = WORK_HELP)]
    Work(Work),
}

/// How to reach etcd: the same settings as the libraries' client options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Connection")]
pub struct Conn {
    /// etcd client URLs, comma-separated (https:// for TLS)
    #[arg(long, env = "ETCDLOCK_ENDPOINTS", value_delimiter = ',', default_value = "http://127.0.0.1:2379")]
    pub endpoints: Vec<String>,
    /// User name, for etcd with authentication enabled
    #[arg(long, env = "ETCDLOCK_USER")]
    pub user: Option<String>,
    /// The user's password (prefer ETCDLOCK_PASSWORD or --password-file: arguments are visible to every local user)
    #[arg(long, env = "ETCDLOCK_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// A file whose first line is the user's password
    #[arg(long, env = "ETCDLOCK_PASSWORD_FILE", conflicts_with = "password")]
    pub password_file: Option<PathBuf>,
    /// CA certificates (PEM) that sign the members' certificates; default: the system's roots
    #[arg(long, visible_alias = "cacert", env = "ETCDLOCK_CA_FILE")]
    pub ca_file: Option<PathBuf>,
    /// Client certificate (PEM), for members that require one (mTLS)
    #[arg(long, visible_alias = "cert", env = "ETCDLOCK_CERT_FILE", requires = "key_file")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM)
    #[arg(long, visible_alias = "key", env = "ETCDLOCK_KEY_FILE", requires = "cert_file")]
    pub key_file: Option<PathBuf>,
    /// Name to check in the members' certificates instead of the endpoints' hosts
    #[arg(long, env = "ETCDLOCK_SERVER_NAME")]
    pub server_name: Option<String>,
    /// Seconds to wait for etcd to answer when connecting
    #[arg(long, env = "ETCDLOCK_CONNECT_TIMEOUT", default_value = "5", value_name = "SECONDS", value_parser = seconds)]
    pub connect_timeout: f64,
    /// Seconds each request may take, retries included
    #[arg(long, env = "ETCDLOCK_REQUEST_TIMEOUT", default_value = "5", value_name = "SECONDS", value_parser = seconds)]
    pub request_timeout: f64,
    /// Log the library's events (acquisitions, releases, reconnections, losses) on stderr
    #[arg(short, long, env = "ETCDLOCK_VERBOSE")]
    pub verbose: bool,
}

/// What `run` and `elect` share: the lease, and how the command is started and stopped.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Lock")]
pub struct Hold {
    /// Lease TTL in seconds: how long etcd keeps the lock after this process stops answering
    #[arg(long, env = "ETCDLOCK_TTL", default_value_t = 10)]
    pub ttl: i64,
    /// Seconds between SIGTERM and SIGKILL when the lock is lost (never later than the moment
    /// etcd could hand the lock on: at once when the key was deleted or the lease revoked)
    #[arg(long, default_value = "5", value_name = "SECONDS", value_parser = seconds)]
    pub kill_grace: f64,
    /// Run the command with `sh -c` (give it as one argument)
    #[arg(long)]
    pub shell: bool,
}

#[derive(Debug, Args)]
pub struct Run {
    /// The lock's name (its queue keys are `NAME/<lease hex>`, as `etcdctl lock NAME` uses)
    pub name: String,
    /// The command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
    /// Seconds to wait for the lock; 0 tries once; default: wait for as long as it takes
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub timeout: Option<f64>,
    /// Exit status when the lock is busy (--timeout 0) or the timeout passes (flock's -E);
    /// with --once-per, when this period's job is done or runs elsewhere (default 0 then)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8))]
    pub conflict_exit_code: Option<u8>,
    /// Take one of N permits of a semaphore instead of the lock: at most N commands at once
    /// (every participant must give the same N)
    #[arg(long, value_name = "N", conflicts_with = "once_per")]
    pub permits: Option<u32>,
    /// Take slots of the pool NAME instead of the lock: CMD gets their ids in ETCDLOCK_SLOTS
    /// (comma-separated) and ETCDLOCK_SLOT (the first). The pool is defined by --slots or
    /// --size, or by whoever defined it first
    #[arg(long, conflicts_with_all = ["once_per", "permits"])]
    pub pool: bool,
    /// How many permits (with --permits) or slots (with --pool) to take at once
    #[arg(long, value_name = "K")]
    pub count: Option<u32>,
    /// The pool's slot ids, comma-separated (with --pool)
    #[arg(long, value_name = "IDS", requires = "pool", conflicts_with = "size", value_delimiter = ',')]
    pub slots: Option<Vec<String>>,
    /// A pool of N slots named 0 to N-1 (with --pool)
    #[arg(long, value_name = "N", requires = "pool")]
    pub size: Option<usize>,
    /// How long a slot whose holder died rests before it is handed out again (with --pool;
    /// default 0)
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "pool")]
    pub reuse_delay: Option<Duration>,
    /// Run CMD at most once per period across every host that runs this (e.g. from cron): the
    /// slot is the period boundary nearest now; it is done when CMD exits 0, and a failed or
    /// killed CMD leaves it to the next trigger in the period
    #[arg(long, value_name = "DURATION", value_parser = duration, conflicts_with = "timeout")]
    pub once_per: Option<Duration>,
    #[arg(long, env = "ETCDLOCK_HEALTH_ADDR", value_name = "HOST:PORT", value_parser = health_addr, help = HEALTH_ADDR, help_heading = "Health")]
    pub health_addr: Option<SocketAddr>,
    #[command(flatten)]
    pub hold: Hold,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Args)]
pub struct Status {
    /// The name: a lock's, a semaphore's, a read-write lock's, an election's, a task queue's or a
    /// pool's (with --prefix instead: every name under a prefix)
    #[arg(required_unless_present = "prefix", conflicts_with = "prefix")]
    pub name: Option<String>,
    /// Every name under PREFIX ("" for all) and its kind, one line each: locks, semaphores,
    /// read-write locks, task queues, pools, once-per-period jobs, registry services
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Print JSON (one object) instead of a table
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Args)]
pub struct Elect {
    /// The election's name (keys `NAME/<lease hex>`, as `etcdctl elect NAME` uses)
    pub name: String,
    /// This candidate's proposal: the leader's value once it leads (not with --observe)
    #[arg(required_unless_present = "observe", conflicts_with = "observe")]
    pub proposal: Option<String>,
    /// A command to run while leader, after `--`; without one, print the proposal when
    /// leading and lead until interrupted
    #[arg(last = true, value_name = "CMD", conflicts_with = "observe")]
    pub cmd: Vec<String>,
    /// Print the leader's value on each change (a line "-" when there is no leader) until interrupted
    #[arg(long, short = 'l', visible_alias = "listen")]
    pub observe: bool,
    /// With --observe: one JSON object per line per change: {"name", "leader" (true/false),
    /// "value", "key", "fencing_token" (the leader key's create revision), "lease" (hex)},
    /// null for each of the last four when nobody leads
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait to lead; default: as long as it takes
    #[arg(long, value_name = "SECONDS", value_parser = seconds, conflicts_with = "observe")]
    pub timeout: Option<f64>,
    /// Exit status when the timeout passes before leading
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u8))]
    pub conflict_exit_code: u8,
    #[arg(long, env = "ETCDLOCK_HEALTH_ADDR", value_name = "HOST:PORT", value_parser = health_addr, help = HEALTH_ADDR, help_heading = "Health")]
    pub health_addr: Option<SocketAddr>,
    #[command(flatten)]
    pub hold: Hold,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Args)]
pub struct Put {
    /// The queue's name (its keys are under `NAME/`)
    pub name: String,
    /// The task's id (default: a random one): a put with the id of a task that is still in the
    /// queue (pending, claimed, delayed or dead) changes nothing
    #[arg(long)]
    pub id: Option<String>,
    /// Higher is claimed first; equal priorities in the order of the puts
    #[arg(long, default_value_t = 0, value_name = "N", allow_negative_numbers = true)]
    pub priority: i32,
    /// Not claimable before this long (`90`, `1.5s`, `500ms`, `2m`, `1h`; whole seconds, rounded up)
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub delay: Option<Duration>,
    /// The payload (default: stdin, read to its end)
    #[arg(long, value_name = "TEXT")]
    pub data: Option<String>,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Args)]
pub struct Work {
    /// The queue's name
    pub name: String,
    /// The command to run for each task, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
    /// Deliveries of a task before it goes to the dead letters
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,
    /// How long each claim waits for a task; when it passes with none, exit (0; 1 with --once).
    /// `0` takes a task only if one is there. Default: wait for as long as it takes
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,
    /// Handle one task, then exit with the command's status
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub hold: Hold,
    #[command(flatten)]
    pub conn: Conn,
}

const RUN_HELP: &str = "\
The command runs in its own process group with these variables:
  ETCDLOCK_NAME, ETCDLOCK_KEY, ETCDLOCK_FENCING_TOKEN (the key's create revision), ETCDLOCK_LEASE
  (hex), ETCDLOCK_ENDPOINTS; and ETCD_LOCK_KEY / ETCD_LOCK_REV as `etcdctl lock` sets them (REV
  is the key's create revision here: the fencing token).

If the lock is lost while the command runs (its lease expired at the conservative local deadline,
its key was deleted, the lease revoked), the whole group gets SIGTERM, then SIGKILL after
--kill-grace, and etcdlock exits 75. SIGINT, SIGTERM, SIGHUP or SIGQUIT while waiting leaves the
queue (no key is left) and exits 128 + the signal; while the command runs they are forwarded to
its group, and the lock is released once it exits.

Health endpoints (--health-addr HOST:PORT, or ETCDLOCK_HEALTH_ADDR): GET /healthz answers 200
\"ok\" only while this process holds the lock and its command runs; 503 while it waits, at once
when the loss is known (before the command is stopped), and once the command ended. GET /metrics
answers the library's Prometheus metrics (etcdlock_*) and etcdlock_cli_active (1 while /healthz
answers 200). `:PORT` listens on every interface; port 0 takes a free one, named on stderr. An
address that cannot be parsed or listened on exits 2 before etcd is contacted.

Exit status: the command's (128 + N if a signal N ended it); the --conflict-exit-code (1) when busy
or timed out; 75 lock lost; 2 bad usage; 69 etcd unreachable; 77 authentication or permission
denied; 126/127 the command could not be run; 70 anything else.

Examples:
  # cron: one backup at a time across hosts; skip this run if another is still going
  */5 * * * * ETCDLOCK_ENDPOINTS=https://etcd1:2379 ETCDLOCK_CA_FILE=/etc/etcd/ca.pem \\
      etcdlock run --timeout 0 --conflict-exit-code 0 backup -- /usr/local/bin/backup.sh
  # a script that fences its writes with the token
  etcdlock run jobs/migrate --shell -- 'migrate --fencing-token \"$ETCDLOCK_FENCING_TOKEN\"'
  # one active indexer; GET :8080/healthz says 200 only on the host that runs it
  etcdlock run --health-addr :8080 svc/indexer -- /usr/local/bin/indexer";

const STATUS_HELP: &str = "\
One line per queue key, the holders first: position, key, fencing token, lease (hex), the
seconds its lease has left, whether it holds or waits and for how long (for keys placed by
`etcdlock run`, from the times they record; `-` for other clients), its mode (`permits=N`,
`read`, `write`) and its value.

Exit status: 0 held, 1 free, or an error's (see `etcdlock run --help`).";

const ELECT_HELP: &str = "\
The election shares its keys with `etcdctl elect NAME` and Go's concurrency.Election. With a
command, it runs while this candidate leads, with the same variables and loss and signal rules
as `etcdlock run`. Without one, the proposal is printed once leading, and leadership is kept
until SIGINT/SIGTERM (then resigned) or lost (exit 75).

--observe prints one line per leader change; with --json, one JSON object per line:
  {\"name\":\"svc/leader\",\"leader\":true,\"value\":\"node-1\",\"key\":\"svc/leader/694d8f1c2e3a4b05\",
   \"fencing_token\":1234,\"lease\":\"694d8f1c2e3a4b05\"}
and {\"name\":..,\"leader\":false,\"value\":null,\"key\":null,\"fencing_token\":null,\"lease\":null} when
nobody leads.

Health endpoints (--health-addr HOST:PORT, or ETCDLOCK_HEALTH_ADDR, which --observe ignores):
GET /healthz answers 200 \"ok\" only while this candidate leads (and its command runs); 503
while it campaigns, at once when the loss is known, and once it resigns or its command ended.
GET /metrics: the library's Prometheus metrics and etcdlock_cli_active, as for `etcdlock run`.
In Kubernetes, a readiness probe then marks only the leader's pod ready, so that a Service
sends traffic to the leader alone:
  containers:
  - name: app
    command: [etcdlock, elect, --health-addr, \":8080\", svc/leader, $(POD_NAME), --, /app/serve]
    readinessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 2
      failureThreshold: 1

Examples:
  etcdlock elect svc/leader \"$(hostname)\" -- /usr/local/bin/primary
  etcdlock elect --health-addr 127.0.0.1:8080 svc/leader \"$(hostname)\" -- ./serve
  etcdlock elect --observe svc/leader
  etcdlock elect --observe --json svc/leader | jq -r .value";

const HEALTH_ADDR: &str = "Serve GET /healthz (200 \"ok\" only while this process holds the lock or \
leads; 503 otherwise) and GET /metrics (Prometheus text) over HTTP on HOST:PORT (`:PORT` for every \
interface; port 0: a free one, named on stderr)";

const COMPLETIONS_HELP: &str = "\
Where to put the script so that each new shell loads it:
  etcdlock completions bash > /usr/share/bash-completion/completions/etcdlock   # or ~/.local/share/bash-completion/completions/etcdlock
  etcdlock completions zsh > /usr/local/share/zsh/site-functions/_etcdlock      # a directory in $fpath
  etcdlock completions fish > ~/.config/fish/completions/etcdlock.fish
Or for this shell only: source <(etcdlock completions bash)";

const MAN_HELP: &str = "\
Examples:
  etcdlock man | man -l -
  etcdlock man --out-dir /usr/local/share/man/man1   # etcdlock.1, etcdlock-run.1, ...";

const PUT_HELP: &str = "\
Prints the task's id on stdout. Exit status: 0 put (or already there, with --id); 2 bad usage;
69 etcd unreachable; 77 authentication or permission denied; 70 anything else.

Examples:
  etcdlock queue put resize --data img-17.png
  etcdlock queue put resize --id img-17 --priority 5 < job.json   # idempotent by id
  etcdlock queue put reports --delay 10m --data weekly";

const WORK_HELP: &str = "\
Claims the next task (the highest priority first, then the oldest), runs CMD with the task's
payload on its stdin and these variables: ETCDLOCK_QUEUE, ETCDLOCK_TASK_ID, ETCDLOCK_TASK_ATTEMPT
(1 on the first delivery), ETCDLOCK_TASK_PRIORITY, ETCDLOCK_FENCING_TOKEN (the claim's create
revision: larger for every later claim), ETCDLOCK_ENDPOINTS. Exit status 0 acks the task (it is
deleted); any other status nacks it (delivered again, to the dead letters after --max-attempts
deliveries). Then the next task, until --timeout passes with none, or --once.

CMD runs in its own process group, as under `etcdlock run`: if the claim is lost while it runs
(its lease expired at the conservative local deadline or was revoked, the claim deleted) the
whole group is stopped (SIGTERM, SIGKILL after --kill-grace, at once if another worker may have
the task already) and the task goes to another worker; if etcdlock itself dies or stops, a
guardian process kills the group. SIGINT, SIGTERM, SIGHUP or SIGQUIT stop claiming; a running
CMD gets the signal, its task is nacked once it exits, and the exit is 128 + the signal.

The claim stores `<host>:<pid> since=<unix ms>` (when the worker asked for the task) for
`etcdlock status NAME`.

Exit status: 0 when --timeout passed with no task; with --once, CMD's status (1 when no task
came in time); 75 the claim was lost (--once); 126/127 CMD could not be run (its task nacked);
128 + N a signal; otherwise as `etcdlock run`.

Examples:
  etcdlock queue work resize -- ./resize.sh
  etcdlock queue work --timeout 30s --max-attempts 3 resize --shell -- 'convert - -resize 50% \"out/$ETCDLOCK_TASK_ID.png\"'";

/// A non-negative duration: seconds (`1.5`), or a number with a unit (`500ms`, `2s`, `3m`, `1h`).
pub fn duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration (0 or more; e.g. 1.5, 500ms, 30s, 2m, 1h)");
    let (number, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    match number.parse::<f64>() {
        Ok(v) if v >= 0.0 && (v * scale) <= 1e10 && !number.starts_with('+') => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(bad()),
    }
}

/// `--health-addr`: `HOST:PORT` (an IP address, `[v6]:PORT`, or a name resolved now), or `:PORT`
/// for every interface.
pub fn health_addr(s: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let bad = |why: &str| format!("{s:?} is not HOST:PORT ({why}; e.g. 127.0.0.1:8080, :8080, [::1]:8080, localhost:8080)");
    if let Some(port) = s.strip_prefix(':') {
        return port.parse::<u16>().map(|p| SocketAddr::from(([0, 0, 0, 0], p))).map_err(|_| bad("a port is 0 to 65535"));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let Some((host, port)) = s.rsplit_once(':').filter(|(h, _)| !h.is_empty()) else {
        return Err(bad("no port"));
    };
    let Ok(port) = port.parse::<u16>() else {
        return Err(bad("a port is 0 to 65535"));
    };
    match (host, port).to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(addr)) => Ok(addr),
        _ => Err(bad(&format!("cannot resolve {host:?}"))),
    }
}

/// A non-negative number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds (0 or more)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn health_addresses_take_an_ip_a_name_or_only_a_port() {
        assert_eq!(health_addr("127.0.0.1:8080"), Ok("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(health_addr(":9000"), Ok("0.0.0.0:9000".parse().unwrap()));
        assert_eq!(health_addr("[::1]:0"), Ok("[::1]:0".parse().unwrap()));
        assert!(health_addr("localhost:8080").is_ok_and(|a| a.ip().is_loopback() && a.port() == 8080));
        for bad in ["", "8080", ":", ":-1", ":65536", "127.0.0.1", "127.0.0.1:x", ":8080x"] {
            assert!(health_addr(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn seconds_rejects_negative_and_non_numbers() {
        assert_eq!(seconds("1.5"), Ok(1.5));
        assert!(seconds("-1").is_err() && seconds("soon").is_err() && seconds("inf").is_err());
    }

    #[test]
    fn durations_take_seconds_or_a_unit() {
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        for bad in ["-1", "", "s", "1d", "inf", "NaN", "1e300", "2 s", "+1"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }
}
