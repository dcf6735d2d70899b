//! The id of a request whose line vg-mcp will not read whole (longer than
//! the transport's bound), found in the line's first bytes, so that the
//! client is told why instead of waiting for an answer that never comes.

use rmcp::model::RequestId;

/// The request whose line begins with `head`, when the top-level keys
/// before the cut hold both an `id` and a string `method` (a request, not a
/// notification or a response, which are never answered): Some(its id), or
/// Some(None) for an id that is no string or integer, which is answered
/// with a null id as a whole line's would be. Keys are walked and their
/// values skipped, so an `"id"` inside params is no id.
pub(super) fn id_of_cut_request(head: &[u8]) -> Option<Option<RequestId>> {
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let (mut id, mut method) = (None, false);
    loop {
        at = skip_space(head, at);
        let key_end = string_end(head, at)?;
        let key: String = serde_json::from_slice(&head[at..key_end]).ok()?;
        at = skip_space(head, key_end);
        if head.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(head, at + 1);
        let value_end = value_end(head, at)?;
        match key.as_str() {
            "id" => id = Some(serde_json::from_slice::<RequestId>(&head[at..value_end]).ok()),
            "method" => method = head[at] == b'"',
            _ => {}
        }
        if method && id.is_some() {
            return id;
        }
        at = skip_space(head, value_end);
        if head.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

fn skip_space(head: &[u8], mut at: usize) -> usize {
    while head.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
        at += 1;
    }
    at
}

/// Where the string starting at `at` ends (past its closing quote), if it
/// ends before the cut.
fn string_end(head: &[u8], at: usize) -> Option<usize> {
    if head.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(&b) = head.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where the value starting at `at` ends, if it ends before the cut.
fn value_end(head: &[u8], at: usize) -> Option<usize> {
    match head.get(at)? {
        b'"' => string_end(head, at),
        b'{' | b'[' => {
            let (mut depth, mut i) = (0usize, at);
            while let Some(&b) = head.get(i) {
                match b {
                    b'"' => {
                        i = string_end(head, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            // A number, true, false or null: up to what ends it.
            let len = head[at..].iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'));
            len.map(|n| at + n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn id(head: &str) -> Option<RequestId> {
        id_of_cut_request(head.as_bytes()).flatten()
    }

    #[test]
    fn a_cut_requests_id_is_found_among_its_first_keys() {
        let number = Some(NumberOrString::Number(7));
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","argu"#), number);
        assert_eq!(id(r#" { "method" : "tools/call", "jsonrpc":"2.0", "id" : 7 , "params":{"#), number);
        let text = Some(NumberOrString::String("a\"b".into()));
        assert_eq!(id(r#"{"jsonrpc":"2.0","method":"x","meta":{"id":1,"s":"}]"},"id":"a\"b","params":["#), text);
    }

    #[test]
    fn what_is_not_a_request_or_is_cut_too_soon_gives_no_id() {
        for head in [
            // A notification, a response, a method that is no string.
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"#,
            r#"{"jsonrpc":"2.0","id":7,"method":5,"params":{"#,
            // The id or the method after the cut, or inside params only.
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"id":3,"query":"xxxx"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","id":12"#,
            // Not an object.
            r#"[{"jsonrpc":"2.0","id":7,"method":"ping"},"#,
            "",
        ] {
            assert_eq!(id_of_cut_request(head.as_bytes()), None, "{head}");
        }
        // An id that is no id is a request still, answered with a null id.
        for head in [r#"{"id":[1],"method":"ping","params":{"#, r#"{"id":null,"method":"ping","params":{"#] {
            assert_eq!(id_of_cut_request(head.as_bytes()), Some(None), "{head}");
        }
    }
}
