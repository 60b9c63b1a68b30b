//! [`TransportError`]: what went wrong below HTTP, whether the request may have been sent, and
//! whether trying again can help.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// The error source type a [`TransportError`] can carry.
type Source = Arc<dyn StdError + Send + Sync + 'static>;

/// The error of a [`Transport`](crate::Transport): the request did not get an HTTP response.
///
/// An HTTP response with an error status (404, 503, ...) is *not* a `TransportError`; the
/// transport returns it as a response and the layers above decide what it means.
///
/// Match on [`kind`](Self::kind) (a `#[non_exhaustive]` enum), ask
/// [`was_sent`](Self::was_sent) before retrying a request that is not idempotent, or use the
/// predicates. The [`Display`](fmt::Display) text says what happened and what to try; it names
/// the host and port but never the path, query, headers or body of the request, which may carry
/// secrets. The underlying error (hyper's, rustls', the OS's) is available through
/// [`source`](StdError::source).
///
/// Cloning is cheap: the error is one `Arc` inside.
///
/// ```
/// use svc_transport::{Sent, TransportError, TransportErrorKind};
///
/// // A custom transport reports its own failures with the same vocabulary.
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// let err = TransportError::new(TransportErrorKind::Connect, refused);
/// assert!(err.is_connect());
/// assert_eq!(err.was_sent(), Sent::No);
/// assert!(err.is_retryable());
/// assert!(std::error::Error::source(&err).is_some());
///
/// let err = TransportError::message(TransportErrorKind::InvalidRequest, "the URI has no host");
/// assert_eq!(err.to_string(), "the URI has no host");
/// assert!(!err.is_retryable());
/// ```
#[derive(Clone)]
pub struct TransportError {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: TransportErrorKind,
    sent: Sent,
    message: String,
    source: Option<Source>,
}

/// What kind of failure a [`TransportError`] is.
///
/// New kinds may be added; match with a wildcard arm.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportErrorKind {
    /// No connection could be made, so the request was certainly not sent: the host name did not
    /// resolve, the connection was refused, the TCP connect timed out, or the TLS handshake
    /// failed (for example an untrusted certificate).
    Connect,
    /// The connect or the request timed out. After a request timeout the server may have
    /// received and processed the request.
    Timeout,
    /// The connection broke mid-request (reset, or closed before the response was complete).
    /// The server may have received and processed the request. This includes a pooled
    /// keep-alive connection that the server had closed while it sat idle.
    Io,
    /// The response body was larger than the transport's limit.
    ResponseTooLarge,
    /// The request could not be sent as given (for example a URI without a scheme or host);
    /// it was not sent.
    InvalidRequest,
    /// Anything else (for example a malformed HTTP response, or no async runtime).
    Other,
}

/// Whether the server received a request that failed: the one answer for the transport and for
/// svc-api's `Error::sent`, which re-exports it.
///
/// A request that was certainly not sent can be retried whatever its method; one that may have
/// been sent should be retried only if it is idempotent (GET, PUT, DELETE, read-only POSTs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Sent {
    /// The request certainly did not reach the server: the input was refused, or the
    /// connection never opened.
    No,
    /// The request may have reached the server, and may have been processed (a timeout or a
    /// connection lost mid-way).
    Maybe,
    /// The server answered. No transport error of this crate says it by default; a transport
    /// that failed after reading an answer may ([`TransportError::with_sent`]).
    Yes,
}

impl TransportErrorKind {
    /// Whether a request that failed this way was possibly sent, when nothing more is known.
    pub fn default_sent(self) -> Sent {
        match self {
            Self::Connect | Self::InvalidRequest => Sent::No,
            Self::Timeout | Self::Io | Self::ResponseTooLarge | Self::Other => Sent::Maybe,
        }
    }

    /// A short phrase for what happened, used by [`TransportError::new`].
    fn summary(self) -> &'static str {
        match self {
            Self::Connect => "could not connect",
            Self::Timeout => "timed out",
            Self::Io => "the connection failed mid-request",
            Self::ResponseTooLarge => "the response is too large",
            Self::InvalidRequest => "invalid request",
            Self::Other => "transport error",
        }
    }
}

impl fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Io => "io",
            Self::ResponseTooLarge => "response too large",
            Self::InvalidRequest => "invalid request",
            Self::Other => "other",
        })
    }
}

impl TransportError {
    /// An error of `kind` caused by `source`; the message is a summary of the kind followed by
    /// the source's message ("could not connect: connection refused").
    ///
    /// Whether the request was sent follows from the kind ([`TransportErrorKind::default_sent`]);
    /// change it with [`with_sent`](Self::with_sent).
    pub fn new(
        kind: TransportErrorKind,
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        let source: Source = Arc::from(source.into());
        let message = format!("{}: {}", kind.summary(), source);
        Self::from_parts(kind, kind.default_sent(), message, Some(source))
    }

    /// An error of `kind` with `message` as its whole text, and no source.
    ///
    /// The message should say what happened and what to try; it must not contain request
    /// headers or bodies.
    pub fn message(kind: TransportErrorKind, message: impl Into<String>) -> Self {
        Self::from_parts(kind, kind.default_sent(), message.into(), None)
    }

    /// The same error, saying whether the request was sent (for example a connect timeout is
    /// a [`Timeout`](TransportErrorKind::Timeout) whose request was not sent).
    #[must_use]
    pub fn with_sent(mut self, sent: Sent) -> Self {
        Arc::make_mut(&mut self.inner).sent = sent;
        self
    }

    pub(crate) fn from_parts(
        kind: TransportErrorKind,
        sent: Sent,
        message: String,
        source: Option<Source>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                kind,
                sent,
                message,
                source,
            }),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> TransportErrorKind {
        self.inner.kind
    }

    /// Whether no connection could be made (the request was not sent).
    pub fn is_connect(&self) -> bool {
        self.inner.kind == TransportErrorKind::Connect
    }

    /// Whether the connect or the request timed out.
    pub fn is_timeout(&self) -> bool {
        self.inner.kind == TransportErrorKind::Timeout
    }

    /// Whether the server may have received the request.
    pub fn was_sent(&self) -> Sent {
        self.inner.sent
    }

    /// Whether the same request may succeed if tried again: connect failures, timeouts and
    /// broken connections.
    ///
    /// This says nothing about idempotency: when [`was_sent`](Self::was_sent) is
    /// [`Sent::Maybe`], retry only requests that are safe to repeat.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.inner.kind,
            TransportErrorKind::Connect | TransportErrorKind::Timeout | TransportErrorKind::Io
        )
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl fmt::Debug for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TransportError");
        d.field("kind", &self.inner.kind)
            .field("sent", &self.inner.sent)
            .field("message", &self.inner.message);
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_traits<T: Clone + Send + Sync + 'static + StdError>() {}

    #[test]
    fn is_clone_send_sync_error() {
        assert_traits::<TransportError>();
    }

    #[test]
    fn predicates_follow_the_kind() {
        use TransportErrorKind::*;
        for (kind, retryable, sent) in [
            (Connect, true, Sent::No),
            (Timeout, true, Sent::Maybe),
            (Io, true, Sent::Maybe),
            (ResponseTooLarge, false, Sent::Maybe),
            (InvalidRequest, false, Sent::No),
            (Other, false, Sent::Maybe),
        ] {
            let err = TransportError::message(kind, "x");
            assert_eq!(err.kind(), kind);
            assert_eq!(err.is_retryable(), retryable, "{kind}");
            assert_eq!(err.was_sent(), sent, "{kind}");
            assert_eq!(err.is_connect(), kind == Connect);
            assert_eq!(err.is_timeout(), kind == Timeout);
        }
    }

    #[test]
    fn new_keeps_the_source_and_names_it() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let err = TransportError::new(TransportErrorKind::Io, io);
        assert_eq!(
            err.to_string(),
            "the connection failed mid-request: reset by peer"
        );
        let source = err.source().expect("source");
        let io = source.downcast_ref::<std::io::Error>().expect("io error");
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionReset);
        assert!(format!("{err:?}").contains("ConnectionReset"));
    }

    #[test]
    fn with_sent_overrides_and_leaves_clones_alone() {
        let err = TransportError::message(TransportErrorKind::Timeout, "connect timed out");
        let copy = err.clone();
        let err = err.with_sent(Sent::No);
        assert_eq!(err.was_sent(), Sent::No);
        assert_eq!(copy.was_sent(), Sent::Maybe);
        assert!(err.is_retryable());
    }

    #[test]
    fn string_sources_work() {
        let err = TransportError::new(TransportErrorKind::Other, "proxy said no");
        assert_eq!(err.to_string(), "transport error: proxy said no");
        assert_eq!(
            err.source().map(ToString::to_string).as_deref(),
            Some("proxy said no")
        );
    }
}
