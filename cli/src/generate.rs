//! `etcdlock completions SHELL` and `etcdlock man`: generated from the command line's own clap
//! definition, so they list exactly the subcommands and options this binary takes. No
//! connection, no runtime.

use crate::args::{Cli, Command, Man};
use crate::exit::{SOFTWARE, USAGE};
use clap::CommandFactory;
use std::io::Write;

/// The exit status if `command` is one of these two, after printing what it asks for.
pub fn main(command: &Command) -> Option<u8> {
    let printed = match command {
        Command::Completions(a) => {
            let mut script = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "etcdlock", &mut script);
            print(&script)
        }
        Command::Man(a) => man(a),
        _ => return None,
    };
    Some(match printed {
        Ok(()) => 0,
        Err((code, message)) => {
            eprintln!("etcdlock: {message}");
            code
        }
    })
}

fn man(args: &Man) -> Result<(), (u8, String)> {
    match &args.out_dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page).map_err(|e| (SOFTWARE, e.to_string()))?;
            print(&page)
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err((USAGE, format!("--out-dir {}: not a directory", dir.display())));
            }
            clap_mangen::generate_to(Cli::command(), dir).map_err(|e| (SOFTWARE, format!("writing the pages into {}: {e}", dir.display())))
        }
    }
}

/// All of it on stdout; a closed pipe (`| head`) is no crash.
fn print(bytes: &[u8]) -> Result<(), (u8, String)> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err((SOFTWARE, format!("writing to stdout: {e}"))),
    }
}
