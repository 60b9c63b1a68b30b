//! The one error type: a sentence that says what failed and what to do about it.

use std::fmt;

/// Why a cluster could not be started or used. Its `Display` says what failed (with the
/// output of the PostgreSQL program that failed, or the end of the server's log) and, where
/// there is one, what to do: install PostgreSQL, set `PG_BIN`, set `TMPDIR`, ...
///
/// It is `Clone` because [`Cluster::shared`](crate::Cluster::shared) keeps the error of a
/// failed start and hands it to every later caller. `Debug` prints the message as it is (not
/// escaped), so that `.expect()` in a test shows the server's log line by line.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    pub(crate) fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// The same error with `context` in front: `"{context}: {message}"`.
    pub(crate) fn context(self, context: impl fmt::Display) -> Error {
        Error::new(format!("{context}: {}", self.message))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_show_the_message_unescaped() {
        let e = Error::new("initdb failed:\n    \"x\"").context("start");
        assert_eq!(format!("{e}"), "start: initdb failed:\n    \"x\"");
        assert_eq!(format!("{e:?}"), format!("{e}"));
    }
}
