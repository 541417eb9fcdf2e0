//! `etcdlock`: run a command under an etcd lock (stopped before anyone else can get the lock),
//! show a lock's queue, campaign in or observe an election, put tasks in a task queue and work
//! on them. See `etcdlock --help`.

mod args;
mod child;
mod connect;
mod elect;
mod exit;
mod fence;
mod generate;
mod guardian;
mod health;
mod hold;
mod once;
mod pool;
mod queue;
mod run;
mod signals;
mod status;
mod status_all;
mod status_pool;
mod value;
mod work;

use args::{Cli, Command, FenceCmd, Queue};
use clap::{CommandFactory, FromArgMatches};
use exit::Exit;

fn main() {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    if let Some(code) = generate::main(&cli.command) {
        std::process::exit(code.into());
    }
    let conn = match &cli.command {
        Command::Run(a) => &a.conn,
        Command::Status(a) => &a.conn,
        Command::Elect(a) => &a.conn,
        Command::Queue(Queue::Put(a)) => &a.conn,
        Command::Queue(Queue::Work(a)) => &a.conn,
        Command::Fence(FenceCmd::Check(a)) => &a.conn,
        Command::Completions(_) | Command::Man(_) => unreachable!("done by generate::main"),
    };
    connect::log_to_stderr(conn);
    let exit = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(dispatch(cli.command)),
        Err(e) => Exit::fail(exit::SOFTWARE, format!("cannot start: {e}")),
    };
    if let Some(message) = &exit.message {
        eprintln!("etcdlock: {message}");
    }
    // Bounded: a member that stopped answering cannot keep the process from exiting.
    let _ = etcdlock::runtime::shutdown(std::time::Duration::from_secs(2));
    std::process::exit(exit.code.into());
}

/// The command line. ETCDLOCK_HEALTH_ADDR is for candidates: `elect --observe` ignores it (the
/// option given on the command line is refused there).
fn parse() -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches()?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut Cli::command()))?;
    if let Command::Elect(e) = &mut cli.command {
        let source = matches.subcommand_matches("elect").and_then(|m| m.value_source("health_addr"));
        if e.observe && source == Some(clap::parser::ValueSource::EnvVariable) {
            e.health_addr = None;
        }
    }
    Ok(cli)
}

/// Help and version as clap prints them; a usage error as one line, exit 2.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
        e.exit();
    }
    let text = e.render().to_string();
    let lines: Vec<&str> = text.lines().take_while(|l| !l.starts_with("Usage:")).map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
    let line = lines.join(" ");
    eprintln!("etcdlock: {} (see --help)", line.strip_prefix("error: ").unwrap_or(&line));
    std::process::exit(exit::USAGE.into());
}

async fn dispatch(command: Command) -> Exit {
    // Caught before anything is sent, so that no signal ends the process with a key in etcd.
    let mut signals = match signals::Signals::catch() {
        Ok(s) => s,
        Err(e) => return Exit::fail(exit::SOFTWARE, format!("cannot catch signals: {e}")),
    };
    match command {
        Command::Run(a) => run::main(a, &mut signals).await,
        Command::Status(a) => status::main(a).await,
        Command::Elect(a) => elect::main(a, &mut signals).await,
        Command::Queue(Queue::Put(a)) => queue::put(a).await,
        Command::Queue(Queue::Work(a)) => work::main(a, &mut signals).await,
        Command::Fence(FenceCmd::Check(a)) => fence::check(a).await,
        Command::Completions(_) | Command::Man(_) => unreachable!("done by generate::main"),
    }
}
