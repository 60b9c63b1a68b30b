//! Failures and exit codes scripts can rely on: 0 ok, 2 usage errors (also clap's), 3 API
//! errors (the server answered with an error), 4 network errors (no answer), 1 anything else.

use std::fmt;
use std::process::ExitCode;

use svc_api::Error;

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The command line or its input is wrong.
    Usage(String),
    /// The SDK failed.
    Api(Error),
    /// Anything else (I/O, the emulator).
    Other(String),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Failure::Usage(_) => 2,
            Failure::Api(Error::InvalidInput(_)) => 2,
            Failure::Api(Error::Api(_) | Error::Decode(_)) => 3,
            Failure::Api(_) => 4,
            Failure::Other(_) => 1,
        })
    }

    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Failure::Api(e) if e.is_auth() => {
                Some("pass --api-key (or SVC_API_KEY) / --token (or SVC_TOKEN) for this project")
            }
            Failure::Api(Error::Transport(_)) => {
                Some("is the server running, and are --api-base-url / --app-base-url right?")
            }
            _ => None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Other(m) => f.write_str(m),
            Failure::Api(e) => write!(f, "{e}"),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Api(e)
    }
}
