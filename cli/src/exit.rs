//! Exit statuses, and the one-line error that goes with each failure.

use etcdlock::ErrorKind;

/// The lock (or leadership) was lost while the command ran (sysexits' EX_TEMPFAIL).
pub const LOST: u8 = 75;
/// Bad usage or an invalid argument (as clap exits for usage errors).
pub const USAGE: u8 = 2;
/// etcd could not be reached in time (EX_UNAVAILABLE).
pub const UNAVAILABLE: u8 = 69;
/// Anything else that went wrong (EX_SOFTWARE).
pub const SOFTWARE: u8 = 70;
/// Authentication failed or permission denied (EX_NOPERM).
pub const NOPERM: u8 = 77;
/// The command was found but could not be executed (as shells exit).
pub const CANNOT_EXECUTE: u8 = 126;
/// The command was not found (as shells exit).
pub const NOT_FOUND: u8 = 127;

/// How the program ends: a status, and a line for stderr if something failed.
#[derive(Debug)]
pub struct Exit {
    pub code: u8,
    pub message: Option<String>,
}

impl Exit {
    pub fn ok(code: u8) -> Exit {
        Exit { code, message: None }
    }

    pub fn fail(code: u8, message: impl Into<String>) -> Exit {
        Exit { code, message: Some(message.into()) }
    }

    /// 128 + the signal's number, as shells report a death by signal.
    pub fn signal(signo: i32) -> Exit {
        Exit::ok(128u8.saturating_add(signo as u8))
    }
}

impl From<etcdlock::Error> for Exit {
    fn from(e: etcdlock::Error) -> Exit {
        let code = match e.kind() {
            ErrorKind::InvalidArgument => USAGE,
            ErrorKind::Unavailable | ErrorKind::Timeout => UNAVAILABLE,
            ErrorKind::Auth => NOPERM,
            ErrorKind::LockLost | ErrorKind::NotHeld => LOST,
            _ => SOFTWARE,
        };
        Exit::fail(code, e.to_string())
    }
}
