//! Connection options to the core's `ClientOptions`, and the connection itself.

use crate::args::Conn;
use crate::exit::{Exit, USAGE};
use etcdlock::{Client, ClientOptions, Pem, TlsOptions};
use std::time::Duration;

/// The core's options for these flags; a password given without a user (or the other way
/// round), or an unreadable password file, is a usage error. Nothing is sent.
pub fn options(conn: &Conn) -> Result<ClientOptions, Exit> {
    let password = match (&conn.password, &conn.password_file) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| Exit::fail(USAGE, format!("cannot read the password file {}: {e}", file.display())))?;
            Some(text.lines().next().unwrap_or("").to_string())
        }
        (None, None) => None,
    };
    let user = match (&conn.user, password) {
        (Some(user), Some(password)) => Some((user.clone(), password)),
        (Some(_), None) => return Err(Exit::fail(USAGE, "--user needs a password: ETCDLOCK_PASSWORD, --password-file or --password")),
        (None, Some(_)) => return Err(Exit::fail(USAGE, "a password was given without --user (ETCDLOCK_USER)")),
        (None, None) => None,
    };
    let file = |p: &Option<std::path::PathBuf>| p.clone().map(Pem::File);
    let tls = (conn.ca_file.is_some() || conn.cert_file.is_some() || conn.server_name.is_some()).then(|| TlsOptions {
        ca: file(&conn.ca_file),
        cert: file(&conn.cert_file),
        key: file(&conn.key_file),
        server_name: conn.server_name.clone(),
    });
    Ok(ClientOptions {
        connect_timeout: Duration::from_secs_f64(conn.connect_timeout),
        request_timeout: Duration::from_secs_f64(conn.request_timeout),
        user,
        tls,
        ..Default::default()
    })
}

pub async fn connect(conn: &Conn) -> Result<Client, Exit> {
    let opts = options(conn)?;
    Ok(Client::connect(&conn.endpoints, opts).await?)
}

/// With --verbose, the core's log events (the ones every binding gets) go to stderr.
pub fn log_to_stderr(conn: &Conn) {
    use etcdlock::runtime::log::{add_sink, LogLevel, LogRecord};
    if !conn.verbose {
        return;
    }
    let pid = std::process::id();
    // Fails only when a tracing subscriber is installed already, which this program never does.
    let _ = add_sink(LogLevel::Debug, std::sync::Arc::new(move |r: &LogRecord| eprintln!("etcdlock[{pid}]: {}", r.text())));
}
