//! The builder's transport settings with a custom transport: those only the default transport
//! can take (`connect_timeout`, `pool_idle_timeout`, `add_root_certificate_pem`) make `build()`
//! fail, naming each; `attempt_timeout` is honoured by the client around each attempt.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use svc_api::model::PageSettings;
use svc_api::transport::{BoxFuture, Transport, TransportError, TransportErrorKind};
use svc_api::{Client, ClientBuilder, Error, RetryPolicy, Sent, Sleep};

/// A timer that does not wait, and remembers what it was asked.
#[derive(Debug, Clone, Default)]
struct NoWait(Arc<Mutex<Vec<Duration>>>);

impl Sleep for NoWait {
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}

/// A transport that never answers, and counts the attempts it was given.
#[derive(Debug, Clone, Default)]
struct Hang(Arc<AtomicUsize>);

impl Transport for Hang {
    fn send(
        &self,
        _request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

/// A transport that answers every request at once with `200 []`.
fn answers_at_once(
    _request: http::Request<Bytes>,
) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
    Box::pin(async { Ok(http::Response::new(Bytes::from_static(b"[]"))) })
}

const PEM: &[u8] = b"-----BEGIN CERTIFICATE-----\nnot checked\n-----END CERTIFICATE-----\n";

/// A named change to a builder.
type Setting = (&'static str, fn(ClientBuilder) -> ClientBuilder);

/// The settings only the default transport takes, each applied to a builder.
fn default_transport_settings() -> [Setting; 3] {
    [
        ("connect_timeout", |b| {
            b.connect_timeout(Duration::from_secs(2))
        }),
        ("pool_idle_timeout", |b| {
            b.pool_idle_timeout(Duration::from_secs(5))
        }),
        ("add_root_certificate_pem", |b| {
            b.add_root_certificate_pem(PEM)
        }),
    ]
}

/// The two ways of giving a custom transport.
fn with_custom_transport() -> [Setting; 2] {
    [
        ("transport", |b| b.transport(answers_at_once)),
        ("shared_transport", |b| {
            b.shared_transport(Arc::new(answers_at_once) as Arc<dyn Transport>)
        }),
    ]
}

fn base() -> ClientBuilder {
    Client::builder().project("acme").api_key("svc_key_secret")
}

#[test]
fn each_default_transport_setting_is_refused_with_a_custom_transport() {
    for (setting, apply) in default_transport_settings() {
        for (how, give) in with_custom_transport() {
            // In either order: the check is made at build().
            for builder in [give(apply(base())), apply(give(base()))] {
                let err = builder.build().unwrap_err();
                let Error::InvalidInput(invalid) = &err else {
                    panic!("{setting} with {how}: {err:?}")
                };
                let message = invalid.message();
                assert!(
                    message.contains(&format!("ClientBuilder::{setting}"))
                        && message.contains("only the default transport")
                        && message.contains("configure your transport with it instead")
                        && message.contains(&format!("HyperTransport::builder().{setting}(..)")),
                    "{setting} with {how}: {message}"
                );
                assert_eq!(err.sent(), Sent::No);
                assert!(!err.to_string().contains("svc_key_secret"));
            }
        }
    }
}

#[test]
fn every_refused_setting_is_named_at_once() {
    let mut builder = base().transport(answers_at_once);
    for (_, apply) in default_transport_settings() {
        builder = apply(builder);
    }
    let err = builder.build().unwrap_err();
    let text = err.to_string();
    for (setting, _) in default_transport_settings() {
        assert!(
            text.contains(&format!("ClientBuilder::{setting} ")),
            "{text}"
        );
    }
}

#[test]
fn a_custom_transport_without_those_settings_builds() {
    for (how, give) in with_custom_transport() {
        let built = give(base())
            .timeout(Duration::from_secs(60))
            .attempt_timeout(Duration::from_secs(5))
            .retry(RetryPolicy::none())
            .build();
        assert!(built.is_ok(), "{how}: {:?}", built.err());
    }
}

#[cfg(feature = "default-transport")]
#[test]
fn the_default_transport_takes_every_setting() {
    let built = base()
        .connect_timeout(Duration::from_secs(2))
        .attempt_timeout(Duration::from_secs(5))
        .pool_idle_timeout(Duration::from_secs(5))
        .build();
    assert!(built.is_ok(), "{:?}", built.err());
}

#[tokio::test]
async fn the_attempt_timeout_bounds_each_attempt_of_a_custom_transport() {
    let hang = Hang::default();
    let sleep = NoWait::default();
    let c = base()
        .transport(hang.clone())
        .sleep(sleep.clone())
        .attempt_timeout(Duration::from_millis(250))
        .retry(
            RetryPolicy::default()
                .max_attempts(3)
                .initial_backoff(Duration::from_millis(5)),
        )
        .build()
        .unwrap();

    // A read: each attempt times out, and is retried.
    let err = c.pages().list().await.unwrap_err();
    let Error::Transport(transport) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(transport.kind(), TransportErrorKind::Timeout, "{err}");
    assert!(err.to_string().contains("250ms"), "{err}");
    assert_eq!(err.sent(), Sent::Maybe);
    assert_eq!(hang.0.load(Ordering::SeqCst), 3, "a read is retried");
    let attempt_timers = sleep
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|d| **d == Duration::from_millis(250))
        .count();
    assert_eq!(attempt_timers, 3, "one timer per attempt");

    // A create: it may have reached the server, so it is not retried.
    let err = c.pages().create(&PageSettings::new()).await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport(t) if t.is_timeout()),
        "{err:?}"
    );
    assert_eq!(err.sent(), Sent::Maybe);
    assert_eq!(hang.0.load(Ordering::SeqCst), 4, "a create is not retried");
}

#[tokio::test]
async fn the_attempt_timeout_runs_on_the_real_clock_too() {
    let hang = Hang::default();
    let c = base()
        .transport(hang.clone())
        .attempt_timeout(Duration::from_millis(50))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = c.pages().list().await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport(t) if t.is_timeout()),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(hang.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_answer_within_the_attempt_timeout_is_returned() {
    // The timer of `NoWait` is done at once: the answer, ready too, still wins.
    let sleep = NoWait::default();
    let c = base()
        .transport(answers_at_once)
        .sleep(sleep.clone())
        .attempt_timeout(Duration::from_millis(250))
        .build()
        .unwrap();
    assert!(c.pages().list().await.unwrap().is_empty());
}

#[tokio::test]
async fn without_an_attempt_timeout_a_custom_transport_is_not_bounded_per_attempt() {
    // Only the overall timeout ends the call, as before.
    let hang = Hang::default();
    let sleep = NoWait::default();
    let c = base()
        .transport(hang.clone())
        .sleep(sleep.clone())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let err = c.pages().list().await.unwrap_err();
    assert!(
        matches!(err, Error::Timeout(d) if d == Duration::from_secs(60)),
        "{err:?}"
    );
    assert_eq!(*sleep.0.lock().unwrap(), [Duration::from_secs(60)]);
    assert_eq!(hang.0.load(Ordering::SeqCst), 1);
}
