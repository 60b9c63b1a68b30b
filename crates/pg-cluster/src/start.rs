//! Starting a cluster: a fresh directory, `initdb`, a free loopback port, the server under its
//! watchdog, and the wait until it accepts connections.
//!
//! The directory holds data/ (the cluster), the server's Unix socket, `server.log` (the
//! server's and the watchdog's output) and, once the server has exited, `server.exited` (its
//! exit status, written by the watchdog).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::net::TcpListener;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::account::Account;
use crate::binaries::Binaries;
use crate::{Cluster, Error};

/// The superuser role `initdb` creates, whatever the OS user.
pub(crate) const SUPERUSER: &str = "postgres";

/// How long the server may take to accept connections: generous, for a busy two-core CI box.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// How often the start is checked on (the server is usually ready within a second).
const POLL: Duration = Duration::from_millis(20);

/// Starts in a row whose port was taken between our probe and the server's `bind`.
const PORT_ATTEMPTS: usize = 5;

/// Lines of the server's log (or of initdb's output) an error shows.
const LOG_LINES: usize = 25;

/// The watchdog, run by `sh -c` as the server's account: `$1` is the cluster's directory, the
/// rest is the server's command line. Its stdin is a pipe whose writing end only the owning
/// process holds and never writes to: when that process drops the cluster or exits, however it
/// exits (a panic, `exit`, a signal, `SIGKILL`), the kernel closes the pipe and `read` returns.
/// The watchdog then asks the server for a fast shutdown (`SIGINT`), waits for it, and removes
/// the directory. When the server exits by itself, `server.exited` tells the starting process
/// (which reads the log), and the directory stays until the owner lets go.
const WATCHDOG: &str = r#"dir=$1
shift
exec 3<&0 </dev/null >>"$dir/server.log" 2>&1
"$@" 3<&- &
server=$!
{
    read -r line <&3
    [ -e "$dir/server.exited" ] || kill -INT "$server"
} &
wait "$server"
echo "$?" >"$dir/server.exited"
wait
rm -rf "$dir"
"#;

/// Starts a cluster, trying again with a new port when the one probed was taken meanwhile.
pub(crate) fn start() -> Result<Cluster, Error> {
    let binaries = Binaries::find()?;
    let account = Account::detect()?;
    let mut taken = Vec::new();
    for _ in 0..PORT_ATTEMPTS {
        match attempt(&binaries, account)? {
            Attempt::Ready(cluster) => return Ok(cluster),
            Attempt::PortTaken(port) => taken.push(port.to_string()),
        }
    }
    Err(Error::new(format!(
        "PostgreSQL could not listen on 127.0.0.1: each free port found ({}) was taken by another \
         program before the server could bind it; try again, or find what opens so many ports",
        taken.join(", ")
    )))
}

/// How one start ended, when it did not fail.
enum Attempt {
    Ready(Cluster),
    /// Someone else bound the port first: worth another try with another port.
    PortTaken(u16),
}

fn attempt(binaries: &Binaries, account: Account) -> Result<Attempt, Error> {
    let dir = TempDir::create(account)?;
    initdb(binaries, account, dir.path())?;
    let port = free_port()?;
    let server = server_command(binaries, dir.path(), port);
    let watchdog = spawn_watchdog(account, dir.path(), &server)?;
    // From here on the watchdog owns the directory: dropping the cluster closes its stdin, and
    // it stops the server and removes the directory.
    let mut cluster = Cluster {
        port,
        dir: dir.release(),
        binaries: binaries.clone(),
        watchdog,
    };
    match wait_until_ready(&mut cluster) {
        Ok(()) => {}
        Err(Unready::Exited(status)) => {
            let log = log_tail(&cluster.dir);
            if port_taken(&log) {
                return Ok(Attempt::PortTaken(port));
            }
            return Err(Error::new(format!(
                "PostgreSQL exited while starting (status {status}){}; the end of its log:\n{log}",
                account.hint(&log)
            )));
        }
        Err(Unready::WatchdogGone(status)) => {
            return Err(Error::new(format!(
                "the watchdog shell of PostgreSQL exited while the server was starting \
                 ({status}); the end of the server's log:\n{}",
                log_tail(&cluster.dir)
            )));
        }
        Err(Unready::TimedOut) => {
            return Err(Error::new(format!(
                "PostgreSQL did not accept connections within {} s (a very busy machine?); the \
                 end of its log:\n{}",
                READY_DEADLINE.as_secs(),
                log_tail(&cluster.dir)
            )));
        }
        Err(Unready::Io(e)) => {
            return Err(Error::new(format!(
                "cannot watch PostgreSQL start in {}: {e}",
                cluster.dir.display()
            )));
        }
    }
    // "ready" in postmaster.pid; a first query proves that psql reaches it as the URL says.
    match cluster.psql("postgres", "SELECT 1") {
        Ok(out) if out == "1\n" => Ok(Attempt::Ready(cluster)),
        Ok(out) => Err(Error::new(format!(
            "PostgreSQL started, but `SELECT 1` through psql printed {out:?}"
        ))),
        Err(e) => Err(e.context("PostgreSQL started, but psql could not query it")),
    }
}

/// A new directory for one cluster, 0700 and owned by the server's account; removed on drop
/// until [`TempDir::release`] hands it to the watchdog.
struct TempDir {
    path: Option<PathBuf>,
}

impl TempDir {
    fn create(account: Account) -> Result<TempDir, Error> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir();
        let mut builder = fs::DirBuilder::new();
        builder.mode(0o700);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("pg-cluster-{}-{n}", std::process::id()));
            match builder.create(&path) {
                Ok(()) => {
                    let dir = TempDir { path: Some(path) };
                    account.hand_over(dir.path())?;
                    return Ok(dir);
                }
                // Left by an earlier process with the same id: take the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(Error::new(format!(
                        "cannot create a directory for the cluster in {} ({e}): set TMPDIR to a \
                         writable directory",
                        base.display()
                    )));
                }
            }
        }
    }

    fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    fn release(mut self) -> PathBuf {
        self.path.take().unwrap_or_default()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = fs::remove_dir_all(path);
        }
    }
}

/// `initdb` into `DIR/data`: trust authentication, superuser `postgres`, UTF8, no fsync. The
/// locale is C.UTF-8 (upper() and lower() know Unicode), or C where the system lacks it.
fn initdb(binaries: &Binaries, account: Account, dir: &Path) -> Result<(), Error> {
    let data = dir.join("data");
    let initdb = binaries.program("initdb");
    let mut failure = String::new();
    for locale in ["C.UTF-8", "C"] {
        let output = account
            .command(&initdb, dir)
            .arg("-D")
            .arg(&data)
            .args(["--no-sync", "-A", "trust", "-U", SUPERUSER, "-E", "UTF8"])
            .arg(format!("--locale={locale}"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                Error::new(format!(
                    "cannot run {}: {e}{}",
                    initdb.display(),
                    account.hint(&e.to_string())
                ))
            })?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        failure = format!(
            "initdb failed ({}) in {}{}:\n{}",
            output.status,
            dir.display(),
            account.hint(&stderr),
            tail(&stderr, LOG_LINES)
        );
        if !stderr.contains("locale") {
            break;
        }
        // initdb removes the data directory it created when it fails; in case it did not:
        let _ = fs::remove_dir_all(&data);
    }
    Err(Error::new(failure))
}

/// A port that was free on 127.0.0.1 a moment ago (the kernel's choice for port 0).
fn free_port() -> Result<u16, Error> {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| Error::new(format!("cannot bind a socket on 127.0.0.1: {e}")))
}

/// The server's command line: loopback only, on `port`, its socket in `dir`.
fn server_command(binaries: &Binaries, dir: &Path, port: u16) -> Vec<OsString> {
    let mut command: Vec<OsString> = vec![
        binaries.program("postgres").into(),
        "-D".into(),
        dir.join("data").into(),
    ];
    let settings = [
        "listen_addresses=127.0.0.1".to_owned(),
        format!("port={port}"),
        // Quoted: the setting is a list, and a directory may hold a comma or a space.
        format!("unix_socket_directories=\"{}\"", dir.display()),
        // Throwaway data: durability is not worth its time.
        "fsync=off".to_owned(),
        "synchronous_commit=off".to_owned(),
        "full_page_writes=off".to_owned(),
        "lc_messages=C".to_owned(),
    ];
    for setting in settings {
        command.push("-c".into());
        command.push(setting.into());
    }
    command
}

/// The watchdog (see [`WATCHDOG`]) with `server` (a command line) under it, in a process group
/// of its own so that a Ctrl-C in the terminal reaches only the owning process (whose exit
/// then stops the server cleanly).
fn spawn_watchdog(account: Account, dir: &Path, server: &[OsString]) -> Result<Child, Error> {
    account
        .command("sh", dir)
        .arg("-c")
        .arg(WATCHDOG)
        .arg("pg-cluster-watchdog")
        .arg(dir)
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            Error::new(format!(
                "cannot run sh to start PostgreSQL: {e}{}",
                account.hint(&e.to_string())
            ))
        })
}

/// Why the server is not ready.
enum Unready {
    /// It exited, with this status (from `server.exited`).
    Exited(String),
    /// The watchdog shell itself is gone (it could not write its log?).
    WatchdogGone(ExitStatus),
    TimedOut,
    Io(io::Error),
}

/// Waits until `postmaster.pid` says "ready" (as `pg_ctl -w` does), the server exits, or
/// [`READY_DEADLINE`] passes.
fn wait_until_ready(cluster: &mut Cluster) -> Result<(), Unready> {
    let deadline = Instant::now() + READY_DEADLINE;
    let exited = cluster.dir.join("server.exited");
    let pid_file = cluster.dir.join("data").join("postmaster.pid");
    loop {
        // (Complete once it ends with a newline: the shell creates the file, then writes.)
        if let Ok(status) = fs::read_to_string(&exited)
            && status.ends_with('\n')
        {
            return Err(Unready::Exited(status.trim().to_owned()));
        }
        if let Some(status) = cluster.watchdog.try_wait().map_err(Unready::Io)? {
            return Err(Unready::WatchdogGone(status));
        }
        if fs::read_to_string(&pid_file).is_ok_and(|text| postmaster_ready(&text)) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(Unready::TimedOut);
        }
        std::thread::sleep(POLL);
    }
}

/// Whether a `postmaster.pid` says "ready": its eighth line is the server's state
/// (`starting`, `ready`, `stopping`, `standby`), padded with spaces.
fn postmaster_ready(pid_file: &str) -> bool {
    pid_file.lines().nth(7).is_some_and(|s| s.trim() == "ready")
}

/// Whether the server's log says its port was in use.
fn port_taken(log: &str) -> bool {
    log.contains("Address already in use")
}

/// The end of the cluster's `server.log`.
fn log_tail(dir: &Path) -> String {
    match fs::read(dir.join("server.log")) {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes), LOG_LINES),
        Err(e) => format!("(no server.log: {e})"),
    }
}

/// The last `lines` lines of `text`, each indented.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let shown = &all[all.len().saturating_sub(lines)..];
    if shown.is_empty() {
        return "    (empty)".to_owned();
    }
    shown
        .iter()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_is_the_eighth_line_of_postmaster_pid() {
        let ready = "4242\n/tmp/d/data\n1700000000\n5433\n/tmp/d\n127.0.0.1\n  1234 5\nready   \n";
        assert!(postmaster_ready(ready));
        assert!(!postmaster_ready(&ready.replace("ready   ", "starting")));
        assert!(!postmaster_ready("4242\n/tmp/d/data\n"));
        assert!(!postmaster_ready(""));
    }

    #[test]
    fn a_taken_port_is_recognized_in_the_log() {
        let log = "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\n\
                   HINT:  Is another postmaster already running on port 5432?\n\
                   WARNING:  could not create listen socket for \"127.0.0.1\"\n\
                   FATAL:  could not create any TCP/IP sockets\n";
        assert!(port_taken(log));
        assert!(!port_taken(
            "FATAL:  data directory \"x\" has invalid permissions"
        ));
    }

    #[test]
    fn tail_keeps_the_last_lines_indented() {
        assert_eq!(tail("a\nb\nc\n", 2), "    b\n    c");
        assert_eq!(tail("a\n", 5), "    a");
        assert_eq!(tail("\n", 5), "    (empty)");
    }

    #[test]
    fn a_temp_dir_is_private_and_removed_unless_released() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::create(Account::Current).expect("create");
        let path = dir.path().to_path_buf();
        let mode = fs::metadata(&path).expect("exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(dir);
        assert!(!path.exists());

        let kept = TempDir::create(Account::Current).expect("create").release();
        assert!(kept.is_dir());
        fs::remove_dir(&kept).expect("remove");
    }

    /// Waits (60 s at most: CI is busy) until `path` exists, and returns its content.
    fn wait_for_file(path: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(text) = fs::read_to_string(path)
                && text.ends_with('\n')
            {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "{} never appeared",
                path.display()
            );
            std::thread::sleep(POLL);
        }
    }

    fn words(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    // The watchdog's own behaviour, with stand-ins for postgres (so without PostgreSQL).

    #[test]
    fn closing_the_watchdogs_stdin_stops_the_server_and_removes_the_dir() {
        let dir = TempDir::create(Account::Current).expect("dir").release();
        // A stand-in server that writes its pid, then waits to be interrupted. The shell runs
        // it in the background, where SIGINT starts out ignored; postgres installs its own
        // handler, and `env --default-signal` restores the default for `sleep`.
        let server = words(&[
            "sh",
            "-c",
            "echo $$ >server.pid; exec env --default-signal=INT sleep 600",
        ]);
        let mut watchdog = spawn_watchdog(Account::Current, &dir, &server).expect("spawn");
        let pid = wait_for_file(&dir.join("server.pid"));
        let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
        assert!(proc_dir.exists(), "the stand-in server runs");
        // The pid is written before `env` restores SIGINT's default: an interrupt sent in
        // between is ignored, and `sleep` would run its 600 s. Close stdin only once the
        // stand-in is `sleep` itself (a gate, not a delay).
        let deadline = Instant::now() + Duration::from_secs(60);
        while !fs::read_to_string(proc_dir.join("comm")).is_ok_and(|c| c.trim() == "sleep") {
            assert!(Instant::now() < deadline, "the stand-in never became sleep");
            std::thread::sleep(POLL);
        }

        drop(watchdog.stdin.take());
        let status = watchdog.wait().expect("wait");
        assert!(status.success(), "{status}");
        assert!(!dir.exists(), "the watchdog removed {}", dir.display());
        assert!(!proc_dir.exists(), "the stand-in server was stopped");
    }

    #[test]
    fn a_server_that_exits_by_itself_is_reported_and_its_log_kept_until_the_owner_lets_go() {
        let dir = TempDir::create(Account::Current).expect("dir").release();
        let server = words(&["sh", "-c", "echo 'FATAL:  no good' >&2; exit 3"]);
        let mut watchdog = spawn_watchdog(Account::Current, &dir, &server).expect("spawn");
        assert_eq!(wait_for_file(&dir.join("server.exited")), "3\n");
        assert!(log_tail(&dir).contains("FATAL:  no good"));
        assert!(watchdog.try_wait().expect("try_wait").is_none());

        drop(watchdog.stdin.take());
        assert!(watchdog.wait().expect("wait").success());
        assert!(!dir.exists(), "the watchdog removed {}", dir.display());
    }

    #[test]
    fn the_watchdog_script_is_valid_sh() {
        let status = std::process::Command::new("sh")
            .args(["-n", "-c", WATCHDOG])
            .status()
            .expect("run sh");
        assert!(status.success());
    }
}
