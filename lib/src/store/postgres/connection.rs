//! Reaching the shared database: the URL's settings completed from the
//! `PG*` environment as libpq completes them, where the index is in words
//! safe to print, and a connection made within a time limit, handshake
//! included, so that a server that accepts and then never answers is an
//! error, not a tool that hangs (and ignores the Ctrl-C that waits for it).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
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

/// Connections a wait gave up on whose threads still wait for the server,
/// at most: the client bounds only the socket's connect, not the
/// handshake, so a server that accepts and never answers holds each one
/// until it closes the socket. A server refreshing its index every few
/// seconds would otherwise gather them without end.
const ABANDONED_KEPT: usize = 8;

/// Connection threads a wait gave up on that still wait for the server.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// The environment's `key`, None when unset or empty; an error when it is
/// not UTF-8, which was read as unset: a `PGHOST` so lost sent the
/// password to the default server, a `PGPORT` that is no number to the
/// default port.
fn pg_env(key: &'static str) -> Result<Option<String>, StoreError> {
    match std::env::var(key) {
        Ok(value) => Ok(Some(value).filter(|v| !v.is_empty())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(unusable_env(key, "is not valid UTF-8")),
    }
}

fn unusable_env(key: &'static str, why: &str) -> StoreError {
    StoreError::File { action: "use", path: PathBuf::from(format!("{key} from the environment")), source: why.into() }
}

/// `PGPORT`: one port, or one for each host, as libpq reads it.
fn pg_ports() -> Result<Vec<u16>, StoreError> {
    let ports = pg_env("PGPORT")?;
    let port = |p: &str| p.trim().parse().map_err(|_| unusable_env("PGPORT", "is not a port number"));
    ports.iter().flat_map(|p| p.split(',')).map(port).collect()
}

/// Whether a store URL's `@` would be misread. The client takes the user
/// and password to the first `@` wherever it is; libpq looks for it only
/// before the first `/`, so one past it (a parameter's, with no user and
/// password: review 198) is read otherwise, and one after a parameter
/// before any `/` is the parameter's all the same. And a second `@` before the
/// parameters is most often a password's, not written `%40`, whose rest was
/// taken for the host and database, connected to and printed (review 197;
/// a database named with an `@` is written `%40` too).
fn holds_an_at_too_many(url: &str) -> bool {
    let Some(after) = super::ports::after_scheme(url) else { return false };
    let Some(at) = after.find('@') else { return false };
    let before_parameters = after[at..].find('?').map_or(after, |q| &after[..at + q]);
    // What the client takes for a user and password that holds a parameter
    // (`h?password=s3c@ret`: review 202) is the parameter's `@`.
    let parameter_in_credentials = after[..at].split_once('?').is_some_and(|(_, query)| query.contains('='));
    at > after.find('/').unwrap_or(after.len())
        || before_parameters.matches('@').count() > 1
        || parameter_in_credentials
}

/// The URL's settings, with what it leaves out taken from the standard
/// `PG*` environment as libpq takes them.
pub(super) fn settings(shared: &SharedIndex) -> Result<postgres::Config, StoreError> {
    if holds_an_at_too_many(&shared.url) {
        return Err(StoreError::File {
            action: "read the store URL of",
            path: PathBuf::from(format!("project {}", shared.project)),
            source: "an '@' of it would be taken for the end of a user and password, and what follows for the \
                     host and database (write an '@' of a user, password, database or parameter as %40)"
                .into(),
        });
    }
    let url = super::ports::with_ports(&shared.url, |hosts| {
        let ports = pg_ports()?;
        if ports.len() > 1 && ports.len() != hosts {
            return Err(unusable_env("PGPORT", &format!("names {} ports for the URL's {hosts} hosts", ports.len())));
        }
        Ok(ports)
    })?;
    let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| StoreError::File {
        action: "read the store URL of",
        path: PathBuf::from(format!("project {}", shared.project)),
        source: e.into(),
    })?;
    if config.get_hosts().is_empty() {
        let hosts = pg_env("PGHOST")?.unwrap_or_else(|| "/var/run/postgresql".into());
        hosts.split(',').for_each(|h| {
            config.host(h);
        });
    }
    if config.get_ports().is_empty() {
        for port in pg_ports()? {
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        let user = match pg_env("PGUSER")? {
            Some(user) => Some(user),
            None => pg_env("USER")?,
        };
        if let Some(user) = user {
            config.user(&user);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = pg_env("PGPASSWORD")? {
            config.password(password);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = pg_env("PGDATABASE")?.or_else(|| config.get_user().map(str::to_string)) {
            config.dbname(&db);
        }
    }
    config.application_name("vecgrep");
    // The socket's connect is bounded too, so that a thread left waiting
    // for an address that never answers ends with the limit.
    config.connect_timeout(connect_limit(&config)?);
    notice_a_lost_server(&mut config);
    Ok(config)
}

/// How soon a server that went away mid-session (its host down, the
/// network cut: nothing answers, not even TCP) is noticed, where the URL
/// does not say: keepalive probes after this much quiet, then every
/// `LOST_PROBE_EVERY`, `LOST_PROBES` of them; and data sent must be
/// acknowledged within `LOST_LIMIT`. The defaults (probes after two
/// hours, retransmissions for about fifteen minutes) left a search, a
/// server's refresh or its `/health` waiting that long. A live server's
/// host answers probes however long its query runs.
const LOST_QUIET: Duration = Duration::from_secs(15);
const LOST_PROBE_EVERY: Duration = Duration::from_secs(5);
const LOST_PROBES: u32 = 3;
const LOST_LIMIT: Duration = Duration::from_secs(30);

fn notice_a_lost_server(config: &mut postgres::Config) {
    // The client's own default, which a URL cannot be told apart from.
    const CLIENT_DEFAULT_QUIET: Duration = Duration::from_secs(2 * 60 * 60);
    if config.get_keepalives_idle() == CLIENT_DEFAULT_QUIET {
        config.keepalives_idle(LOST_QUIET);
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(LOST_PROBE_EVERY);
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(LOST_PROBES);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(LOST_LIMIT);
    }
}

/// Where the index is, in words safe to print: no user, no password.
pub(super) fn place(config: &postgres::Config, project: &str) -> PathBuf {
    // A password holding an `@` not written `%40` ends at the first one,
    // and the rest of it is read as the host's start: never printed. Its
    // part before a `,` is read as hosts of their own (review 196), so the
    // host shown is the one the password's last `@` ends in.
    let hosts = config.get_hosts();
    let with_password = hosts.iter().rposition(|h| matches!(h, postgres::config::Host::Tcp(t) if t.contains('@')));
    // With its port: a wrong one said only "No such file or directory" of
    // a socket directory that exists (audit 263).
    let at = with_password.unwrap_or(0);
    let ports = config.get_ports();
    let port = ports.get(at).or(ports.first()).copied().unwrap_or(5432);
    let host = match hosts.get(at) {
        Some(postgres::config::Host::Tcp(h)) => match h.rsplit('@').next().unwrap_or_default() {
            ipv6 if ipv6.contains(':') => format!("[{ipv6}]:{port}"),
            host => format!("{host}:{port}"),
        },
        Some(postgres::config::Host::Unix(p)) => p.join(format!(".s.PGSQL.{port}")).display().to_string(),
        None => format!("localhost:{port}"),
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
/// `connect_timeout`, else `PGCONNECT_TIMEOUT`, else [`CONNECT_LIMIT`];
/// at least 2 s, as libpq waits whatever it is told. libpq's 0 ("no
/// limit") is the default here: the client cannot tell a URL's 0 from
/// none, and a tool that may hang for good is what the limit prevents.
fn connect_limit(config: &postgres::Config) -> Result<Duration, StoreError> {
    let asked = match config.get_connect_timeout().copied().filter(|t| !t.is_zero()) {
        Some(asked) => Some(asked),
        None => env_connect_timeout()?,
    };
    Ok(asked.unwrap_or(CONNECT_LIMIT).max(Duration::from_secs(2)))
}

/// `PGCONNECT_TIMEOUT` in seconds, None when unset or not above 0 (libpq's
/// "no limit"); one that is no number is an error naming it, where it was
/// passed over for the default.
fn env_connect_timeout() -> Result<Option<Duration>, StoreError> {
    let Some(value) = pg_env("PGCONNECT_TIMEOUT")? else { return Ok(None) };
    let seconds: i64 =
        value.trim().parse().map_err(|_| unusable_env("PGCONNECT_TIMEOUT", "is not a whole number of seconds"))?;
    Ok((seconds > 0).then(|| Duration::from_secs(seconds.unsigned_abs())))
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
    let limit = connect_limit(&config)?;
    let failed =
        |why: crate::store::BoxError| StoreError::File { action: "connect to", path: place.clone(), source: why };
    let waiting = ABANDONED.load(Ordering::SeqCst);
    if waiting >= ABANDONED_KEPT {
        let why = format!("{waiting} earlier connections to the server are still waiting for it to answer");
        return Err(failed(why.into()));
    }
    let attempt = Attempt::start(config).map_err(|e| failed(e.into()))?;
    let deadline = Instant::now() + limit;
    loop {
        match attempt.connected.recv_timeout(CONNECT_POLL) {
            Ok(Ok(client)) => return Ok(Some((client, place))),
            Ok(Err(e)) => return Err(failed(e.into())),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(failed("the connection attempt failed".into())),
            Err(mpsc::RecvTimeoutError::Timeout) if give_up() => {
                attempt.abandon();
                return Ok(None);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                attempt.abandon();
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

/// Keep a writer's connection (the lock's, the writes') open while it
/// waits on its own work: a server's `idle_session_timeout` would end it
/// in the middle of a run (the lock's sends nothing for the whole run; the
/// writes' nothing while a batch is embedded). PostgreSQL before 14 has no
/// such timeout and refuses the setting, which is then no matter.
pub(super) fn never_idle_out(client: &mut Client) {
    let _ = client.batch_execute("SET idle_session_timeout = 0");
}

/// A connection made on a thread of its own, which a wait that ends first
/// leaves behind: the connection it may still make is closed as it finds
/// no one to hand it to.
struct Attempt {
    connected: mpsc::Receiver<Result<Client, postgres::Error>>,
    /// Set by whichever side is done first, the thread or a wait that gives
    /// up on it; the other counts the thread out of [`ABANDONED`].
    one_done: Arc<AtomicBool>,
}

impl Attempt {
    fn start(config: postgres::Config) -> std::io::Result<Attempt> {
        let (sender, connected) = mpsc::channel();
        let one_done = Arc::new(AtomicBool::new(false));
        let thread_done = Arc::clone(&one_done);
        std::thread::Builder::new().name("vecgrep-connect".into()).spawn(move || {
            let _ = sender.send(config.connect(NoTls));
            if thread_done.swap(true, Ordering::SeqCst) {
                ABANDONED.fetch_sub(1, Ordering::SeqCst);
            }
        })?;
        Ok(Attempt { connected, one_done })
    }

    /// Stop waiting: the thread counts as abandoned until it ends.
    fn abandon(&self) {
        ABANDONED.fetch_add(1, Ordering::SeqCst);
        if self.one_done.swap(true, Ordering::SeqCst) {
            ABANDONED.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Whether `error` says the connection it came through was closed under it:
/// the server restarted or shut down (an administrator's command, a crash,
/// a failover), or the socket dropped. A fresh connection may answer
/// (audit 263: each of a server's kept connections failed one search).
pub(in crate::store) fn connection_lost(error: &(dyn std::error::Error + 'static)) -> bool {
    use postgres::error::SqlState;
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(pg) = e.downcast_ref::<postgres::Error>() {
            let shut = [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW];
            return pg.is_closed() || pg.code().is_some_and(|c| shut.contains(c));
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_with_an_unescaped_at_is_never_printed() {
        let config: postgres::Config = "postgres://vecgrep:hunter2@s3cretTail@127.0.0.1:5432/vecgrep".parse().unwrap();
        let shown = place(&config, "p").display().to_string();
        assert!(!shown.contains("s3cret") && !shown.contains("hunter2"), "{shown}");
        assert!(shown.ends_with("on 127.0.0.1:5432"), "{shown}");
        let config: postgres::Config = "postgres://alice:p@ss,wOrd@127.0.0.1/vecgrep".parse().unwrap();
        let shown = place(&config, "p").display().to_string();
        assert!(!shown.contains("ss") && !shown.contains("wOrd") && shown.ends_with("on 127.0.0.1:5432"), "{shown}");
        // The port, where a wrong one is the trouble (audit 263): a socket's too.
        let config: postgres::Config = "postgres:///vecgrep?host=/run/pg&port=5999".parse().unwrap();
        assert!(place(&config, "p").display().to_string().ends_with("on /run/pg/.s.PGSQL.5999"));
        let config: postgres::Config = "postgres://u@[::1]:5992/vecgrep".parse().unwrap();
        assert!(place(&config, "p").display().to_string().ends_with("on [::1]:5992"));
    }

    #[test]
    fn a_url_with_an_at_of_its_password_is_refused_before_anything_is_sent() {
        for url in [
            "postgresql://a:p@ss@h/db",
            "postgres://u:SEC@RET/pw@127.0.0.1:1/db",
            "postgres:///db?host=/run/x@y",
            "postgres:///db?password=s3c@ret.example",
            "postgres://h/db?options=a@b",
            "postgres://localhost?sslmode=disable&password=s3c@ret.example",
            "postgres://127.0.0.1:1?password=SEC@RETpw.example",
        ] {
            assert!(holds_an_at_too_many(url), "{url}");
        }
        for url in [
            "postgres://alice:p%40ss@h/db?options=a@b",
            "postgres://u:pw@127.0.0.1:1/my%40db",
            "postgres://u:SEC?RETpw@127.0.0.1:1/db",
            "postgres://h/db",
            "host=a user=b@c",
        ] {
            assert!(!holds_an_at_too_many(url), "{url}");
        }
        let url = "postgres:///db?host=127.0.0.1&password=s3c@ret.example".into();
        let shared = SharedIndex { url, project: "p".into(), writer: String::new(), adopt: false };
        let e = settings(&shared).unwrap_err();
        let said = format!("{e}: {}", std::error::Error::source(&e).unwrap());
        assert!(!said.contains("s3c") && !said.contains("ret.example") && said.contains("%40"), "{said}");
    }

    #[test]
    fn the_urls_connect_timeout_is_the_whole_connections_limit() {
        let config: postgres::Config = "postgres://u@127.0.0.1/db?connect_timeout=3".parse().unwrap();
        assert_eq!(connect_limit(&config).unwrap(), Duration::from_secs(3));
        let config: postgres::Config = "postgres://u@127.0.0.1/db?connect_timeout=1".parse().unwrap();
        assert_eq!(connect_limit(&config).unwrap(), Duration::from_secs(2), "at least 2 s, as libpq");
        if std::env::var_os("PGCONNECT_TIMEOUT").is_none() {
            let config: postgres::Config = "postgres://u@127.0.0.1/db".parse().unwrap();
            assert_eq!(connect_limit(&config).unwrap(), CONNECT_LIMIT);
        }
    }

    #[test]
    fn a_lost_server_is_noticed_in_seconds_unless_the_url_says_otherwise() {
        let shared_at = |url: &str| settings(&shared(url.to_string())).unwrap();
        let config = shared_at("postgres://u@127.0.0.1/db");
        assert_eq!(config.get_keepalives_idle(), LOST_QUIET);
        assert_eq!(config.get_keepalives_interval(), Some(LOST_PROBE_EVERY));
        assert_eq!(config.get_keepalives_retries(), Some(LOST_PROBES));
        assert_eq!(config.get_tcp_user_timeout(), Some(&LOST_LIMIT));
        let config =
            shared_at("postgres://u@127.0.0.1/db?keepalives_idle=600&tcp_user_timeout=120&keepalives_retries=9");
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(600));
        assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(120)));
        assert_eq!(config.get_keepalives_retries(), Some(9));
    }

    /// A server that accepts connections and never says a word.
    fn silent_server() -> (std::net::TcpListener, String) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=2"))
    }

    fn shared(url: String) -> SharedIndex {
        SharedIndex { url, project: "p".into(), writer: "w".into(), adopt: false }
    }

    /// The tests that leave threads waiting count them in one counter.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn threads_left_waiting_for_a_silent_server_are_bounded() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let counted_out = || {
            let began = Instant::now();
            while ABANDONED.load(Ordering::SeqCst) > 0 {
                assert!(began.elapsed() < Duration::from_secs(20), "the threads never ended");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        // What another test left waiting ends with its server.
        counted_out();
        let (listener, url) = silent_server();
        for _ in 0..ABANDONED_KEPT {
            assert!(connect_unless(&shared(url.clone()), &|| true).unwrap().is_none());
        }
        let err = connect_unless(&shared(url.clone()), &|| true).err().expect("refused at once");
        let why = format!("{}", std::error::Error::source(&err).unwrap());
        assert!(why.contains("8 earlier connections to the server are still waiting for it to answer"), "{why}");
        // Once the server closes them, the threads end and are counted out.
        drop(listener);
        counted_out();
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_is_an_error_not_a_hang() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (_listener, url) = silent_server();
        let err = connect(&shared(url)).err().expect("no connection to a silent server");
        let why = format!("{err}: {}", std::error::Error::source(&err).unwrap());
        assert!(why.contains("cannot connect to project p") && why.contains("did not answer within 2 s"), "{why}");
    }

    #[test]
    fn a_connection_under_way_stops_when_told_to() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (_listener, url) = silent_server();
        let url = url.replace("connect_timeout=2", "connect_timeout=600");
        let asked = std::cell::Cell::new(0);
        let give_up = || {
            asked.set(asked.get() + 1);
            asked.get() > 2
        };
        assert!(connect_unless(&shared(url), &give_up).unwrap().is_none());
    }
}
