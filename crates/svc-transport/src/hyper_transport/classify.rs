//! How errors from hyper-util, hyper, rustls and the OS become [`TransportError`]s.
//!
//! hyper-util's legacy client wraps everything in one opaque error; what happened is found by
//! walking its source chain (descending into `io::Error`s with `get_ref`, because
//! `io::Error::source` skips the error it wraps):
//!
//! | found in the chain | kind | sent |
//! | --- | --- | --- |
//! | connect error with a `rustls::Error` (TLS handshake) | `Connect` | no |
//! | connect error with an `io::Error` of kind `TimedOut` (connect timeout) | `Timeout` | no |
//! | any other connect error (DNS, refused, unreachable, reset during connect) | `Connect` | no |
//! | `hyper::Error::is_incomplete_message` ("connection closed before message completed": the server closed the connection, often an idle pooled one, before answering) | `Io` | maybe |
//! | `hyper::Error::is_canceled`, `is_closed`, `is_body_write_aborted`, HTTP/2 and I/O errors | `Io` | maybe |
//! | `hyper::Error::is_timeout` | `Timeout` | maybe |
//! | `hyper::Error::is_parse` (not an HTTP response) | `Other` | maybe |
//! | `hyper::Error::is_user`, or the client's own "unsupported version/method" errors | `InvalidRequest` | no |
//! | a body longer than `max_response_bytes` (announced, or counted while reading it) | `ResponseTooLarge` | maybe |
//!
//! Messages name the host and port only: never the path, query, headers or body.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::Uri;
use http::uri::{Authority, Scheme};

use crate::{Sent, TransportError, TransportErrorKind};

type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Where a request goes, as error messages show it: `host:port`.
pub(super) struct Target {
    /// The URI's authority (a cheap clone; its host and port are read, and formatted, only
    /// when a message needs them); only its host is ever shown, never the user info it may
    /// hold.
    authority: Authority,
    /// The scheme's port, shown when the authority names none.
    default_port: u16,
}

impl Target {
    /// Checks that `uri` is an absolute `http` or `https` URI with a host.
    pub(super) fn of(uri: &Uri) -> Result<Self, TransportError> {
        // The parsed scheme compares without its text when it is one of the two (the usual
        // case); `scheme_str` then says the same of any other spelling.
        let default_port = match uri.scheme_str() {
            _ if uri.scheme() == Some(&Scheme::HTTPS) => 443,
            _ if uri.scheme() == Some(&Scheme::HTTP) => 80,
            Some(s) if s.eq_ignore_ascii_case("http") => 80,
            Some(s) if s.eq_ignore_ascii_case("https") => 443,
            Some(other) => {
                return Err(invalid(format!(
                    "the request URI has the unsupported scheme '{other}': use http:// or https://"
                )));
            }
            None => {
                return Err(invalid(
                    "the request URI is not absolute: use http://host/path or https://host/path",
                ));
            }
        };
        let authority = uri
            .authority()
            .filter(|a| has_host(a.as_str()))
            .ok_or_else(|| invalid("the request URI has no host"))?;
        Ok(Self {
            authority: authority.clone(),
            default_port,
        })
    }
}

/// Whether a parsed authority's host is not empty, as `!authority.host().is_empty()` but
/// without splitting it: the host follows the last `@` (if any) and ends at the `:` of the port
/// (an IPv6 host starts with `[`, never with `:`).
fn has_host(authority: &str) -> bool {
    // A byte loop rather than `rfind`, whose search is set up for long texts: an authority is
    // a few dozen bytes, and this runs for every request (150 instructions of 260).
    let bytes = authority.as_bytes();
    let after_user_info = match bytes.iter().rposition(|&b| b == b'@') {
        Some(at) => &bytes[at + 1..],
        None => bytes,
    };
    !after_user_info.is_empty() && after_user_info[0] != b':'
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let port = self.authority.port_u16().unwrap_or(self.default_port);
        write!(f, "{}:{port}", self.authority.host())
    }
}

fn invalid(message: impl Into<String>) -> TransportError {
    TransportError::message(TransportErrorKind::InvalidRequest, message)
}

/// Maps an error of `Client::request` (before any response head arrived).
pub(super) fn client_error(
    err: hyper_util::client::legacy::Error,
    target: &Target,
    connect_timeout: Duration,
) -> TransportError {
    let is_connect = err.is_connect();
    let source: Arc<dyn StdError + Send + Sync> = Arc::new(err);
    let (kind, sent, message) = {
        let chain = chain(&*source);
        if is_connect {
            connect_failure(&chain, target, connect_timeout)
        } else {
            request_failure(&chain, target)
        }
    };
    TransportError::from_parts(kind, sent, message, Some(source))
}

/// Maps an error of the response body while reading it (its size is checked by the caller).
pub(super) fn body_error(err: BoxError, target: &Target) -> TransportError {
    let source: Arc<dyn StdError + Send + Sync> = Arc::from(err);
    let (kind, message) = {
        let chain = chain(&*source);
        let detail = detail(&chain);
        match find::<hyper::Error>(&chain) {
            Some(e) if e.is_timeout() => (
                TransportErrorKind::Timeout,
                format!(
                    "reading the response body from {target} timed out ({detail}); the request \
                     was received: retry only if it is idempotent"
                ),
            ),
            _ => (
                TransportErrorKind::Io,
                format!(
                    "the connection to {target} broke while reading the response body \
                     ({detail}); the request was received: retry only if it is idempotent"
                ),
            ),
        }
    };
    TransportError::from_parts(kind, Sent::Maybe, message, Some(source))
}

/// The error for a response body larger than `max` bytes.
pub(super) fn too_large(
    target: &Target,
    max: usize,
    content_length: Option<u64>,
) -> TransportError {
    let size = match content_length {
        Some(n) => format!(" ({n} bytes)"),
        None => String::new(),
    };
    TransportError::message(
        TransportErrorKind::ResponseTooLarge,
        format!(
            "the response from {target}{size} is larger than the limit of {}; ask for less \
             (for example a smaller page size) or raise max_response_bytes on the transport \
             builder",
            human_bytes(max)
        ),
    )
}

fn connect_failure(
    chain: &[&(dyn StdError + 'static)],
    target: &Target,
    connect_timeout: Duration,
) -> (TransportErrorKind, Sent, String) {
    use TransportErrorKind::{Connect, Timeout};

    if let Some(tls) = find::<rustls::Error>(chain) {
        let hint = match tls {
            rustls::Error::InvalidCertificate(_) => {
                "if the server uses a self-signed certificate or a private CA, trust it with \
                 add_root_certificate_pem; otherwise check the host name in the URL"
            }
            rustls::Error::InvalidMessage(_)
            | rustls::Error::InappropriateMessage { .. }
            | rustls::Error::InappropriateHandshakeMessage { .. } => {
                "is this port serving TLS? use http:// for plain HTTP"
            }
            _ => "check that the server accepts TLS 1.2 or 1.3 connections",
        };
        return (
            Connect,
            Sent::No,
            format!("could not connect to {target}: the TLS handshake failed: {tls}; {hint}"),
        );
    }

    if let Some(failure) = find::<super::proxy::ProxyFailure>(chain) {
        let detail = detail(chain);
        return (
            if io_kind(chain) == Some(io::ErrorKind::TimedOut) {
                Timeout
            } else {
                Connect
            },
            Sent::No,
            format!(
                "could not connect to {target} through the proxy {}: {detail}; check the proxy \
                 settings (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, or the transport \
                 builder's proxy)",
                failure.proxy
            ),
        );
    }

    let io_kind = io_kind(chain);
    if io_kind == Some(io::ErrorKind::TimedOut) {
        return (
            Timeout,
            Sent::No,
            format!(
                "could not connect to {target} within {connect_timeout:?} (the connect \
                 timeout); is the host reachable and the port open?"
            ),
        );
    }

    let detail = detail(chain);
    let message = if chain.iter().any(|e| e.to_string() == "dns error") {
        format!(
            "could not connect to {target}: the host name could not be resolved ({detail}); \
             check the host in the URL and the network"
        )
    } else {
        match io_kind {
            Some(io::ErrorKind::ConnectionRefused) => {
                format!("could not connect to {target}: connection refused; is the server running?")
            }
            Some(
                io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::UnexpectedEof
                | io::ErrorKind::BrokenPipe,
            ) => format!(
                "could not connect to {target}: the server closed the connection during the \
                 connect ({detail}); is the port and the scheme (http or https) right?"
            ),
            _ => format!(
                "could not connect to {target}: {detail}; check the URL and that the server \
                 is reachable"
            ),
        }
    };
    (Connect, Sent::No, message)
}

fn request_failure(
    chain: &[&(dyn StdError + 'static)],
    target: &Target,
) -> (TransportErrorKind, Sent, String) {
    use TransportErrorKind::{InvalidRequest, Io, Other, Timeout};

    const MAYBE_PROCESSED: &str =
        "the server may have received the request: retry only if it is idempotent";
    let detail = detail(chain);

    let Some(hyper_err) = find::<hyper::Error>(chain) else {
        // hyper-util's own errors without a source: the request was refused before sending.
        let text = chain.first().map(ToString::to_string).unwrap_or_default();
        if text.contains("User") {
            return (
                InvalidRequest,
                Sent::No,
                format!("the request to {target} could not be sent: {text}"),
            );
        }
        return (
            Other,
            Sent::Maybe,
            format!("the request to {target} failed: {text}; {MAYBE_PROCESSED}"),
        );
    };

    if hyper_err.is_incomplete_message() {
        (
            Io,
            Sent::Maybe,
            format!(
                "the connection to {target} was closed before a response arrived \
                 ({hyper_err}); the server may have closed an idle pooled connection, and \
                 {MAYBE_PROCESSED}"
            ),
        )
    } else if hyper_err.is_timeout() {
        (
            Timeout,
            Sent::Maybe,
            format!("the request to {target} timed out ({detail}); {MAYBE_PROCESSED}"),
        )
    } else if hyper_err.is_parse() || hyper_err.is_parse_status() {
        (
            Other,
            Sent::Maybe,
            format!(
                "{target} did not answer with valid HTTP ({detail}); is it an HTTP server, \
                 and is the scheme (http or https) right?"
            ),
        )
    } else if hyper_err.is_user() {
        (
            InvalidRequest,
            Sent::No,
            format!("the request to {target} could not be sent: {detail}"),
        )
    } else {
        (
            Io,
            Sent::Maybe,
            format!("the connection to {target} failed mid-request ({detail}); {MAYBE_PROCESSED}"),
        )
    }
}

/// The error and its sources, outermost first. An `io::Error` is followed by the error it wraps.
fn chain<'a>(top: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(top);
    while let Some(err) = next {
        if out.len() == 16 {
            break;
        }
        out.push(err);
        next = match err.downcast_ref::<io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)),
            None => err.source(),
        };
    }
    out
}

fn find<'a, E: StdError + 'static>(chain: &[&'a (dyn StdError + 'static)]) -> Option<&'a E> {
    chain.iter().find_map(|e| e.downcast_ref::<E>())
}

/// The most specific I/O error kind in the chain.
fn io_kind(chain: &[&(dyn StdError + 'static)]) -> Option<io::ErrorKind> {
    let mut kinds = chain
        .iter()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .map(io::Error::kind);
    let first = kinds.next()?;
    Some(
        std::iter::once(first)
            .chain(kinds)
            .find(|k| *k != io::ErrorKind::Other)
            .unwrap_or(first),
    )
}

/// The messages of the chain below hyper-util's opaque "client error (...)", joined with ": ",
/// leaving out a message that repeats the one before it.
fn detail(chain: &[&(dyn StdError + 'static)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for err in chain {
        if err.is::<hyper_util::client::legacy::Error>() {
            continue;
        }
        let text = err.to_string();
        if text.is_empty() || parts.last().is_some_and(|last| last.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    if parts.is_empty() {
        chain.first().map(ToString::to_string).unwrap_or_default()
    } else {
        parts.join(": ")
    }
}

fn human_bytes(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_host_and_port_only() {
        let t = Target::of(
            &"https://user:pw@api.test/v1/x?token=s3cr3t"
                .parse()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(t.to_string(), "api.test:443");
        let t = Target::of(&"http://127.0.0.1:8080/".parse().unwrap()).unwrap();
        assert_eq!(t.to_string(), "127.0.0.1:8080");
        let t = Target::of(&"http://[::1]/".parse().unwrap()).unwrap();
        assert_eq!(t.to_string(), "[::1]:80");
        // Any spelling of the scheme is the scheme.
        let t = Target::of(&"HTTPS://api.test/".parse().unwrap()).unwrap();
        assert_eq!(t.to_string(), "api.test:443");
        let t = Target::of(&"hTtP://api.test/".parse().unwrap()).unwrap();
        assert_eq!(t.to_string(), "api.test:80");
    }

    #[test]
    fn bad_uris_are_invalid_requests() {
        for uri in ["/relative/path", "ftp://files.test/x"] {
            let err = Target::of(&uri.parse().unwrap()).err().unwrap();
            assert_eq!(err.kind(), TransportErrorKind::InvalidRequest, "{uri}");
            assert_eq!(err.was_sent(), Sent::No);
        }
    }

    #[test]
    fn has_host_agrees_with_the_parsed_host() {
        for text in [
            "api.test",
            "api.test:8443",
            "user:pw@api.test",
            "user@:80",
            "u@@h",
            ":80",
            "[::1]",
            "[::1]:80",
            "a@[::1]:1",
            "@h",
            "h:",
            "x",
        ] {
            let Ok(authority) = text.parse::<Authority>() else {
                continue;
            };
            assert_eq!(
                has_host(authority.as_str()),
                !authority.host().is_empty(),
                "{text:?}"
            );
        }
        for uri in ["http://:80/x", "http://user@:80/x"] {
            if let Ok(uri) = uri.parse::<Uri>() {
                let err = Target::of(&uri).err().unwrap();
                assert_eq!(err.kind(), TransportErrorKind::InvalidRequest, "{uri}");
            }
        }
    }

    #[test]
    fn chain_descends_into_io_errors() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let wrapped = io::Error::other(io::Error::new(io::ErrorKind::InvalidData, tls));
        let chain = chain(&wrapped);
        assert_eq!(chain.len(), 3);
        assert!(find::<rustls::Error>(&chain).is_some());
        assert_eq!(io_kind(&chain), Some(io::ErrorKind::InvalidData));
        assert_eq!(detail(&chain), "invalid peer certificate: UnknownIssuer");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(64 * 1024 * 1024), "64 MiB");
        assert_eq!(human_bytes(2048), "2 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
    }
}
