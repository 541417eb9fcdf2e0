//! The command line: subcommands, their options, and the `ETCDLOCK_*` variable of each
//! connection option, so that a cron line needs no flags beyond the lock's name.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "Distributed locks, semaphores and leader election on etcd, from the shell";

const EXAMPLES: &str = "\
Examples:
  etcdlock run nightly-backup -- /usr/local/bin/backup.sh
  etcdlock run --timeout 0 --conflict-exit-code 0 reports -- make reports   # skip if busy
  etcdlock run --permits 3 encoders -- ffmpeg -i in.mkv out.mp4            # at most 3 at once
  etcdlock status nightly-backup
  etcdlock elect svc/leader node-1 -- ./serve --primary
  etcdlock elect --observe svc/leader

Connection options may come from the environment instead (ETCDLOCK_ENDPOINTS, ETCDLOCK_USER,
ETCDLOCK_PASSWORD, ETCDLOCK_CA_FILE, ...): see each subcommand's --help.";

#[derive(Debug, Parser)]
#[command(name = "etcdlock", version, about = ABOUT, after_help = EXAMPLES, propagate_version = true)]
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
    /// Exit status when the lock is busy (--timeout 0) or the timeout passes (flock's -E)
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u8))]
    pub conflict_exit_code: u8,
    /// Take one of N permits of a semaphore instead of the lock: at most N commands at once
    /// (every participant must give the same N)
    #[arg(long, value_name = "N")]
    pub permits: Option<u32>,
    #[command(flatten)]
    pub hold: Hold,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(Debug, Args)]
pub struct Status {
    /// The lock's name
    pub name: String,
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
    /// Seconds to wait to lead; default: as long as it takes
    #[arg(long, value_name = "SECONDS", value_parser = seconds, conflicts_with = "observe")]
    pub timeout: Option<f64>,
    /// Exit status when the timeout passes before leading
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u8))]
    pub conflict_exit_code: u8,
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

Exit status: the command's (128 + N if a signal N ended it); the --conflict-exit-code (1) when busy
or timed out; 75 lock lost; 2 bad usage; 69 etcd unreachable; 77 authentication or permission
denied; 126/127 the command could not be run; 70 anything else.

Examples:
  # cron: one backup at a time across hosts; skip this run if another is still going
  */5 * * * * ETCDLOCK_ENDPOINTS=https://etcd1:2379 ETCDLOCK_CA_FILE=/etc/etcd/ca.pem \\
      etcdlock run --timeout 0 --conflict-exit-code 0 backup -- /usr/local/bin/backup.sh
  # a script that fences its writes with the token
  etcdlock run jobs/migrate --shell -- 'migrate --fencing-token \"$ETCDLOCK_FENCING_TOKEN\"'";

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

Examples:
  etcdlock elect svc/leader \"$(hostname)\" -- /usr/local/bin/primary
  etcdlock elect --observe svc/leader";

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
    fn seconds_rejects_negative_and_non_numbers() {
        assert_eq!(seconds("1.5"), Ok(1.5));
        assert!(seconds("-1").is_err() && seconds("soon").is_err() && seconds("inf").is_err());
    }
}
