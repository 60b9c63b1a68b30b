//! Database locations as messages and logs show them: never with a password.

use std::path::Path;

/// `url` with its password replaced by `***` (`user:password@`, and a query parameter whose
/// name contains `password`), for messages and logs.
pub fn redacted(url: &str) -> String {
    shown_location(Path::new(url))
}

/// A database location for messages and logs: a URL's password is replaced by `***`, in
/// every form a driver reads one: `user:password@`, and a query parameter whose name (once
/// percent-decoded) contains `password` (`?password=`, `?sslpassword=`).
pub fn shown_location(path: &Path) -> String {
    let text = path.to_string_lossy();
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.into_owned();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo
                .split_once(':')
                .map_or(userinfo.to_owned(), |(u, _)| format!("{u}:***"));
            format!("{user}@{host}")
        }
        None => authority.to_owned(),
    };
    let (before_fragment, fragment) = tail.split_at(tail.find('#').unwrap_or(tail.len()));
    let tail = match before_fragment.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if names_a_password(key) => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => before_fragment.to_owned(),
    };
    format!("{scheme}://{authority}{tail}{fragment}")
}

/// Whether a URL query key, percent-decoded, names a password (`password`, `sslpassword`, ...).
fn names_a_password(key: &str) -> bool {
    percent_encoding::percent_decode_str(key)
        .decode_utf8_lossy()
        .to_ascii_lowercase()
        .contains("password")
}
