//! Per-call options: a timeout, a retry policy, an idempotency override and extra headers for
//! the calls of one handle, over the client's settings.

use std::sync::Arc;
use std::time::Duration;

use http::header::{
    AUTHORIZATION, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, TE, TRANSFER_ENCODING, UPGRADE,
};
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::retry::RetryPolicy;

/// Settings for the calls made through one handle, over the client's own.
///
/// Give them to any handle with its `options` method ([`Records::options`](crate::Records::options),
/// [`Pages::options`](crate::Pages::options), ...); every call the handle makes then uses them,
/// each page of a stream included. What is not set here is the client's
/// ([`ClientBuilder`](crate::ClientBuilder)), and what the client does not set is the default:
///
/// | Option | Here | Else the client's | Else |
/// | --- | --- | --- | --- |
/// | overall timeout | [`timeout`](Self::timeout) | [`ClientBuilder::timeout`](crate::ClientBuilder::timeout) | none |
/// | retries | [`retry`](Self::retry) | [`ClientBuilder::retry`](crate::ClientBuilder::retry) | [`RetryPolicy::default`] |
/// | idempotent | [`idempotent`](Self::idempotent) | | the operation's own |
/// | headers | [`header`](Self::header) | | none |
///
/// A session refresh that a call sets off is the client's own call, made with the client's
/// settings. The options cost nothing on handles that have none.
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use std::time::Duration;
/// use svc_api::{CallOptions, RetryPolicy};
/// use svc_api::model::records::ListQuery;
///
/// // One slow export gets two minutes; everything else keeps the client's timeout.
/// let slow = CallOptions::new()
///     .timeout(Duration::from_secs(120))
///     .header("x-request-id", "export-2026-11-27");
/// let all = client.records("shop", "orders").options(slow).all(&ListQuery::new()).await?;
///
/// // A create that must not wait for retries.
/// let once = CallOptions::new().retry(RetryPolicy::none());
/// client.records("shop", "orders").options(once).create(&svc_api::serde_json::json!({"status": "new"})).await?;
/// # let _ = all;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) retry: Option<RetryPolicy>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) headers: HeaderMap,
    /// The first header that could not be used: reported by each call, before anything is
    /// sent.
    pub(crate) invalid: Option<String>,
}

/// The headers the client writes itself: credentials, the target and the body's framing.
const RESERVED: [HeaderName; 8] = [
    AUTHORIZATION,
    HOST,
    CONTENT_TYPE,
    CONTENT_LENGTH,
    TRANSFER_ENCODING,
    CONNECTION,
    TE,
    UPGRADE,
];

impl CallOptions {
    /// No options: every setting is the client's.
    pub fn new() -> Self {
        Self::default()
    }

    /// The longest a call may take, its retries and their waits included; replaces the
    /// client's [`timeout`](crate::ClientBuilder::timeout) for these calls. When it runs out
    /// the call fails with [`Error::Timeout`](crate::Error::Timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How these calls are retried; replaces the client's [`retry`](crate::ClientBuilder::retry)
    /// policy. [`RetryPolicy::none`] tries each call once.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Whether sending these calls twice does no harm, which decides whether a call that may
    /// have reached the server is tried again (see [`RetryPolicy`]).
    ///
    /// - `false` is taken by every call: nothing is sent again once it may have arrived (a
    ///   call whose connection never opened is still retried, since nothing was sent).
    /// - `true` is taken where only the caller can know: updates (`PATCH`, which set the given
    ///   fields, so a second send changes nothing more), action and workflow runs, and proxied
    ///   requests (say, with an idempotency key the upstream honours). Reads, deletes, SQL,
    ///   aggregates and groups are idempotent already. A create, a login, a registration or a
    ///   password or email change is never safe to send twice (a second record, a spent
    ///   one-time token): such a call with `idempotent(true)` fails before anything is sent.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Adds a header to these calls, replacing the client's value of the same name
    /// (`User-Agent`, `Accept`). A name given twice is sent twice.
    ///
    /// `Authorization`, `Host`, `Content-Type`, `Content-Length`, `Transfer-Encoding`,
    /// `Connection`, `TE` and `Upgrade` are the client's own, as are names and values that are
    /// not valid HTTP: each call then fails before anything is sent, saying which header.
    pub fn header<K, V>(mut self, name: K, value: V) -> Self
    where
        K: TryInto<HeaderName>,
        V: TryInto<HeaderValue>,
    {
        if self.invalid.is_some() {
            return self;
        }
        let Ok(name) = name.try_into() else {
            self.invalid = Some(
                "a header name given to CallOptions::header is not a valid HTTP header name"
                    .to_owned(),
            );
            return self;
        };
        if RESERVED.contains(&name) {
            self.invalid = Some(format!(
                "the {name} header is written by the client and cannot be set in CallOptions \
                 (credentials: ClientBuilder or the handle's token; bodies: the operation)"
            ));
            return self;
        }
        let Ok(value) = value.try_into() else {
            // The value is not shown: it may be a secret.
            self.invalid = Some(format!(
                "the value given for the {name} header in CallOptions is not a valid HTTP \
                 header value (visible ASCII, spaces and tabs)"
            ));
            return self;
        };
        self.headers.append(name, value);
        self
    }
}

/// A handle's `options` method, the same on every handle that holds its own
/// [`HandleOptions`] in a field named `options`.
macro_rules! options_method {
    () => {
        /// Uses these [`CallOptions`](crate::CallOptions) for this handle's calls, over the
        /// client's settings (timeout, retries, idempotency, extra headers).
        pub fn options(mut self, options: crate::CallOptions) -> Self {
            self.options = crate::options::hold(options);
            self
        }
    };
}
pub(crate) use options_method;

/// What a handle holds: no options (the common case, one null pointer), or shared ones, so that
/// cloning a handle or a stream copies a pointer.
pub(crate) type HandleOptions = Option<Arc<CallOptions>>;

/// `options` shared, or none when they set nothing.
pub(crate) fn hold(options: CallOptions) -> HandleOptions {
    let empty = options.timeout.is_none()
        && options.retry.is_none()
        && options.idempotent.is_none()
        && options.headers.is_empty()
        && options.invalid.is_none();
    (!empty).then(|| Arc::new(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_invalid_headers_are_reported_without_their_values() {
        let o = CallOptions::new().header("authorization", "Bearer secret");
        let why = o.invalid.unwrap();
        assert!(why.contains("authorization"), "{why}");
        assert!(!why.contains("secret"), "{why}");
        let o = CallOptions::new().header("x-id", "bad\nvalue-secret");
        let why = o.invalid.unwrap();
        assert!(why.contains("x-id") && !why.contains("secret"), "{why}");
        let o = CallOptions::new().header("bad name", "v");
        assert!(o.invalid.unwrap().contains("not a valid HTTP header name"));
        // The first problem is kept.
        let o = CallOptions::new()
            .header("host", "h")
            .header("x-ok", "1")
            .header("bad name", "v");
        assert!(o.invalid.unwrap().contains("host"));
    }

    #[test]
    fn headers_accumulate_and_empty_options_hold_nothing() {
        let o = CallOptions::new().header("x-a", "1").header("x-a", "2");
        assert_eq!(o.headers.get_all("x-a").iter().count(), 2);
        assert!(hold(CallOptions::new()).is_none());
        assert!(hold(CallOptions::new().idempotent(false)).is_some());
    }
}
