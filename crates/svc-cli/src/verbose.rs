//! `-v` / `-vv`: the SDK's events on stderr.
//!
//! svc-api records a debug event for every answer, failed attempt and retry (method, path
//! without the query, status, attempt, milliseconds) and a trace event for every attempt as it is
//! sent; by design they carry no header and no body, where credentials and personal data live.
//! As a second guard, every line is written through [`Redact`], which blanks out each secret the
//! command knows of (its API key and tokens, the saved session's tokens, a password) should one
//! ever turn up in an event.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterExt, LevelFilter, Targets, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::progress;

/// Shown in place of a secret.
const REDACTED: &str = "[redacted]";
/// Shorter values are not treated as secrets: blanking them out would hide ordinary words.
const SHORTEST_SECRET: usize = 6;

/// The secrets the command knows of, longest first (a secret that holds another is blanked out
/// whole).
static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The crates whose events are shown: ours only (the HTTP stack below is not asked).
const TARGETS: [&str; 3] = ["svc_api", "svc_auth", "svc_transport"];

/// Installs the event printer for `-v` given `level` times (nothing for 0): 1 shows debug
/// events, 2 or more also trace events.
pub fn init(level: u8) {
    let level = match level {
        0 => return,
        1 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let filter = TARGETS.iter().fold(Targets::new(), |filter, target| {
        filter.with_target(*target, level)
    });
    let layer = tracing_subscriber::fmt::layer()
        .compact()
        .with_target(false)
        .with_timer(Since(std::time::Instant::now()))
        .with_ansi(colour())
        .with_writer(Redact);
    // Events only: the SDK's spans (one per operation and attempt, for tracing backends) would
    // prefix every line with their fields, which the events already say in short. A span this
    // layer's filter leaves out is not in its context either.
    let events = filter.and(filter_fn(|meta| meta.is_event()));
    // Fails only when a subscriber is already installed, which nothing else here does.
    let _ = tracing_subscriber::registry()
        .with(layer.with_filter(events))
        .try_init();
}

/// Colours in the `-v` output: on a terminal, unless `NO_COLOR` is set to anything but the
/// empty string (<https://no-color.org>).
fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Remembers `value` as a secret: it never appears in the `-v` output.
pub fn secret(value: &str) {
    let value = value.trim();
    if value.chars().count() < SHORTEST_SECRET {
        return;
    }
    let mut secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| s == value) {
        secrets.push(value.to_owned());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Remembers every string in a saved session (its JSON text) as a secret: its access and
/// refresh tokens, whatever the store calls them.
pub fn session_secrets(stored: &str) {
    fn walk(value: &serde_json::Value) {
        match value {
            serde_json::Value::String(s) => secret(s),
            serde_json::Value::Array(items) => items.iter().for_each(walk),
            serde_json::Value::Object(map) => map.values().for_each(walk),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(stored) {
        Ok(value) => walk(&value),
        // Not JSON: the whole text is the secret.
        Err(_) => secret(stored),
    }
}

/// Seconds since the command started, to the millisecond: `0.035s`.
#[derive(Debug)]
struct Since(std::time::Instant);

impl FormatTime for Since {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        write!(w, "{:.3}s", self.0.elapsed().as_secs_f64())
    }
}

/// `text` with every known secret blanked out.
fn redacted(text: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    secrets.iter().fold(text.to_owned(), |text, secret| {
        text.replace(secret, REDACTED)
    })
}

/// Writes events to stderr: redacted, and below a cleared progress line.
#[derive(Debug, Clone, Copy)]
struct Redact;

impl Write for Redact {
    /// The event printer hands over each event whole (one line), so a secret cannot be split
    /// between two calls.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = redacted(&String::from_utf8_lossy(buf));
        progress::clear();
        std::io::stderr().lock().write_all(text.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for Redact {
    type Writer = Redact;

    fn make_writer(&'a self) -> Self::Writer {
        Redact
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_are_blanked_out() {
        secret("svc_key_0123456789abcdef");
        secret("short");
        session_secrets(
            r#"{"access": "eyJ.access.token", "refresh": "eyJ.refresh.token", "n": 3}"#,
        );
        let line =
            "GET /api/x key=svc_key_0123456789abcdef a=eyJ.access.token r=eyJ.refresh.token short";
        assert_eq!(
            redacted(line),
            "GET /api/x key=[redacted] a=[redacted] r=[redacted] short"
        );
    }
}
