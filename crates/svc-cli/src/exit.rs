//! Failures and exit codes scripts can rely on:
//!
//! | Code | Meaning |
//! | --- | --- |
//! | 0 | success |
//! | 1 | anything else: I/O, the saved session's file, the emulator |
//! | 2 | usage: a bad flag or argument (clap's), bad input, a missing project or credential; nothing was sent |
//! | 3 | API error: the server answered with an error (or refused, or sent what cannot be read) |
//! | 4 | network error: no answer (connection refused, timeout, TLS) |
//! | 5 | not signed in: `svc whoami` without a session the server accepts |
//! | 6 | a workflow ran and failed: `svc workflows run` answered `{"success": false}` |

use std::fmt;
use std::process::ExitCode;

use svc_api::Error;
use svc_api::auth::{SessionError, TokenStoreError};

use crate::signals::Signal;

/// Exit code: anything else.
pub const OTHER: u8 = 1;
/// Exit code: usage errors.
pub const USAGE: u8 = 2;
/// Exit code: the server answered with an error.
pub const API: u8 = 3;
/// Exit code: no answer.
pub const NETWORK: u8 = 4;
/// Exit code: not signed in.
pub const NOT_SIGNED_IN: u8 = 5;
/// Exit code: a workflow ran and failed (the server answered, with `"success": false`).
pub const WORKFLOW_FAILED: u8 = 6;
/// Exit code: interrupted by SIGINT (Ctrl-C), 128 + 2 as shells report it.
pub const INTERRUPTED: u8 = 130;
/// Exit code: stopped by SIGTERM, 128 + 15 as shells report it.
pub const TERMINATED: u8 = 143;

const SESSION_FILE_HINT: &str = "`svc logout` removes the saved session (or delete the file); then sign in again with `svc login`";

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The command line or its input is wrong.
    Usage(String),
    /// The SDK failed.
    Api(Error),
    /// Anything else (I/O, the emulator).
    Other(String),
    /// The server answered, but refused (e.g. a registration `{"result": false}`).
    Refused(String),
    /// `svc whoami` without a usable session.
    NotSignedIn(String),
    /// Stdout was closed (`svc ... | head`): stop quietly.
    BrokenPipe,
    /// `svc pages diff` found differences (shown already): exit 1, nothing more printed, as
    /// `diff` and `git diff --exit-code` do.
    Differ,
    /// A failure with a hint that says what to do.
    Hinted(Box<Failure>, String),
    /// A signal (Ctrl-C, SIGTERM) stopped the command.
    Interrupted(Signal),
    /// The command `svc emulator exec` ran ended with this exit code (not 0): `svc` exits with
    /// it, printing nothing (the command said what it had to).
    Exited(u8),
    /// A command that was part-way through stopped because of `cause` (an error or
    /// [`Interrupted`](Failure::Interrupted)). `message` says what it had done (it replaces the
    /// cause's own text, which it should include); `note` what became of its output. The exit
    /// code and the hint are the cause's.
    Stopped {
        cause: Box<Failure>,
        message: String,
        note: String,
    },
}

impl Failure {
    /// A usage error with a hint.
    pub fn usage_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure::Usage(message.into()).with_hint(hint)
    }

    /// Adds (or replaces) the hint.
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        match self {
            Failure::Hinted(inner, _) => Failure::Hinted(inner, hint.into()),
            other => Failure::Hinted(Box::new(other), hint.into()),
        }
    }

    /// Adds `hint` when the server did not accept the credentials (`401`), unless there is a hint
    /// already.
    pub fn on_auth(self, hint: &str) -> Self {
        if let Failure::Stopped {
            cause,
            message,
            note,
        } = self
        {
            return Failure::Stopped {
                cause: Box::new(cause.on_auth(hint)),
                message,
                note,
            };
        }
        match &self {
            Failure::Api(e) if e.status().is_some_and(|s| s.as_u16() == 401) => {
                self.with_hint(hint)
            }
            _ => self,
        }
    }

    /// A failure of the saved session's file.
    pub fn session_store(e: TokenStoreError) -> Self {
        Failure::Other(format!("the saved session cannot be used: {e}"))
            .with_hint(SESSION_FILE_HINT)
    }

    fn inner(&self) -> &Failure {
        match self {
            Failure::Hinted(inner, _) => inner.inner(),
            other => other,
        }
    }

    pub fn code(&self) -> u8 {
        match self.inner() {
            Failure::Usage(_) => USAGE,
            Failure::Api(e) => match e {
                Error::InvalidInput(_) => USAGE,
                Error::Api(_) | Error::Decode(_) | Error::Protocol(_) => API,
                // An answer too, but not a refusal of the request: the run itself failed.
                Error::Workflow(_) => WORKFLOW_FAILED,
                Error::Transport(_) | Error::Timeout(_) => NETWORK,
                // The server rejected the refresh token: an answer.
                Error::Auth(SessionError::RefreshRejected(_)) => API,
                // The refresh got no (usable) answer.
                Error::Auth(SessionError::RefreshFailed(_)) => NETWORK,
                _ => OTHER,
            },
            Failure::Refused(_) => API,
            Failure::NotSignedIn(_) => NOT_SIGNED_IN,
            Failure::Interrupted(signal) => signal.exit_code(),
            Failure::Exited(code) => *code,
            // A closed stdout is quiet success on its own, but not once it cut short a command
            // that must say so.
            Failure::Stopped { cause, .. } => match cause.inner() {
                Failure::BrokenPipe => OTHER,
                _ => cause.code(),
            },
            Failure::Other(_) | Failure::BrokenPipe | Failure::Differ | Failure::Hinted(..) => {
                OTHER
            }
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self.inner() {
            Failure::BrokenPipe => ExitCode::SUCCESS,
            _ => ExitCode::from(self.code()),
        }
    }

    /// Whether anything should be printed.
    pub fn is_silent(&self) -> bool {
        matches!(
            self.inner(),
            Failure::BrokenPipe | Failure::Differ | Failure::Exited(_)
        )
    }

    /// A line that says what became of the command's output, after the error line.
    pub fn note(&self) -> Option<&str> {
        match self {
            Failure::Hinted(inner, _) => inner.note(),
            Failure::Stopped { note, .. } => Some(note),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        let hint = match self {
            Failure::Hinted(_, hint) => return Some(hint.clone()),
            Failure::Stopped { cause, .. } => return cause.hint(),
            Failure::Api(Error::Auth(SessionError::RefreshRejected(_))) => {
                "the saved session has expired: sign in again with `svc login`"
            }
            Failure::Api(Error::Auth(SessionError::RefreshFailed(_))) => {
                "the session could not be refreshed: is the server up, and is --api-base-url right? The session was kept; try again"
            }
            Failure::Api(Error::Auth(_)) => SESSION_FILE_HINT,
            Failure::Api(Error::Workflow(_)) => {
                "the workflow ran and the step named above failed; the steps before it may have changed data, so check them before running it again"
            }
            Failure::Api(Error::InvalidInput(e)) if e.message().contains("allow_insecure_http") => {
                "use an https:// base URL, or pass --allow-insecure-http (SVC_ALLOW_INSECURE_HTTP=1, or allow_insecure_http in your profile) on a network you trust"
            }
            Failure::Api(e) if e.status().is_some_and(|s| s.as_u16() == 403) => {
                "these credentials are not for this project, environment or resource: check --project and --environment (`svc config` shows the settings in use and where each comes from)"
            }
            Failure::Api(e) if e.is_auth() => {
                "pass --api-key (SVC_API_KEY), --token (SVC_TOKEN) or --tools-token (SVC_TOOLS_TOKEN) for this project, or sign in with `svc login`"
            }
            Failure::Api(e) if untrusted_certificate(e).is_some() => {
                return untrusted_certificate(e).map(certificate_hint);
            }
            Failure::Api(Error::Transport(_) | Error::Timeout(_)) => {
                "is the server running, and are the base URLs right? (`svc config` shows them and where each comes from; `svc emulator` prints a local one's)"
            }
            _ => return None,
        };
        Some(hint.to_owned())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m)
            | Failure::Other(m)
            | Failure::Refused(m)
            | Failure::NotSignedIn(m) => f.write_str(m),
            Failure::Api(e) => match untrusted_certificate(e) {
                // The SDK's text ends with advice in its own terms (a builder method): the
                // hint says what to type instead.
                Some(tls) => {
                    let text = e.to_string();
                    let cause = tls.to_string();
                    match text.find(&cause) {
                        Some(at) => f.write_str(&text[..at + cause.len()]),
                        None => f.write_str(&text),
                    }
                }
                None => write!(f, "{e}"),
            },
            Failure::BrokenPipe => f.write_str("stdout was closed"),
            Failure::Differ => f.write_str("the pages differ from the files"),
            Failure::Hinted(inner, _) => write!(f, "{inner}"),
            Failure::Interrupted(signal) => write!(f, "interrupted by {signal}"),
            Failure::Exited(code) => write!(f, "the command exited with code {code}"),
            Failure::Stopped { message, .. } => f.write_str(message),
        }
    }
}

/// The TLS error of a handshake that failed on the server's certificate, found in `e`'s sources
/// (descending into `io::Error`s with `get_ref`, because `io::Error::source` skips the error it
/// wraps).
fn untrusted_certificate(e: &Error) -> Option<&rustls::Error> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    // A bound, in case a source chain ever loops.
    for _ in 0..32 {
        let error = next?;
        if let Some(tls @ rustls::Error::InvalidCertificate(_)) =
            error.downcast_ref::<rustls::Error>()
        {
            return Some(tls);
        }
        next = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    None
}

/// What to type when the server's certificate was refused.
fn certificate_hint(tls: &rustls::Error) -> String {
    use rustls::CertificateError::{NotValidForName, NotValidForNameContext};
    const CA_CERT: &str = "pass --ca-cert FILE (or set SVC_CA_CERT=FILE, or ca_cert in your profile) with the PEM root certificate that signed it; for `svc emulator --tls` that is the file it prints as tls_ca_pem";
    match tls {
        rustls::Error::InvalidCertificate(NotValidForName | NotValidForNameContext { .. }) => {
            "the certificate is for another host name: check the host in --api-base-url / --app-base-url (`svc config` shows them); a certificate for `localhost` does not serve 127.0.0.1, and --ca-cert does not change this".to_owned()
        }
        _ => format!("the server's certificate is not trusted: if it is self-signed or from a private CA, {CA_CERT}; otherwise check the host in the base URL"),
    }
}

/// `text` without the clauses (separated by `; `) that advise calls of the SDK's API, which a
/// user of the command cannot make: the command's hint says what to do instead.
pub fn without_sdk_advice(text: &str) -> String {
    const SDK_WORDS: [&str; 3] = ["ClientBuilder::", "add_root_certificate_pem", "client."];
    let kept: Vec<&str> = text
        .split("; ")
        .filter(|clause| !SDK_WORDS.iter().any(|word| clause.contains(word)))
        .collect();
    if kept.is_empty() {
        // Better the SDK's words than no message.
        return text.to_owned();
    }
    kept.join("; ")
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Api(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_and_codes_go_through_wrappers() {
        let f = Failure::usage_hint("bad", "do this").with_hint("do that");
        assert_eq!(f.code(), USAGE);
        assert_eq!(f.hint().as_deref(), Some("do that"));
        assert_eq!(f.to_string(), "bad");
        assert_eq!(Failure::NotSignedIn("x".into()).code(), NOT_SIGNED_IN);
        assert!(Failure::BrokenPipe.with_hint("h").is_silent());
    }

    #[test]
    fn advice_in_sdk_terms_is_left_out() {
        assert_eq!(
            without_sdk_advice(
                "\"http://10.0.0.5\" is plain http://; use https://, or opt in with ClientBuilder::allow_insecure_http(true) on a network you trust"
            ),
            "\"http://10.0.0.5\" is plain http://"
        );
        assert_eq!(without_sdk_advice("a; b"), "a; b");
    }

    #[test]
    fn a_stopped_command_keeps_its_cause_code_and_hint() {
        let stopped = |cause: Failure| Failure::Stopped {
            cause: Box::new(cause),
            message: "export failed: 3 records written before this error".into(),
            note: "out.ndjson was not changed".into(),
        };
        let f = stopped(Failure::Interrupted(Signal::Interrupt)).with_hint("run it again");
        assert_eq!(f.code(), INTERRUPTED);
        assert_eq!(f.note(), Some("out.ndjson was not changed"));
        assert_eq!(f.hint().as_deref(), Some("run it again"));
        assert_eq!(
            stopped(Failure::Interrupted(Signal::Terminate)).code(),
            TERMINATED
        );
        assert_eq!(stopped(Failure::Other("disk full".into())).code(), OTHER);
        let piped = stopped(Failure::BrokenPipe);
        assert!(!piped.is_silent());
        assert_eq!(piped.code(), OTHER);
        let usage = stopped(Failure::usage_hint("bad", "do this"));
        assert_eq!(usage.code(), USAGE);
        assert_eq!(usage.hint().as_deref(), Some("do this"));
        assert_eq!(
            usage.to_string(),
            "export failed: 3 records written before this error"
        );
    }
}
