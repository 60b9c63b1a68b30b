//! Pieces of URLs the commands write themselves (the SDK writes its own).

/// `text` with every byte but RFC 3986's unreserved characters percent-encoded: safe as one
/// path segment or as a query's name or value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_unreserved_bytes_stay() {
        assert_eq!(super::encode("a b/é~_-.%"), "a%20b%2F%C3%A9~_-.%25");
    }
}
