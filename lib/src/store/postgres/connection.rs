//! Reaching the shared database: the URL's settings completed from the
//! `PG*` environment as libpq completes them, where the index is in words
//! safe to print, and a connection made within a time limit, handshake
//! included, so that a server that accepts and then never answers is an
//! error, not a tool that hangs (and ignores the Ctrl-C that waits for it).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use crate::project::SharedIndex;
use crate::store::StoreError;

/// How long a connection may take where neither the URL
/// (`connect_timeout`) nor `PGCONNECT_TIMEOUT` says: a server on the
/// other side of the world answers in well under a second; one that has
/// not in this long will not.
const CONNECT_LIMIT: Duration = Duration::from_secs(15);

/// How often a connection under way looks whether it should give up.
const CONNECT_POLL: Duration = Duration::from_millis(50);

/// The URL's settings, with what it leaves out taken from the standard
/// `PG*` environment as libpq takes them.
pub(super) fn settings(shared: &SharedIndex) -> Result<postgres::Config, StoreError> {
    let mut config: postgres::Config = shared.url.parse().map_err(|e: postgres::Error| StoreError::File {
        action: "read the store URL of",
        path: PathBuf::from(format!("project {}", shared.project)),
        source: e.into(),
    })?;
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
        hosts.split(',').for_each(|h| {
            config.host(h);
        });
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER").or_else(|| env("USER")) {
            config.user(&user);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE").or_else(|| config.get_user().map(str::to_string)) {
            config.dbname(&db);
        }
    }
    config.application_name("vecgrep");
    // The socket's own attempt ends with the whole connection's limit.
    config.connect_timeout(connect_limit(&config));
    Ok(config)
}

/// Where the index is, in words safe to print: no user, no password.
pub(super) fn place(config: &postgres::Config, project: &str) -> PathBuf {
    let host = match config.get_hosts().first() {
        // A password holding an `@` not written `%40` ends at the first one,
        // and the rest of it is read as the host's start: never printed.
        Some(postgres::config::Host::Tcp(h)) => h.rsplit('@').next().unwrap_or_default().to_string(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let db = config.get_dbname().unwrap_or("postgres");
    PathBuf::from(format!("project {project} in the postgres database {db} on {host}"))
}

/// Where a shared index is, in words safe to print; a URL that cannot be
/// read says so.
pub(in crate::store) fn describe(shared: &SharedIndex) -> String {
    match settings(shared) {
        Ok(config) => place(&config, &shared.project).display().to_string(),
        Err(_) => format!("project {} in a postgres database whose URL cannot be read", shared.project),
    }
}

/// The time a connection may take, handshake included: the URL's
/// `connect_timeout`, else `PGCONNECT_TIMEOUT` (seconds, as libpq reads
/// it; 0 or less is libpq's "no limit", here the default), else
/// [`CONNECT_LIMIT`].
fn connect_limit(config: &postgres::Config) -> Duration {
    let from_env = || {
        let seconds: i64 = std::env::var("PGCONNECT_TIMEOUT").ok()?.trim().parse().ok()?;
        // libpq waits at least 2 s whatever it is told.
        (seconds > 0).then(|| Duration::from_secs(seconds.max(2) as u64))
    };
    config.get_connect_timeout().copied().filter(|t| !t.is_zero()).or_else(from_env).unwrap_or(CONNECT_LIMIT)
}

/// A connection to the shared database, and how errors name the project there.
pub(super) fn connect(shared: &SharedIndex) -> Result<(Client, PathBuf), StoreError> {
    let connected = connect_unless(shared, &|| false)?;
    Ok(connected.expect("never given up"))
}

/// As [`connect`], or None once `give_up` says so while the server has not
/// answered yet (a Ctrl-C, a server shutting down).
pub(super) fn connect_unless(
    shared: &SharedIndex,
    give_up: &dyn Fn() -> bool,
) -> Result<Option<(Client, PathBuf)>, StoreError> {
    let config = settings(shared)?;
    let place = place(&config, &shared.project);
    let limit = connect_limit(&config);
    let failed =
        |why: crate::store::BoxError| StoreError::File { action: "connect to", path: place.clone(), source: why };
    // The client connects on a thread of its own, which a wait that ends
    // first leaves behind: the connection it may still make is closed as
    // it finds no one to hand it to.
    let (sender, connected) = mpsc::channel();
    std::thread::Builder::new()
        .name("vecgrep-connect".into())
        .spawn(move || {
            let _ = sender.send(config.connect(NoTls));
        })
        .map_err(|e| failed(e.into()))?;
    let deadline = Instant::now() + limit;
    loop {
        match connected.recv_timeout(CONNECT_POLL) {
            Ok(Ok(client)) => return Ok(Some((client, place))),
            Ok(Err(e)) => return Err(failed(e.into())),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(failed("the connection attempt failed".into())),
            Err(mpsc::RecvTimeoutError::Timeout) if give_up() => return Ok(None),
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                let why = format!(
                    "the server did not answer within {} s (connect_timeout in the store URL, or PGCONNECT_TIMEOUT, gives it longer)",
                    limit.as_secs()
                );
                return Err(failed(why.into()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_with_an_unescaped_at_is_never_printed() {
        let config: postgres::Config = "postgres://vecgrep:hunter2@s3cretTail@127.0.0.1:5432/vecgrep".parse().unwrap();
        let shown = place(&config, "p").display().to_string();
        assert!(!shown.contains("s3cret") && !shown.contains("hunter2"), "{shown}");
        assert!(shown.ends_with("on 127.0.0.1"), "{shown}");
    }

    #[test]
    fn the_urls_connect_timeout_is_the_whole_connections_limit() {
        let config: postgres::Config = "postgres://u@127.0.0.1/db?connect_timeout=3".parse().unwrap();
        assert_eq!(connect_limit(&config), Duration::from_secs(3));
        let config: postgres::Config = "postgres://u@127.0.0.1/db".parse().unwrap();
        assert!(connect_limit(&config) >= Duration::from_secs(2));
    }

    /// A server that accepts connections and never says a word.
    fn silent_server() -> (std::net::TcpListener, String) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=1"))
    }

    fn shared(url: String) -> SharedIndex {
        SharedIndex { url, project: "p".into(), writer: "w".into(), adopt: false }
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_is_an_error_not_a_hang() {
        let (_listener, url) = silent_server();
        let err = connect(&shared(url)).err().expect("no connection to a silent server");
        let why = format!("{err}: {}", std::error::Error::source(&err).unwrap());
        assert!(why.contains("cannot connect to project p") && why.contains("did not answer within 1 s"), "{why}");
    }

    #[test]
    fn a_connection_under_way_stops_when_told_to() {
        let (_listener, url) = silent_server();
        let url = url.replace("connect_timeout=1", "connect_timeout=600");
        let asked = std::cell::Cell::new(0);
        let give_up = || {
            asked.set(asked.get() + 1);
            asked.get() > 2
        };
        assert!(connect_unless(&shared(url), &give_up).unwrap().is_none());
    }
}
