//! Ctrl-C (SIGINT) and, on Unix, SIGTERM, for commands that stop cleanly when interrupted
//! (`svc records export`, and a password prompt, which must give the terminal its echo back).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// A signal that asks the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C on a terminal.
    Interrupt,
    /// SIGTERM: a polite kill (`kill PID`, a supervisor, a CI timeout). Unix only.
    #[cfg_attr(not(unix), allow(dead_code))]
    Terminate,
}

impl Signal {
    /// The exit code, the shell's convention: 128 + the signal's number.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => crate::exit::INTERRUPTED,
            Signal::Terminate => crate::exit::TERMINATED,
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "SIGINT (Ctrl-C)",
            Signal::Terminate => "SIGTERM",
        })
    }
}

/// The first stop signal to arrive.
pub type Interrupted = Pin<Box<dyn Future<Output = Signal> + Send>>;

/// Installs the handlers now and returns a future that resolves with the first stop signal.
///
/// From now on until the process exits, these signals no longer kill the process: the command
/// must watch the future. A handler that cannot be installed never fires, and that signal keeps
/// its default action (the process dies).
#[cfg(unix)]
pub fn interrupted() -> Interrupted {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt());
    let terminate = signal(SignalKind::terminate());
    Box::pin(async move {
        let interrupt = async {
            match interrupt {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        let terminate = async {
            match terminate {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = interrupt => Signal::Interrupt,
            () = terminate => Signal::Terminate,
        }
    })
}

/// Installs the handler now and returns a future that resolves on Ctrl-C.
#[cfg(windows)]
pub fn interrupted() -> Interrupted {
    let ctrl_c = tokio::signal::windows::ctrl_c();
    Box::pin(async move {
        match ctrl_c {
            Ok(mut c) => {
                c.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
        Signal::Interrupt
    })
}

/// No signals to watch on this platform: a future that never resolves.
#[cfg(not(any(unix, windows)))]
pub fn interrupted() -> Interrupted {
    Box::pin(std::future::pending())
}

/// Like [`interrupted`], for Ctrl-C only: SIGTERM keeps its default action.
#[cfg(unix)]
pub fn interrupt() -> Interrupted {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt());
    Box::pin(async move {
        match interrupt {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
        Signal::Interrupt
    })
}

/// Like [`interrupted`], for Ctrl-C only.
#[cfg(not(unix))]
pub fn interrupt() -> Interrupted {
    interrupted()
}

/// Runs `work` unless `stop` (when there is one) resolves first: then the command stops with
/// that signal's exit code.
pub async fn unless_stopped<T>(
    stop: Option<&mut Interrupted>,
    work: impl Future<Output = Result<T, crate::exit::Failure>>,
) -> Result<T, crate::exit::Failure> {
    match stop {
        None => work.await,
        Some(stop) => tokio::select! {
            signal = stop => Err(crate::exit::Failure::Interrupted(signal)),
            result = work => result,
        },
    }
}
