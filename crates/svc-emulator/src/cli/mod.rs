//! Command-line flags and the run loop of the `svc-emulator` binary, reused by the `svc` CLI's
//! `emulator` command.
//!
//! ```
//! use clap::Parser;
//! use svc_emulator::cli::EmulatorArgs;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     emulator: EmulatorArgs,
//! }
//!
//! let cli = Cli::parse_from(["svc-emulator", "--listen", "127.0.0.1:8787", "--tls"]);
//! let config = cli.emulator.to_config();
//! assert_eq!(config.listen_addr().port(), 8787);
//! assert!(config.tls_enabled());
//! ```

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::{Emulator, EmulatorConfig, EmulatorError};

mod faults;
mod proxy;

pub use faults::FaultArgs;
pub use proxy::{ProxyArgs, ProxySecret};

/// The emulator's flags; each can also be set by an environment variable.
#[derive(Debug, Clone, clap::Args)]
#[non_exhaustive]
pub struct EmulatorArgs {
    /// Address to listen on, as IP:PORT; port 0 picks a free port.
    #[arg(long, env = "SVC_EMULATOR_LISTEN", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,

    /// SQLite file that keeps projects, keys and pages across restarts; in memory when absent.
    #[arg(long, env = "SVC_EMULATOR_DATA", value_name = "FILE")]
    pub data: Option<PathBuf>,

    /// JSON file of projects, API keys and resources (see the README); a demo project when
    /// absent. A resource's `database` may be a SQLite file, a postgres:// URL or a mysql://
    /// (mariadb://) URL (or `database_env`: the name of a variable holding it).
    #[arg(long, env = "SVC_EMULATOR_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Records loaded at start into the default project's resources: a folder per resource,
    /// `DIR/<resource>/`, holding `<model>.json` (an array of objects), `<model>.ndjson` (an
    /// object a line) or `<model>.csv` (a header row naming the fields). A model that already
    /// holds records stops the start (see --fixtures-on-rows); a reset puts them back.
    #[arg(long, env = "SVC_EMULATOR_FIXTURES", value_name = "DIR")]
    pub fixtures: Option<PathBuf>,

    /// When a model that fixtures name already holds records (rows of seed_sql, or of an
    /// earlier start kept in --data or in your own database): `stop` the start naming it (the
    /// default), `skip` the resource's fixtures and keep the rows, or `add` the fixtures beside
    /// them. For every resource, replacing each one's `fixtures_on_rows` in the config.
    #[arg(long, env = "SVC_EMULATOR_FIXTURES_ON_ROWS", value_name = "WHAT", value_parser = on_rows)]
    pub fixtures_on_rows: Option<crate::FixturesOnRows>,

    /// Start from an export (`svc emulator export DIR`, --export-on-exit DIR): its records,
    /// page settings and accounts are written into the projects at start, and a reset puts
    /// them back. A model that already holds rows stops the start (see --import-on-rows).
    #[arg(long, env = "SVC_EMULATOR_IMPORT", value_name = "DIR")]
    pub import: Option<PathBuf>,

    /// When a model or project that --import writes to already holds rows (of seed_sql, of
    /// fixtures, of an earlier start kept in --data or in your own database): `stop` the start
    /// naming it (the default), `skip` it, `add` the export's records beside them, or `replace`
    /// them with the export's state.
    #[arg(long, env = "SVC_EMULATOR_IMPORT_ON_ROWS", value_name = "WHAT", value_parser = import_on_rows)]
    pub import_on_rows: Option<crate::ImportOnRows>,

    /// On Ctrl-C or SIGTERM, write every project's state to DIR before stopping (a new or empty
    /// directory, or an earlier export): what --import DIR starts from.
    #[arg(long, env = "SVC_EMULATOR_EXPORT_ON_EXIT", value_name = "DIR")]
    pub export_on_exit: Option<PathBuf>,

    /// Serve HTTPS with a certificate generated at start; the CA's PEM path is in the startup
    /// line.
    #[arg(
        long,
        env = "SVC_EMULATOR_TLS",
        value_parser = clap::builder::BoolishValueParser::new(),
    )]
    pub tls: bool,

    /// Answer records requests exactly like the platform's data engine, dropping every stricter
    /// refusal: unknown fields and lookups are ignored, malformed page numbers read as page 1,
    /// truthy text is `true` (docs/contract.md, the `[decision: stricter]` rules).
    #[arg(
        long,
        env = "SVC_EMULATOR_LENIENT",
        value_parser = clap::builder::BoolishValueParser::new(),
    )]
    pub lenient: bool,

    /// Lifetime of session access tokens, in seconds (a few seconds lets tests see refreshes).
    #[arg(
        long,
        env = "SVC_EMULATOR_ACCESS_TOKEN_TTL",
        value_name = "SECONDS",
        default_value_t = 300
    )]
    pub access_token_ttl: u64,

    /// Lifetime of session refresh tokens, in seconds.
    #[arg(long, env = "SVC_EMULATOR_REFRESH_TOKEN_TTL", value_name = "SECONDS", default_value_t = 7 * 24 * 3600)]
    pub refresh_token_ttl: u64,

    /// Keep the first 64 KiB of every request's and response's body in the request journal
    /// (`GET /_emulator/projects/{project}/requests?bodies=true`), secrets redacted.
    #[arg(
        long,
        env = "SVC_EMULATOR_JOURNAL_BODIES",
        value_parser = clap::builder::BoolishValueParser::new(),
    )]
    pub journal_bodies: bool,

    /// How many requests the request journal keeps, the oldest dropped past it; 0 turns the
    /// journal off.
    #[arg(
        long,
        env = "SVC_EMULATOR_JOURNAL_CAPACITY",
        value_name = "ENTRIES",
        default_value_t = 10_000
    )]
    pub journal_capacity: usize,

    /// A host name the web page (`/_emulator/ui/`) also answers under, beside the loopback
    /// names and the listen address (repeatable): e.g. a container's name. Others are refused,
    /// against DNS rebinding.
    #[arg(
        long = "ui-host",
        value_name = "NAME",
        env = "SVC_EMULATOR_UI_HOSTS",
        value_delimiter = ','
    )]
    pub ui_hosts: Vec<String>,

    /// Stop, as on SIGTERM, when stdin reaches its end (or cannot be read): started with stdin
    /// a pipe whose write end only the starting process holds, the emulator ends with that
    /// process however it ends, SIGKILL included. What comes on stdin is read and dropped. For
    /// `svc emulator` and `svc-emulator` (an `exec`'s emulator ends with its command anyway).
    #[arg(
        long,
        env = "SVC_EMULATOR_EXIT_WITH_STDIN",
        value_parser = clap::builder::BoolishValueParser::new(),
    )]
    pub exit_with_stdin: bool,

    /// Remove FILE when the emulator stops (Ctrl-C, SIGTERM, stdin's end with
    /// --exit-with-stdin) or fails to start: a copy of the start line that the starting process
    /// wrote, which would otherwise outlive a process that was killed. Only FILE, never a
    /// folder; a FILE already gone is no error. For `svc emulator` and `svc-emulator`.
    #[arg(long, env = "SVC_EMULATOR_REMOVE_ON_EXIT", value_name = "FILE")]
    pub remove_on_exit: Option<PathBuf>,

    /// Fault mode: latency, `503`s, dropped connections (`--fault-*`).
    #[command(flatten)]
    pub faults: FaultArgs,

    /// The HTTP proxy: allow-list, timeout, secrets (`--proxy-*`).
    #[command(flatten)]
    pub proxy: ProxyArgs,
}

impl EmulatorArgs {
    /// The [`EmulatorConfig`] these flags describe.
    pub fn to_config(&self) -> EmulatorConfig {
        let lifetimes = crate::TokenLifetimes {
            access: std::time::Duration::from_secs(self.access_token_ttl.max(1)),
            refresh: std::time::Duration::from_secs(self.refresh_token_ttl.max(1)),
            ..crate::TokenLifetimes::default()
        };
        let mut config = EmulatorConfig::default()
            .listen(self.listen)
            .tls(self.tls)
            .lenient(self.lenient)
            .token_lifetimes(lifetimes)
            .journal_bodies(self.journal_bodies)
            .journal_capacity(self.journal_capacity);
        for host in &self.ui_hosts {
            config = config.ui_host(host);
        }
        if let Some(data) = &self.data {
            config = config.data_path(data);
        }
        if let Some(file) = &self.config {
            config = config.config_file(file);
        }
        if let Some(dir) = &self.fixtures {
            config = config.fixtures_dir(dir);
        }
        if let Some(on_rows) = self.fixtures_on_rows {
            config = config.fixtures_on_rows(on_rows);
        }
        if let Some(dir) = &self.import {
            config = config.import(dir);
        }
        if let Some(on_rows) = self.import_on_rows {
            config = config.import_on_rows(on_rows);
        }
        if let Some(dir) = &self.export_on_exit {
            config = config.export_on_exit(dir);
        }
        if let Some(faults) = self.faults.to_faults() {
            config = config.faults(faults);
        }
        config = config.proxy(self.proxy.to_proxy_config());
        config
    }
}

/// `--fixtures-on-rows`: `stop`, `skip` or `add`.
fn on_rows(value: &str) -> Result<crate::FixturesOnRows, String> {
    choice(&crate::FixturesOnRows::ALL, value)
}

/// `--import-on-rows`: `stop`, `skip`, `add` or `replace`.
fn import_on_rows(value: &str) -> Result<crate::ImportOnRows, String> {
    choice(&crate::ImportOnRows::ALL, value)
}

/// The choice `value` names among `all` (by name, any case), or the names there are.
fn choice<T: Copy>(all: &[(&str, T)], value: &str) -> Result<T, String> {
    all.iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(value.trim()))
        .map(|&(_, choice)| choice)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|(name, _)| *name).collect();
            format!("{value:?} is none of {}", names.join(", "))
        })
}

/// Starts the emulator, prints exactly one JSON line ([`StartupInfo`](crate::StartupInfo)) on
/// stdout once it accepts connections, then serves until Ctrl-C or SIGTERM (or stdin's end,
/// with `--exit-with-stdin`) and shuts down cleanly. Nothing else is written to stdout;
/// [`Emulator::warnings`] go to stderr. `--remove-on-exit FILE` is removed however this ends.
pub async fn run(args: EmulatorArgs) -> Result<(), EmulatorError> {
    // Removed when this returns, whichever way: stopped, or failed to start or to print.
    let mut removal = RemoveOnExit(args.remove_on_exit.clone());
    // Watched from now on: a parent gone during the start (a database that is slow to answer)
    // ends the start there, and the process.
    let mut stdin_end = match args.exit_with_stdin {
        true => Some(Box::pin(stdin_end()?)),
        false => None,
    };
    let emulator = match stdin_end.as_mut() {
        Some(end) => tokio::select! {
            started = Emulator::start(args.to_config()) => started?,
            () = end => {
                // The start's copies of the data, let go of with its future, are dropped first.
                crate::runtime::handle::saved_copies_dropped().await;
                return Err(EmulatorError::Io(std::io::Error::other(
                    "stdin ended while the emulator was starting (--exit-with-stdin: the \
                     process that started it is gone, or gave it no pipe to hold open): it \
                     stopped before serving",
                )));
            }
        },
        None => Emulator::start(args.to_config()).await?,
    };
    // Stderr: stdout carries the startup line only.
    for warning in emulator.warnings() {
        eprintln!("svc-emulator: warning: {warning}");
    }
    for line in emulator.imported() {
        eprintln!("svc-emulator: imported {line}");
    }
    // Listen for the signals before announcing readiness: a supervisor may stop us as soon as
    // it has read the line.
    let signal = stop_signal();
    let stop = async move {
        let stdin_end = async {
            match stdin_end {
                Some(end) => end.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = signal => {}
            () = stdin_end => {}
        }
    };
    let line = serde_json::to_string(emulator.startup_info())
        .map_err(|e| EmulatorError::Io(std::io::Error::other(e)))?;
    let printed = {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").and_then(|()| stdout.flush())
    };
    if let Err(e) = printed {
        emulator.shutdown().await;
        return Err(e.into());
    }
    // A person at a terminal gets the page's address in words too (it is in the line as
    // `ui_url`); scripts reading stderr get nothing new.
    if std::io::stderr().is_terminal() {
        eprintln!("svc-emulator: the web page: {}", emulator.ui_url());
    }
    stop.await;
    // First: the start line's keys are of no use from here on, and a killed parent's stderr may
    // be a broken pipe.
    removal.remove();
    let export = args.export_on_exit.clone();
    match emulator.stop().await {
        Ok(()) => {
            if let Some(dir) = export {
                eprintln!("svc-emulator: exported the state to {}", dir.display());
            }
            Ok(())
        }
        Err(e) => Err(EmulatorError::Io(std::io::Error::other(format!(
            "the export on exit failed: {e}"
        )))),
    }
}

/// `--remove-on-exit FILE`: removed by [`RemoveOnExit::remove`], or when dropped.
struct RemoveOnExit(Option<PathBuf>);

impl RemoveOnExit {
    /// Removes the file (once); one already gone is no error, another failure a warning.
    fn remove(&mut self) {
        let Some(file) = self.0.take() else {
            return;
        };
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                // Never a panic here (a drop, stderr perhaps a broken pipe): a failed write is
                // dropped.
                let _ = writeln!(
                    std::io::stderr(),
                    "svc-emulator: warning: cannot remove {} (--remove-on-exit): {e}",
                    file.display()
                );
            }
        }
    }
}

impl Drop for RemoveOnExit {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Starts a thread that reads stdin to its end, and returns a future that resolves then (or
/// when stdin cannot be read): `--exit-with-stdin`. A plain thread, not the runtime's blocking
/// pool, whose shutdown would wait for a read that may never end.
fn stdin_end() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use std::io::Read;
    let (ended, end) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("svc-emulator-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buffer = [0_u8; 512];
            loop {
                match stdin.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = ended.send(());
        })?;
    // A sender gone without a word (the thread failed) counts as the end too.
    Ok(async move {
        let _ = end.await;
    })
}

/// Installs the handlers now and returns a future that resolves on SIGINT (Ctrl-C) or SIGTERM.
#[cfg(unix)]
fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt());
    let terminate = signal(SignalKind::terminate());
    async move {
        // A handler that could not be installed never fires; the default action still applies.
        let interrupt = async {
            match interrupt {
                Ok(mut s) => s.recv().await,
                Err(_) => std::future::pending().await,
            }
        };
        let terminate = async {
            match terminate {
                Ok(mut s) => s.recv().await,
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate => {}
        }
    }
}

/// Returns a future that resolves on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> impl std::future::Future<Output = ()> {
    let ctrl_c = tokio::signal::ctrl_c();
    async move {
        if ctrl_c.await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
