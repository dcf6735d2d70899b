//! A configured server's URL (`llm_url`, `embedder_url`): checked when the
//! config is read, so that a typo is an error at its line rather than a
//! request that fails later, and shown in notes and errors never with the
//! credentials it may carry, in its user part or its query (`?key=...`);
//! and whether one names this machine.

/// `url` without the user and password it may carry, and with its query,
/// where keys often go, as `?…`.
pub(crate) fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (rest, query) = match rest.split_once('?') {
        Some((before, _)) => (before, "?…"),
        None => (rest, ""),
    };
    // The authority ends where the path or the fragment begins, as the
    // request sees it: `http://127.0.0.1:9#@example.com` goes to 127.0.0.1.
    let authority_end = rest.find(['/', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}{query}", &rest[at + 1..]),
        None => format!("{scheme}://{rest}{query}"),
    }
}

/// `url` with the password of its user part, and a `password=` of its
/// query, left out, the rest as it is: what names a store whatever its
/// password (a shared index's revisions, `store::revisions`).
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let rest = match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}@{}", rest[..at].split(':').next().unwrap_or(""), &rest[at + 1..]),
        None => rest.to_string(),
    };
    let (before, query) = rest.split_once('?').unwrap_or((&rest, ""));
    let kept: Vec<&str> = query.split('&').filter(|p| !p.is_empty() && !p.starts_with("password=")).collect();
    match kept.is_empty() {
        true => format!("{scheme}://{before}"),
        false => format!("{scheme}://{before}?{}", kept.join("&")),
    }
}

/// `url` if it is one a request can be sent to: `http://` or `https://`, a
/// host, a port (if any) from 1 to 65535, no spaces or control characters.
/// The message shows the URL as `shown_url` does.
pub(crate) fn check_http_url(key: &str, url: String) -> Result<String, String> {
    match why_not_http(&url) {
        None => Ok(url),
        Some(why) => Err(format!("{key} {:?} is not a usable URL: {why}", shown_url(&url))),
    }
}

fn why_not_http(url: &str) -> Option<&'static str> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it holds a space or a control character");
    }
    let Some((scheme, rest)) = url.split_once("://") else { return Some("it does not start with http:// or https://") };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some("only http:// and https:// are spoken");
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':')),
            None => return Some("its IPv6 address has no closing ]"),
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Some("it names no host");
    }
    // An empty port is the scheme's own, as in `http://host:/`.
    match port.filter(|p| !p.is_empty()).map(|p| p.parse::<u16>()) {
        Some(Ok(0)) | Some(Err(_)) => Some("its port is not a number from 1 to 65535"),
        _ => None,
    }
}

/// Whether `url` names this machine: `localhost` (not `localhost.`), or a loopback address
/// (`127.0.0.0/8`, `::1`, `::ffff:127.0.0.1`), in any spelling the system's
/// resolver reads as one (`127.1`, `2130706433`, `0x7f.1`), since that is
/// where a request goes. Anything unreadable is not.
pub fn on_loopback(url: &str) -> bool {
    let host = host_of(url);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    // `localhost` as /etc/hosts names it: `localhost.`, an absolute name,
    // is no entry there, and the resolver asks the network's DNS for it.
    host.eq_ignore_ascii_case("localhost")
        || match bare.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V6(v6)) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
            Ok(ip) => ip.is_loopback(),
            Err(_) => inet_aton(bare).is_some_and(|v4| v4.is_loopback()),
        }
}

/// An IPv4 address as `inet_aton` (and so `getaddrinfo`) reads it: one to
/// four parts, each decimal, octal (`0` first) or hex (`0x` first), the
/// last filling the bytes the others leave.
fn inet_aton(host: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<u32> = host.split('.').map(aton_part).collect::<Option<_>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|&p| p > 0xff) || u64::from(*last) >= 1u64 << (8 * (4 - leading.len())) {
        return None;
    }
    let high = leading.iter().enumerate().fold(0u32, |acc, (i, &p)| acc | p << (24 - 8 * i));
    Some(std::net::Ipv4Addr::from(high | last))
}

fn aton_part(part: &str) -> Option<u32> {
    let (digits, radix) = match part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None if part.len() > 1 && part.starts_with('0') => (&part[1..], 8),
        None => (part, 10),
    };
    if digits.is_empty() && radix == 16 {
        return Some(0);
    }
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// The host of `url`, without scheme, credentials, port or path: what a
/// warning may show of an endpoint.
pub(crate) fn host_of(url: &str) -> String {
    let rest = url.trim().split_once("://").map_or(url.trim(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => format!("[{}]", v6.split(']').next().unwrap_or_default()),
        None => host.split(':').next().unwrap_or_default().to_string(),
    };
    host.chars().filter(|c| !c.is_control()).take(253).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_named_without_its_password() {
        assert_eq!(without_password("postgres://u:pw@h:5/d?x=1"), "postgres://u@h:5/d?x=1");
        assert_eq!(without_password("postgres:///d?host=/tmp/s"), "postgres:///d?host=/tmp/s");
        assert_eq!(without_password("postgres:///d?password=x&host=/s"), "postgres:///d?host=/s");
    }

    #[test]
    fn only_urls_a_request_can_go_to_are_taken() {
        for good in [
            "http://127.0.0.1:11434/v1/embeddings",
            "https://me:pw@host/v1",
            "http://[::1]:8080/v1",
            "HTTP://host",
            "http://host/v1?key=a:b@c",
            "http://host:/v1",
        ] {
            assert_eq!(check_http_url("embedder_url", good.to_string()), Ok(good.to_string()));
        }
        for (bad, why) in [
            ("localhost:11434/v1", "http://"),
            ("ftp://host/v1", "only http"),
            ("http:///v1", "no host"),
            ("http://host:99999/v1", "port"),
            ("http://host:0/v1", "port"),
            ("http://ho st/v1", "space"),
            ("http://[::1/v1", "closing"),
        ] {
            let err = check_http_url("embedder_url", bad.to_string()).unwrap_err();
            assert!(err.starts_with("embedder_url ") && err.contains(why), "{bad}: {err}");
        }
        let err = check_http_url("llm_url", "http://me:s3cret@h:99999/v1".into()).unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn credentials_are_never_shown() {
        assert_eq!(shown_url("https://me:s3cret@h/v1"), "https://…@h/v1");
        assert_eq!(shown_url("http://h/v1?a=b@c"), "http://h/v1?…", "an @ in the query is no user part");
        assert_eq!(shown_url("http://h:8/v1/embeddings?key=s3cret"), "http://h:8/v1/embeddings?…");
        assert_eq!(shown_url("http://h:8/v1/embeddings"), "http://h:8/v1/embeddings");
        assert_eq!(shown_url("not a url"), "not a url");
        // An @ after the fragment's # is no user part: the host is the one before.
        assert_eq!(shown_url("http://127.0.0.1:9#@example.com/v1"), "http://127.0.0.1:9#@example.com/v1");
        assert_eq!(shown_url("http://u:p@h#x@y"), "http://…@h#x@y");
    }
}
