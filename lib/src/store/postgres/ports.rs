//! The ports of a store URL whose hosts name none, as libpq takes them: the
//! URL's `port` parameter, else `PGPORT`, else 5432. The client's URL
//! parser gives such a host 5432 at once, so `PGPORT` went unread (a run
//! sent PGPASSWORD to whatever listened on 5432 of that host), and a `port`
//! parameter was refused as a second list of ports (audit 190).

use std::borrow::Cow;

use crate::store::StoreError;

/// `url` with each of its hosts given the port libpq would connect it to,
/// where none of them names one and a port comes from elsewhere; the URL as
/// it is otherwise. `env_ports` reads `PGPORT` for the URL's number of
/// hosts (one port, or one each), only when it is needed.
pub(super) fn with_ports<'a>(
    url: &'a str,
    env_ports: impl FnOnce(usize) -> Result<Vec<u16>, StoreError>,
) -> Result<Cow<'a, str>, StoreError> {
    let Some(after) = after_scheme(url) else { return Ok(url.into()) };
    // As the client's parser reads it: the credentials end at the first
    // `@`, the hosts at the first `/` or `?` after them.
    let hosts_from = after.find('@').map_or(0, |at| at + 1);
    let hosts_to = after[hosts_from..].find(['/', '?']).map_or(after.len(), |end| hosts_from + end);
    let hosts: Vec<&str> = after[hosts_from..hosts_to].split(',').collect();
    if after[hosts_from..hosts_to].is_empty() || hosts.iter().any(|h| names_port(h)) {
        return Ok(url.into());
    }
    let (rest, from_query) = without_port_parameter(&after[hosts_to..]);
    let in_query = from_query.is_some();
    if !in_query && rest.split_once('?').is_some_and(|(_, q)| q.split('&').any(|pair| pair.starts_with("port="))) {
        // A port parameter the client reads and refuses itself.
        return Ok(url.into());
    }
    let ports = match from_query {
        Some(ports) => ports,
        None => env_ports(hosts.len())?.iter().map(u16::to_string).collect(),
    };
    // Ports in the URL that do not match its hosts are refused by the
    // client, in its own words.
    if ports.is_empty() || ports.len() != 1 && ports.len() != hosts.len() {
        return Ok(url.into());
    }
    let with_port = |(i, host): (usize, &&str)| format!("{host}:{}", ports[if ports.len() == 1 { 0 } else { i }]);
    let hosts: Vec<String> = hosts.iter().enumerate().map(with_port).collect();
    let head = &url[..url.len() - after.len() + hosts_from];
    Ok(format!("{head}{}{rest}", hosts.join(",")).into())
}

/// A store URL after its scheme; None for one in `key=value` form.
pub(super) fn after_scheme(url: &str) -> Option<&str> {
    ["postgres://", "postgresql://"].iter().find_map(|p| url.strip_prefix(p))
}

/// Whether a host of the URL's list names its port (`h:5433`, `[::1]:5433`).
fn names_port(host: &str) -> bool {
    match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']').is_some_and(|(_, after)| after.starts_with(':')),
        None => host.contains(':'),
    }
}

/// The path and parameters after the hosts without the `port` parameter,
/// and that parameter's ports; None where it is absent or holds anything
/// but digits (the client then reads and refuses it itself).
fn without_port_parameter(rest: &str) -> (Cow<'_, str>, Option<Vec<String>>) {
    let Some((path, query)) = rest.split_once('?') else { return (rest.into(), None) };
    let is_port = |pair: &&str| pair.split_once('=').is_some_and(|(key, _)| key == "port");
    let ports: Vec<&str> = query.split('&').filter(is_port).filter_map(|p| p.split_once('=')).map(|(_, v)| v).collect();
    let digits = |v: &&str| v.split(',').all(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if ports.is_empty() || !ports.iter().all(digits) {
        return (rest.into(), None);
    }
    let kept: Vec<&str> = query.split('&').filter(|pair| !is_port(pair)).collect();
    let rest = if kept.is_empty() { path.to_string() } else { format!("{path}?{}", kept.join("&")) };
    (rest.into(), Some(ports.iter().flat_map(|v| v.split(',')).map(str::to_string).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ported(url: &str, env: &[u16]) -> String {
        with_ports(url, |_| Ok(env.to_vec())).unwrap().into_owned()
    }

    #[test]
    fn a_host_without_a_port_takes_the_port_parameter_then_pgport() {
        assert_eq!(
            ported("postgres://alice@db.internal/vecgrep", &[54432]),
            "postgres://alice@db.internal:54432/vecgrep"
        );
        assert_eq!(
            ported("postgresql://h1,[::1]?sslmode=disable", &[1, 2]),
            "postgresql://h1:1,[::1]:2?sslmode=disable"
        );
        let query = "postgres://a:p%40ss@h/db?connect_timeout=3&port=54432&sslmode=disable";
        assert_eq!(ported(query, &[9]), "postgres://a:p%40ss@h:54432/db?connect_timeout=3&sslmode=disable");
        assert_eq!(ported("postgres://h1,h2/db?port=5&port=6", &[]), "postgres://h1:5,h2:6/db");
    }

    #[test]
    fn a_url_that_names_its_ports_or_no_host_is_left_as_it_is() {
        for url in [
            "postgres://alice@db:5433/vecgrep",
            "postgres://[::1]:5433/db",
            "postgres:///vecgrep?host=/run/postgresql",
            "host=db user=alice",
            "postgres://db/vecgrep?port=5x",
        ] {
            assert_eq!(ported(url, &[54432]), url);
        }
        // No port anywhere: the client's own default.
        assert_eq!(ported("postgres://db/vecgrep", &[]), "postgres://db/vecgrep");
    }

    #[test]
    fn pgport_is_read_only_when_needed_for_the_urls_hosts() {
        let unread = |_| -> Result<Vec<u16>, StoreError> { panic!("PGPORT read") };
        assert_eq!(with_ports("postgres://db:1/x", unread).unwrap(), "postgres://db:1/x");
        assert_eq!(with_ports("postgres://db/x?port=2", unread).unwrap(), "postgres://db:2/x");
        let mut hosts = 0;
        let url = with_ports("postgres://a,b,c/x", |n| {
            hosts = n;
            Ok(vec![1])
        });
        assert_eq!((url.unwrap(), hosts), ("postgres://a:1,b:1,c:1/x".into(), 3));
    }
}
