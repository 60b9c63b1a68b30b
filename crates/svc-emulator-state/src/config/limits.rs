//! [`Limits`]: what the emulator allows one client before it refuses or closes, so that a
//! misbehaving or hostile client cannot stall everyone else (crate README, "Under abuse").

use std::time::Duration;

/// The default [`Limits::idle_timeout`]: 30 s, hyper's default for a request's headers.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The default [`Limits::max_stubs`]: 500 stubs a project.
pub const MAX_STUBS: usize = 500;

/// The default [`Limits::max_stub_bytes`]: 4 MiB of stubs a project.
pub const MAX_STUB_BYTES: usize = 4 * 1024 * 1024;

/// Connection limits of the server, and the bounds on what one client may declare (stubs). The
/// defaults suit tests and development; lower them to see the behaviour in a test.
///
/// ```
/// use std::time::Duration;
/// use svc_emulator::{EmulatorConfig, Limits};
///
/// let config = EmulatorConfig::default().limits(
///     Limits::default()
///         .first_byte_timeout(Duration::from_secs(2))
///         .max_connections(64)
///         .max_stubs(1000),
/// );
/// # drop(config);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    first_byte_timeout: Duration,
    idle_timeout: Duration,
    max_connections: Option<usize>,
    sql_timeout: Duration,
    sql_answer_bytes: usize,
    resource_jobs: usize,
    resource_queue: usize,
    resource_wait: Duration,
    max_stubs: usize,
    max_stub_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            first_byte_timeout: Duration::from_secs(10),
            idle_timeout: IDLE_TIMEOUT,
            max_connections: None,
            sql_timeout: svc_engine::SQL_TIME_LIMIT,
            sql_answer_bytes: svc_engine::MAX_SQL_ANSWER_BYTES,
            resource_jobs: 16,
            resource_queue: 256,
            resource_wait: Duration::from_secs(2),
            max_stubs: MAX_STUBS,
            max_stub_bytes: MAX_STUB_BYTES,
        }
    }
}

impl Limits {
    /// How long a new connection may stay silent (default 10 s): one that sends nothing, or
    /// does not finish its TLS handshake, in that time is closed.
    pub fn first_byte_timeout(mut self, timeout: Duration) -> Self {
        self.first_byte_timeout = timeout;
        self
    }

    /// How long a connection may take to send a request's headers, counted from when it starts
    /// waiting for them: a kept-alive HTTP/1.1 connection idle that long between requests, or a
    /// request whose headers never end, is closed (default [`IDLE_TIMEOUT`], 30 s: hyper's own
    /// default for headers, and above the 20 s for which the SDK keeps idle connections, so that
    /// its pooled connections are never closed under it).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most connections served at once (default: the process's open-files limit less an
    /// eighth, at least 64 files, for the databases; 1024 when the limit cannot be read). At the
    /// cap, the oldest connection that has not sent a byte yet is closed to make room; when
    /// there is none, the new connection is closed at once. Either way the connections being
    /// served keep their answers.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max.max(1));
        self
    }

    /// How long one read-only SQL query may run, writing its answer included (default 10 s):
    /// it is interrupted at the deadline and answers `400`.
    pub fn sql_timeout(mut self, timeout: Duration) -> Self {
        self.sql_timeout = timeout;
        self
    }

    /// The largest SQL answer, in bytes of JSON (default 32 MiB; at least 1 KiB): a larger one
    /// is a `400` that says so, and no single value may be larger than half of it.
    pub fn sql_answer_bytes(mut self, bytes: usize) -> Self {
        self.sql_answer_bytes = bytes.max(1024);
        self
    }

    /// How many database jobs (record calls, SQL, reloads) one resource runs at once (default
    /// 16; at least 1). Every route shares one pool of blocking threads: this keeps a slow or
    /// flooded resource from taking them all.
    pub fn resource_jobs(mut self, jobs: usize) -> Self {
        self.resource_jobs = jobs.max(1);
        self
    }

    /// How many requests may wait for one of a resource's turns (default 256); past that a
    /// request is answered `503` with `Retry-After: 1` at once.
    pub fn resource_queue(mut self, requests: usize) -> Self {
        self.resource_queue = requests;
        self
    }

    /// How long the resource may go without finishing any request while a request waits for
    /// its turn (default 2 s): past that the waiting request is answered `503` with
    /// `Retry-After: 1` and a message saying the resource is not moving. A resource that keeps
    /// finishing requests keeps its whole queue, however long the queue takes.
    pub fn resource_wait(mut self, wait: Duration) -> Self {
        self.resource_wait = wait;
        self
    }

    /// How many stubs one project may hold at once, the config's included (default
    /// [`MAX_STUBS`], 500; 0: none). Past it a declaration is refused, over HTTP with a `413`
    /// that names the limit and what the project holds. A project of the config file may set
    /// its own (its `"max_stubs"`), which wins over this one.
    pub fn max_stubs(mut self, stubs: usize) -> Self {
        self.max_stubs = stubs;
        self
    }

    /// How many bytes of stubs one project may hold at once, each stub counted as the JSON of
    /// its declaration (its conditions, headers and body), the config's included (default
    /// [`MAX_STUB_BYTES`], 4 MiB). Past it a declaration is refused, over HTTP with a `413`
    /// that names the limit and what the project holds. A project of the config file may set
    /// its own (its `"max_stub_bytes"`), which wins over this one.
    pub fn max_stub_bytes(mut self, bytes: usize) -> Self {
        self.max_stub_bytes = bytes;
        self
    }

    /// The stubs per project in force.
    pub fn stub_count_limit(&self) -> usize {
        self.max_stubs
    }

    /// The bytes of stubs per project in force.
    pub fn stub_bytes_limit(&self) -> usize {
        self.max_stub_bytes
    }

    /// The jobs per resource in force.
    pub fn resource_jobs_limit(&self) -> usize {
        self.resource_jobs
    }

    /// The waiting requests per resource in force.
    pub fn resource_queue_limit(&self) -> usize {
        self.resource_queue
    }

    /// The longest time without progress a waiting request accepts, in force.
    pub fn resource_wait_limit(&self) -> Duration {
        self.resource_wait
    }

    /// The SQL timeout in force.
    pub fn sql_time(&self) -> Duration {
        self.sql_timeout
    }

    /// The SQL answer cap in force.
    pub fn sql_answer(&self) -> usize {
        self.sql_answer_bytes
    }

    /// The first-byte timeout in force.
    pub fn first_byte(&self) -> Duration {
        self.first_byte_timeout
    }

    /// The idle timeout in force.
    pub fn idle(&self) -> Duration {
        self.idle_timeout
    }

    /// The connection cap in force.
    pub fn connections(&self) -> usize {
        self.max_connections
            .unwrap_or_else(|| connections_for(open_files_limit()))
    }
}

/// The connection cap for an open-files limit: an eighth (at least 64 files) is left for the
/// databases, the listener and the rest.
fn connections_for(open_files: Option<u64>) -> usize {
    let Some(limit) = open_files else {
        return 1024;
    };
    let headroom = (limit / 8).max(64);
    usize::try_from(limit.saturating_sub(headroom).max(16)).unwrap_or(usize::MAX)
}

/// The soft open-files limit of this process, read from `/proc/self/limits` (Linux): the
/// `Max open files` line's first number. `None` elsewhere, or when it says `unlimited`.
fn open_files_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_open_files(&text)
}

fn parse_open_files(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_room_below_the_open_files_limit() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_open_files(limits), Some(1024));
        assert_eq!(connections_for(Some(1024)), 896);
        assert_eq!(connections_for(Some(256)), 192);
        assert_eq!(connections_for(Some(40)), 16);
        assert_eq!(connections_for(Some(1 << 20)), (1 << 20) - (1 << 17));
        assert_eq!(connections_for(None), 1024);
        assert_eq!(
            parse_open_files("Max open files            unlimited            unlimited   files"),
            None
        );
        // This process's own limit is read on Linux.
        if cfg!(target_os = "linux") {
            assert!(open_files_limit().is_some());
        }
        assert_eq!(Limits::default().max_connections(0).connections(), 1);
    }
}
