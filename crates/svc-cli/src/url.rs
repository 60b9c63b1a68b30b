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

/// `text` with each `%XX` escape decoded (one that is not whole stays as written); bytes that
/// are not UTF-8 become U+FFFD.
pub fn decode(text: &str) -> String {
    let raw = text.as_bytes();
    let hex = |i: usize| raw.get(i).and_then(|b| char::from(*b).to_digit(16));
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match (raw[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_unreserved_bytes_stay() {
        assert_eq!(super::encode("a b/é~_-.%"), "a%20b%2F%C3%A9~_-.%25");
    }

    #[test]
    fn decoding_undoes_encoding_and_keeps_broken_escapes() {
        assert_eq!(super::decode("a%20b%2f%C3%A9~_-.%25"), "a b/é~_-.%");
        assert_eq!(super::decode("100% %zz %4"), "100% %zz %4");
    }
}
