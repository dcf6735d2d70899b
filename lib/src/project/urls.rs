//! How a configured URL (`llm_url`, `embedder_url`) is shown in notes and
//! errors: never with the credentials it may carry, in its user part or
//! its query (`?key=...`).

/// `url` without the user and password it may carry, and with its query,
/// where keys often go, as `?…`.
pub(crate) fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (rest, query) = match rest.split_once('?') {
        Some((before, _)) => (before, "?…"),
        None => (rest, ""),
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}{query}", &rest[at + 1..]),
        None => format!("{scheme}://{rest}{query}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_never_shown() {
        assert_eq!(shown_url("https://me:s3cret@h/v1"), "https://…@h/v1");
        assert_eq!(shown_url("http://h/v1?a=b@c"), "http://h/v1?…", "an @ in the query is no user part");
        assert_eq!(shown_url("http://h:8/v1/embeddings?key=s3cret"), "http://h:8/v1/embeddings?…");
        assert_eq!(shown_url("http://h:8/v1/embeddings"), "http://h:8/v1/embeddings");
        assert_eq!(shown_url("not a url"), "not a url");
    }
}
