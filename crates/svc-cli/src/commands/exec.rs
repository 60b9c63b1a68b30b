//! `svc emulator exec -- CMD`: an emulator in this process around one command.
//!
//! What the command gets, and nothing else of svc's: the emulator's environment (the variables
//! `svc` and the SDKs read, and the start line whole), a config directory of its own (so that
//! no profile or saved session of the caller's reaches the emulator), and the stop signals: a
//! SIGTERM (a CI timeout, `kill PID`) or SIGINT is passed to the command's process group, so
//! that its own children stop too; the emulator stops after the command.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use crate::args::ExecArgs;
use crate::exit::Failure;
use crate::signals::{self, Signal};

/// How long the command has to end after a stop signal, before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// Runs `svc emulator exec`: `CMD`'s exit code, or 128 + the signal that ended it.
pub async fn run(args: ExecArgs) -> Result<(), Failure> {
    let Some((program, rest)) = args.command.split_first() else {
        return Err(Failure::Usage(
            "no command to run: give it after --, e.g. `svc emulator exec -- python3 -m unittest`"
                .to_owned(),
        ));
    };
    // An exec's emulator ends with its command, and the command holds stdin: these two are for
    // a process that starts `svc emulator` and may be killed before it can stop it.
    if args.run.exit_with_stdin || args.run.remove_on_exit.is_some() {
        return Err(Failure::Usage(
            "--exit-with-stdin and --remove-on-exit (SVC_EMULATOR_EXIT_WITH_STDIN, \
             SVC_EMULATOR_REMOVE_ON_EXIT) are not for `svc emulator exec`, whose emulator ends \
             with its command: give them to `svc emulator`"
                .to_owned(),
        ));
    }
    if let Some(file) = &args.startup_file {
        crate::private_file::check_target(file)
            .map_err(|why| Failure::Usage(format!("cannot write the start line: {why}")))?;
    }
    let emulator = svc_emulator::Emulator::start(args.run.to_config())
        .await
        .map_err(|e| Failure::Other(format!("the emulator did not start: {e}")))?;
    let result = around(&emulator, &args, program, rest).await;
    // `--export-on-exit DIR`: the state the command left, written before the emulator stops.
    let exported = emulator.stop().await;
    match (&args.run.export_on_exit, exported) {
        (Some(dir), Ok(())) => {
            eprintln!("svc emulator exec: exported the state to {}", dir.display())
        }
        (_, Err(e)) if result.is_ok() => {
            return Err(Failure::Other(format!("the export on exit failed: {e}")));
        }
        (_, Err(e)) => eprintln!("svc emulator exec: the export on exit failed: {e}"),
        (None, Ok(())) => {}
    }
    result
}

/// Runs the command against the started `emulator`.
async fn around(
    emulator: &svc_emulator::Emulator,
    args: &ExecArgs,
    program: &std::ffi::OsString,
    rest: &[std::ffi::OsString],
) -> Result<(), Failure> {
    for warning in emulator.warnings() {
        eprintln!("svc emulator exec: warning: {warning}");
    }
    for line in emulator.imported() {
        eprintln!("svc emulator exec: imported {line}");
    }
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("svc emulator exec: the web page: {}", emulator.ui_url());
    }
    let line = serde_json::to_string(emulator.startup_info())
        .map_err(|e| Failure::Other(format!("cannot write the start line: {e}")))?;
    if let Some(file) = &args.startup_file {
        // It holds the API key, every token and the page's sign-in token: the owner's only.
        crate::private_file::write(file, format!("{line}\n").as_bytes()).map_err(|e| {
            Failure::Other(format!(
                "cannot write the start line to {}: {e}",
                file.display()
            ))
        })?;
    }
    let config_dir = ConfigDir::create()?;
    let mut command = tokio::process::Command::new(program);
    command.args(rest).kill_on_drop(true);
    // The caller's own svc settings (a `VITE_SVC_*` would win over an `SVC_*`, a token over
    // the key, a profile's resource token over both) would point the command elsewhere, or
    // send the emulator another's credentials: none of them passes. Other variables do, the
    // command's own `SVC_`-named ones too.
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if CALLERS_SETTINGS.contains(&text.as_ref()) || text.starts_with("VITE_SVC_") {
            command.env_remove(&name);
        }
    }
    command
        .envs(environment(emulator, &line))
        .env("SVC_CONFIG_DIR", &config_dir.0);
    if let Some(path) = path_with_this_svc(&config_dir.0) {
        command.env("PATH", path);
    }
    let group = Group::choose();
    group.prepare(&mut command);
    // Watched from before the command starts: a stop signal in between is passed on too.
    let mut stop = signals::interrupted();
    let mut child = command.spawn().map_err(|e| {
        Failure::usage_hint(
            format!("cannot run {}: {e}", program.to_string_lossy()),
            "give a program on PATH, or its path, after --",
        )
    })?;
    let status = tokio::select! {
        status = child.wait() => status,
        signal = &mut stop => {
            group.pass(&child, signal);
            match tokio::time::timeout(GRACE, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    group.kill(&child);
                    let _ = child.kill().await;
                    return Err(Failure::Interrupted(signal));
                }
            }
        }
    };
    let status = status.map_err(|e| Failure::Other(format!("cannot wait for the command: {e}")))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Failure::Exited(u8::try_from(code).unwrap_or(1))),
        // Ended by a signal: the shell's code for it.
        None => Err(Failure::Exited(signal_code(&status))),
    }
}

/// The variables svc and the SDKs read to find a service and its credentials (beside every
/// `VITE_SVC_*`): the caller's never reach the command, whose are the emulator's.
const CALLERS_SETTINGS: &[&str] = &[
    "SVC_ALLOW_INSECURE_HTTP",
    "SVC_API_BASE_URL",
    "SVC_API_KEY",
    "SVC_API_TOKEN",
    "SVC_APP_BASE_URL",
    "SVC_CA_CERT",
    "SVC_CONFIG",
    "SVC_CONFIG_DIR",
    "SVC_DRAFT",
    "SVC_EMAIL",
    "SVC_ENVIRONMENT",
    "SVC_PASSWORD",
    "SVC_PROFILE",
    "SVC_PROJECT",
    "SVC_TOKEN",
    "SVC_TOOLS_TOKEN",
    "SVC_VERIFY_REFERENCE_TOKEN",
];

/// A config directory for the command alone (`0700`, removed after): its `svc` reads no
/// profile and no saved session of the caller's, and a `svc login` inside it keeps its
/// session there.
struct ConfigDir(PathBuf);

/// The command's `PATH`, this very `svc` first: a folder of the config directory holding a link
/// to it. So `svc emulator exec -- svc ...` runs the same svc as exec, also from a checkout
/// (`cargo run -p svc-cli -- emulator exec -- svc ...`) where no svc is on `PATH`. `None` (the
/// caller's `PATH` as it is) where the link cannot be made.
fn path_with_this_svc(config_dir: &std::path::Path) -> Option<std::ffi::OsString> {
    let exe = std::env::current_exe().ok()?;
    let bin = config_dir.join("bin");
    std::fs::create_dir(&bin).ok()?;
    #[cfg(unix)]
    std::os::unix::fs::symlink(&exe, bin.join("svc")).ok()?;
    #[cfg(windows)]
    std::fs::copy(&exe, bin.join("svc.exe")).ok()?;
    let mut paths = vec![bin];
    // An empty entry would mean the current directory: none is added.
    paths.extend(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|p| !p.as_os_str().is_empty()),
    );
    std::env::join_paths(paths).ok()
}

impl ConfigDir {
    fn create() -> Result<ConfigDir, Failure> {
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        let base = std::env::temp_dir();
        let mut last = None;
        for _ in 0..8 {
            let dir = base.join(format!("svc-exec-{}-{}", std::process::id(), uuid_like()));
            match builder.create(&dir) {
                Ok(()) => return Ok(ConfigDir(dir)),
                Err(e) => last = Some(e),
            }
        }
        Err(Failure::Other(format!(
            "cannot make a config directory for the command under {}: {}",
            base.display(),
            last.map_or_else(String::new, |e| e.to_string())
        )))
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sixteen hex digits that do not repeat within a process, and are unlikely across them.
fn uuid_like() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", hasher.finish())
}

/// Where the command runs, and so whom a stop signal is passed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// Off a terminal (CI, a script, a test harness): the command leads a process group of its
    /// own, and a stop signal goes to that whole group.
    Own,
    /// On a terminal: the command stays in svc's process group, so that it can read the
    /// terminal and Ctrl-C reaches it (and its children) from the terminal itself; a SIGTERM
    /// is passed to that group when svc leads it (a shell's job), else to the command.
    Terminal,
}

impl Group {
    fn choose() -> Group {
        match std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            true => Group::Terminal,
            false => Group::Own,
        }
    }

    fn prepare(self, command: &mut tokio::process::Command) {
        #[cfg(unix)]
        if self == Group::Own {
            command.process_group(0);
        }
        #[cfg(not(unix))]
        let _ = command;
    }

    /// Passes `signal` on to the command (and its children, where they can be reached).
    #[cfg(unix)]
    fn pass(self, child: &tokio::process::Child, signal: Signal) {
        use rustix::process::{self, Signal as Sys};
        let Some(pid) = child.id().and_then(|id| process::Pid::from_raw(id as i32)) else {
            return;
        };
        let sys = match signal {
            Signal::Interrupt => Sys::INT,
            Signal::Terminate => Sys::TERM,
        };
        let _ = match self {
            Group::Own => process::kill_process_group(pid, sys),
            // Ctrl-C on the terminal has reached the whole group already.
            Group::Terminal if signal == Signal::Interrupt => Ok(()),
            Group::Terminal if process::getpgrp() == process::getpid() => {
                // svc handles its own copy: it is already stopping.
                process::kill_current_process_group(sys)
            }
            Group::Terminal => process::kill_process(pid, sys),
        };
    }

    #[cfg(not(unix))]
    fn pass(self, _child: &tokio::process::Child, _signal: Signal) {}

    /// Kills what is left of the command's own group after the grace period.
    #[cfg(unix)]
    fn kill(self, child: &tokio::process::Child) {
        use rustix::process;
        if self == Group::Own
            && let Some(pid) = child.id().and_then(|id| process::Pid::from_raw(id as i32))
        {
            let _ = process::kill_process_group(pid, process::Signal::KILL);
        }
    }

    #[cfg(not(unix))]
    fn kill(self, _child: &tokio::process::Child) {}
}

/// 128 + the signal that ended a process, as shells report it (1 where it is not known).
fn signal_code(status: &ExitStatus) -> u8 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return u8::try_from(128 + signal).unwrap_or(1);
        }
    }
    let _ = status;
    1
}

/// The variables `svc` reads for the emulator's default project, and its start line whole
/// (`SVC_EMULATOR_STARTUP`, for every resource token).
fn environment(emulator: &svc_emulator::Emulator, line: &str) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_PROJECT", emulator.project().as_str().to_owned()),
        (
            "SVC_ENVIRONMENT",
            emulator.environment().as_str().to_owned(),
        ),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
        ("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()),
        ("SVC_EMULATOR_STARTUP", line.to_owned()),
    ];
    if let Some(ca) = emulator.tls_ca_pem_path() {
        env.push(("SVC_CA_CERT", ca.display().to_string()));
    }
    env
}
