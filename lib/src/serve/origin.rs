//! Who a request on a loopback server says it is for, and comes from: a web
//! page the user visits must not read the code through it (DNS rebinding
//! makes its own name point at 127.0.0.1) nor start work on it (a form or
//! `fetch` posted across sites needs no answer to do harm).

use std::net::IpAddr;

use super::http::Request;

/// Why a request to a server bound to a loopback address is refused, or
/// None: a `Host` that names another machine (a rebound name), or an
/// `Origin` of a web page elsewhere. A request without either header (curl
/// to an address, HTTP/1.0) passes; so does the origin of a local app
/// (`vscode-webview://…`), which no remote page can take.
pub(super) fn refused_on_loopback(request: &Request) -> Option<String> {
    if let Some(host) = request.header("host").filter(|h| !is_loopback_host(h)) {
        return Some(format!(
            "the request is for '{}', not this machine: a server on a loopback address answers only requests for localhost or a loopback address (DNS rebinding)",
            crate::project::shown::clipped(host, 100)
        ));
    }
    if let Some(origin) = request.header("origin").filter(|o| is_remote_page(o)) {
        return Some(format!(
            "requests from web pages ({}) are refused by a server on a loopback address",
            crate::project::shown::clipped(origin, 100)
        ));
    }
    None
}

/// `localhost`, a name under `.localhost` (RFC 6761: never sent to DNS), or
/// a loopback address, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // An IPv6 address in brackets, then nothing or a port (RFC 3986's
        // IP-literal): `[::1]evil.example` names no loopback address.
        Some(bracketed) => {
            let Some((ip, rest)) = bracketed.split_once(']') else { return false };
            let port = rest.strip_prefix(':').unwrap_or(rest);
            return port.bytes().all(|b| b.is_ascii_digit())
                && (rest.is_empty() || rest.starts_with(':'))
                && ip.parse::<std::net::Ipv6Addr>().is_ok_and(|v6| is_loopback(IpAddr::V6(v6)));
        }
        None => {
            host.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(host, |(n, _)| n)
        }
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(is_loopback)
        || ipv4_shorthand(&name).is_some_and(|v4| v4.is_loopback())
}

/// An IPv4 address in the forms `inet_aton` reads besides the dotted four:
/// `127.1`, `2130706433`, `0x7f.1`, octal `0177.1`. curl sends them as the
/// host it was given (`curl http://127.1:8080/search`), and such a server
/// refused its own address; a name no DNS answers cannot be rebound.
fn ipv4_shorthand(name: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<u32> = name.split('.').map(inet_number).collect::<Option<_>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|&p| p > 0xff) || u64::from(*last) >= 1u64 << (8 * (4 - leading.len())) {
        return None;
    }
    let high = leading.iter().enumerate().fold(0u32, |acc, (i, &p)| acc | (p << (24 - 8 * i)));
    Some(std::net::Ipv4Addr::from(high | last))
}

/// One part of an `inet_aton` address: decimal, `0x` hex or `0` octal.
fn inet_number(part: &str) -> Option<u32> {
    let (digits, radix) = match part.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None if part.len() > 1 && part.starts_with('0') => (&part[1..], 8),
        None => (part, 10),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())?;
    u32::from_str_radix(digits, radix).ok()
}

/// A loopback address, an IPv4 one written as IPv6 (`::ffff:127.0.0.1`) too:
/// a server bound to one is reached from this machine only.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        v4 => v4.is_loopback(),
    }
}

/// An `Origin` a web page elsewhere sends: `null` (a sandboxed or opaque
/// page) or an http(s) origin whose host is not loopback.
fn is_remote_page(origin: &str) -> bool {
    let origin = origin.trim();
    if origin.eq_ignore_ascii_case("null") {
        return true;
    }
    let lower = origin.to_ascii_lowercase();
    let Some(host) = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://")) else { return false };
    !is_loopback_host(host.split('/').next().unwrap_or(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_pass_and_others_do_not() {
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.",
            "app.localhost:9",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:7777",
            "127.1",
            "127.1:8080",
            "2130706433",
            "0x7f.1",
            "0177.0.0.1:9",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "x",
            "evil.example",
            "evil.example:80",
            "localhost.evil.example",
            "10.0.0.1",
            "[::2]:80",
            "127.0.0.1.nip.io",
            "[::1]evil.example",
            "[::1].evil.example:80",
            "[::1]:80x",
            "[127.0.0.1]",
            "[::1",
            "10.1",
            "128.1",
            "127.256.1",
            "127.0.0.0.1",
            "127.16777216",
            "0x",
            "127.1x",
            "1.2.3.4.5",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        for origin in [
            "null",
            "http://evil.example",
            "https://evil.example:443",
            "http://10.0.0.1:80",
            "http://[::1]evil.example",
            "http://[::1]@evil.example",
        ] {
            assert!(is_remote_page(origin), "{origin}");
        }
        for origin in
            ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443", "vscode-webview://abc", "app://x"]
        {
            assert!(!is_remote_page(origin), "{origin}");
        }
    }
}
