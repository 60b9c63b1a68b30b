//! Who runs `initdb`, the server and its watchdog: this process's user, or, when that is root
//! (both `initdb` and `postgres` refuse to run as root), the unprivileged `postgres` account
//! that the distributions' PostgreSQL packages create.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use crate::Error;

/// The account that runs the server when this process runs as root.
pub(crate) const UNPRIVILEGED: &str = "postgres";

/// The user the server's programs run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Account {
    /// This process's own user (not root).
    Current,
    /// The `postgres` account, switched to by `setuid`/`setgid` in the child (std's
    /// `CommandExt::uid`, which also drops root's supplementary groups).
    Unprivileged { uid: u32, gid: u32 },
}

impl Account {
    /// [`Account::Current`] unless this process runs as root.
    pub(crate) fn detect() -> Result<Account, Error> {
        if effective_uid()? != 0 {
            return Ok(Account::Current);
        }
        let no_account = || {
            Error::new(format!(
                "running as root, which initdb and postgres refuse, and there is no \
                 `{UNPRIVILEGED}` account to run them as: install PostgreSQL from the \
                 distribution's packages (apt-get install postgresql creates the account), \
                 or run as a user other than root"
            ))
        };
        let uid = id(&["-u", UNPRIVILEGED]).ok_or_else(no_account)?;
        let gid = id(&["-g", UNPRIVILEGED]).ok_or_else(no_account)?;
        if uid == 0 {
            return Err(no_account());
        }
        Ok(Account::Unprivileged { uid, gid })
    }

    /// A command for `program` that runs as this account, in `dir` (the cluster's directory:
    /// the unprivileged account may not be allowed into this process's working directory).
    pub(crate) fn command(self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut command = Command::new(program);
        command.current_dir(dir);
        clean_environment(&mut command);
        if let Account::Unprivileged { uid, gid } = self {
            use std::os::unix::process::CommandExt;
            command.uid(uid).gid(gid);
        }
        command
    }

    /// Gives `dir` to this account (a no-op for the current user).
    pub(crate) fn hand_over(self, dir: &Path) -> Result<(), Error> {
        match self {
            Account::Current => Ok(()),
            Account::Unprivileged { uid, gid } => {
                std::os::unix::fs::chown(dir, Some(uid), Some(gid)).map_err(|e| {
                    Error::new(format!(
                        "cannot give {} to the `{UNPRIVILEGED}` account (chown: {e}): set TMPDIR \
                         to a local directory such as /tmp",
                        dir.display()
                    ))
                })
            }
        }
    }

    /// A hint to add to the message of a failure of a program run as this account, when the
    /// failure (`failure`: an error or a program's output) is a denied permission.
    pub(crate) fn hint(self, failure: &str) -> &'static str {
        match self {
            Account::Current => "",
            Account::Unprivileged { .. } if !failure.contains("ermission denied") => "",
            Account::Unprivileged { .. } => {
                " (as root, initdb and the server run as the `postgres` account, which must be \
                 able to reach the cluster's directory and PostgreSQL's programs: set TMPDIR to a \
                 directory it can enter, such as /tmp)"
            }
        }
    }
}

/// Removes what would change how PostgreSQL's programs behave: the `PG*` variables (`PGDATA`,
/// `PGPORT`, `PGPASSWORD`, `PGOPTIONS`, ...) and `LC_ALL`; messages are in English
/// (`LC_MESSAGES=C`) so that errors read the same everywhere and "Address already in use" can
/// be recognized in the server's log.
pub(crate) fn clean_environment(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            command.env_remove(name);
        }
    }
    command.env_remove("LC_ALL").env("LC_MESSAGES", "C");
}

/// This process's effective user id: from `/proc/self/status` on Linux, else from `id -u`.
fn effective_uid() -> Result<u32, Error> {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            // Uid: real, effective, saved, filesystem.
            line.split_whitespace().nth(2)?.parse().ok()
        });
    from_proc.or_else(|| id(&["-u"])).ok_or_else(|| {
        Error::new(
            "cannot tell whether this process runs as root: neither /proc/self/status nor \
             `id -u` answered (install coreutils)",
        )
    })
}

/// The number `id ARGS` prints, if it succeeds.
fn id(args: &[&str]) -> Option<u32> {
    let output = Command::new("id").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effective_uid_agrees_with_id() {
        assert_eq!(effective_uid().ok(), id(&["-u"]));
    }

    #[test]
    fn the_root_hint_is_for_denied_permissions_only() {
        let account = Account::Unprivileged { uid: 101, gid: 104 };
        assert!(
            account
                .hint("Permission denied (os error 13)")
                .contains("TMPDIR")
        );
        assert!(
            account
                .hint("could not open: permission denied")
                .contains("TMPDIR")
        );
        assert_eq!(account.hint("unrecognized configuration parameter"), "");
        assert_eq!(Account::Current.hint("Permission denied"), "");
    }

    #[test]
    fn an_unknown_account_has_no_id() {
        assert_eq!(id(&["-u", "no-such-account-pg-cluster"]), None);
    }

    #[test]
    fn commands_lose_pg_variables_and_speak_english() {
        let mut command = Command::new("true");
        clean_environment(&mut command);
        let envs: Vec<_> = command.get_envs().collect();
        assert!(envs.contains(&(OsStr::new("LC_MESSAGES"), Some(OsStr::new("C")))));
        assert!(envs.contains(&(OsStr::new("LC_ALL"), None)));
        for (name, value) in envs {
            if name.to_string_lossy().starts_with("PG") {
                assert_eq!(value, None, "{name:?} is passed on");
            }
        }
    }
}
