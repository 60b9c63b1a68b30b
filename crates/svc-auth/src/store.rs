//! Token stores: where sessions are saved between clients (the JavaScript client's
//! `localStorage`).
//!
//! A [`TokenStore`] maps string keys to string values. Sessions are saved under
//! [`SVC_AUTH_KEY`] as the JSON text of an [`AuthState`](svc_model::AuthState). Two stores are
//! provided:
//!
//! - [`MemoryTokenStore`]: a map in memory; clones share it.
//! - [`FileTokenStore`]: one JSON file (`{"key": "value", ...}`), replaced atomically on every
//!   write, created with mode `0600` on Unix.
//!
//! Clients that share a store share its `svc_auth` entry, like browser tabs of one origin. A
//! client that is not given a store keeps its session in memory only.
//!
//! # Refreshing from many clients and processes
//!
//! Refresh tokens rotate: the server accepts each one once. Sessions that share a store
//! coordinate their refreshes through [`TokenStore::lock_for_refresh`]: a session takes the
//! store's refresh lock, reads the entry again, and uses tokens that another client already
//! rotated instead of refreshing itself. Both stores provided here implement the lock (across
//! clones for the memory store, across processes for the file store, through a lock file beside
//! it).

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs;
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The key under which sessions are saved, shared by every client of a store.
pub const SVC_AUTH_KEY: &str = "svc_auth";

/// A string store for session tokens: get, set and remove a value by key.
///
/// Implement it to keep sessions somewhere else (a keychain, a database, a cookie jar). It is
/// object-safe and used as `Arc<dyn TokenStore>`. Methods are synchronous and called rarely (when a
/// client is built, on login, refresh and logout); a store that needs I/O may block briefly.
///
/// Values are secrets: an implementation must not log them, and should keep them where only the
/// user can read them.
///
/// ```
/// use svc_auth::{MemoryTokenStore, TokenStore};
///
/// let store = MemoryTokenStore::new();
/// store.set("svc_auth", "{}")?;
/// assert_eq!(store.get("svc_auth")?.as_deref(), Some("{}"));
/// store.remove("svc_auth")?;
/// assert_eq!(store.get("svc_auth")?, None);
/// # Ok::<(), svc_auth::TokenStoreError>(())
/// ```
pub trait TokenStore: Send + Sync {
    /// The value under `key`, or `None` when there is none.
    fn get(&self, key: &str) -> Result<Option<String>, TokenStoreError>;

    /// Saves `value` under `key`, replacing any previous value.
    fn set(&self, key: &str, value: &str) -> Result<(), TokenStoreError>;

    /// Removes the value under `key`; removing a missing key succeeds.
    fn remove(&self, key: &str) -> Result<(), TokenStoreError>;

    /// Takes the store's refresh lock, waiting while another holder has it.
    ///
    /// A [`Session`](crate::Session) holds it for the whole of a refresh: it reads the entry
    /// again once it has the lock, refreshes only when nobody else has rotated the tokens
    /// meanwhile, and saves the new tokens before it lets go. Every client that shares the store
    /// (another client in this process, another process on the same file) then refreshes at most
    /// once per rotation, instead of each presenting the same refresh token and all but one being
    /// refused.
    ///
    /// The lock is released when the returned [`StoreLock`] is dropped. The default
    /// implementation is no lock at all ([`StoreLock::unlocked`]): a custom store shared by
    /// several clients should implement it.
    fn lock_for_refresh(&self) -> LockFuture<'_> {
        Box::pin(std::future::ready(Ok(StoreLock::unlocked())))
    }
}

/// The future returned by [`TokenStore::lock_for_refresh`].
pub type LockFuture<'a> =
    Pin<Box<dyn Future<Output = Result<StoreLock, TokenStoreError>> + Send + 'a>>;

/// A held refresh lock of a [`TokenStore`]; dropping it releases the lock.
///
/// A custom store wraps whatever keeps its lock held (a guard, an open file, a lease) with
/// [`StoreLock::new`].
pub struct StoreLock {
    _held: Option<Box<dyn Any + Send>>,
}

impl StoreLock {
    /// A lock held for as long as `held` lives: it is dropped when the `StoreLock` is.
    pub fn new(held: impl Any + Send) -> Self {
        Self {
            _held: Some(Box::new(held)),
        }
    }

    /// No lock: for stores that are never shared.
    pub fn unlocked() -> Self {
        Self { _held: None }
    }
}

impl fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreLock")
            .field("held", &self._held.is_some())
            .finish()
    }
}

impl<T: TokenStore + ?Sized> TokenStore for Arc<T> {
    fn get(&self, key: &str) -> Result<Option<String>, TokenStoreError> {
        (**self).get(key)
    }

    fn set(&self, key: &str, value: &str) -> Result<(), TokenStoreError> {
        (**self).set(key, value)
    }

    fn remove(&self, key: &str) -> Result<(), TokenStoreError> {
        (**self).remove(key)
    }

    fn lock_for_refresh(&self) -> LockFuture<'_> {
        (**self).lock_for_refresh()
    }
}

/// A token store failed. The message names the file (for a file store) and never includes the
/// stored values.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TokenStoreError {
    /// Reading or writing the store's file failed.
    #[error("token store file {}: could not {action}: {source}", path.display())]
    Io {
        /// The store's file.
        path: PathBuf,
        /// What was being done, e.g. `"read"`.
        action: &'static str,
        /// The I/O error.
        source: Arc<io::Error>,
    },
    /// The store's file is not a JSON object of strings. It is left untouched: fix or delete
    /// it.
    #[error(
        "token store file {} is not a JSON object of strings ({problem} at line {line}, column {column}); fix or delete the file",
        path.display()
    )]
    Corrupt {
        /// The store's file.
        path: PathBuf,
        /// What kind of problem (`"syntax error"`, `"wrong type"`, `"unexpected end"`).
        problem: &'static str,
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
    },
    /// The refresh lock of a [`FileTokenStore`] was held by another client or process for
    /// longer than [`FileTokenStore::LOCK_WAIT_LIMIT`]. Nothing was refreshed; the session is
    /// kept.
    #[error(
        "token store file {}: another client or process has held the refresh lock ({}) for more than {} s; if no other `svc` command or client is running, a stuck process holds it",
        path.display(),
        lock_path.display(),
        waited.as_secs()
    )]
    LockTimeout {
        /// The store's file.
        path: PathBuf,
        /// The lock file beside it.
        lock_path: PathBuf,
        /// How long this caller waited.
        waited: Duration,
    },
    /// A custom store failed.
    #[error("token store: {0}")]
    Other(Arc<dyn std::error::Error + Send + Sync>),
}

impl TokenStoreError {
    /// An error of a custom [`TokenStore`]. Its message must not contain stored values.
    pub fn other(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Other(Arc::from(error.into()))
    }

    fn io(path: &Path, action: &'static str, source: io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            action,
            source: Arc::new(source),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the map half-written, so carry on.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A token store in memory. Clones share the same map, so give clones to the clients that should
/// share sessions.
///
/// Clones also share one refresh lock ([`TokenStore::lock_for_refresh`]): separate clients on
/// clones of one store refresh a shared session once per rotation.
///
/// `Debug` lists the keys, not the values.
#[derive(Clone, Default)]
pub struct MemoryTokenStore {
    map: Arc<Mutex<HashMap<String, String>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn get(&self, key: &str) -> Result<Option<String>, TokenStoreError> {
        Ok(lock(&self.map).get(key).cloned())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), TokenStoreError> {
        lock(&self.map).insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<(), TokenStoreError> {
        lock(&self.map).remove(key);
        Ok(())
    }

    fn lock_for_refresh(&self) -> LockFuture<'_> {
        let refresh = Arc::clone(&self.refresh);
        Box::pin(async move { Ok(StoreLock::new(refresh.lock_owned().await)) })
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let map = lock(&self.map);
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        f.debug_struct("MemoryTokenStore")
            .field("keys", &keys)
            .finish()
    }
}

/// The kind of a JSON error, without serde_json's message (which can quote the input).
pub(crate) fn json_problem(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "wrong type",
        serde_json::error::Category::Eof => "unexpected end",
        serde_json::error::Category::Io => "read error",
    }
}

/// Serializes read-modify-write cycles of every [`FileTokenStore`] in this process, so two stores
/// on the same file never lose each other's writes.
static FILE_LOCK: Mutex<()> = Mutex::new(());

/// Makes temporary file names unique within this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A token store in one JSON file: `{"svc_auth": "<AuthState JSON>", ...}`.
///
/// - A missing (or empty) file is an empty store; the file and its directory are created on the
///   first write.
/// - Every write replaces the whole file atomically: the new content goes to a temporary file in
///   the same directory, which is flushed to disk (`fsync`) and renamed over the old one, so a
///   reader or a crash never sees half a file.
/// - On Unix the file is created with mode `0600` (and a directory it creates with `0700`), so
///   only the user can read the tokens.
/// - A file that is not a JSON object of strings is an error ([`TokenStoreError::Corrupt`]), on
///   read and on write: it is never overwritten.
///
/// Writes within one process are serialized. Across processes, two writes at the same moment
/// can lose one of the two (the last rename wins), but never corrupt the file.
///
/// **Refreshes across processes.** [`lock_for_refresh`](TokenStore::lock_for_refresh) takes an
/// advisory lock (`flock` on Unix, `LockFileEx` on Windows) on a lock file beside the store,
/// `<file name>.lock`, created with mode `0600` and left in place (removing a lock file while
/// others wait on it would let two holders in). Sessions in any number of processes that share
/// the file therefore refresh once per rotation. The lock is released when its holder drops it or
/// exits, even on a crash. A caller waits at most [`LOCK_WAIT_LIMIT`](Self::LOCK_WAIT_LIMIT) for
/// it, then fails with [`TokenStoreError::LockTimeout`].
///
/// ```
/// use svc_auth::{FileTokenStore, TokenStore};
///
/// let dir = std::env::temp_dir().join(format!("svc-auth-doc-{}", std::process::id()));
/// let store = FileTokenStore::new(dir.join("tokens.json"));
/// assert_eq!(store.get("svc_auth")?, None); // no file yet
/// store.set("svc_auth", "value")?;
/// assert_eq!(store.get("svc_auth")?.as_deref(), Some("value"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), svc_auth::TokenStoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    /// How long [`lock_for_refresh`](TokenStore::lock_for_refresh) waits for another holder of
    /// the refresh lock: long enough for a refresh call and its retries, short enough that a
    /// stuck process shows up as an error rather than a hang.
    pub const LOCK_WAIT_LIMIT: Duration = Duration::from_secs(60);

    /// A store in the file at `path`. Nothing is read or written until the first call.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file of refreshes: `<file name>.lock` beside the store's file.
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self
            .path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "tokens".into());
        name.push(".lock");
        self.path.with_file_name(name)
    }

    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        }
    }

    /// Opens (creating it if needed, mode `0600`) the lock file.
    fn open_lock_file(&self) -> Result<fs::File, TokenStoreError> {
        let dir = self.dir();
        create_dir_all(&dir).map_err(|e| TokenStoreError::io(&dir, "create the directory", e))?;
        let lock_path = self.lock_path();
        let mut options = fs::OpenOptions::new();
        // Write access: Windows' LockFileEx needs a handle that can write for an exclusive lock.
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options
            .open(&lock_path)
            .map_err(|e| TokenStoreError::io(&lock_path, "open the lock file", e))
    }

    /// Waits for the lock on `file`, on the calling thread, for at most `limit`.
    fn wait_for_lock(&self, file: &fs::File, limit: Duration) -> Result<(), TokenStoreError> {
        let started = Instant::now();
        // Polling rather than a blocking `lock()`: a blocking wait could not give up, and a
        // process stopped while holding the lock (Ctrl-Z) would hang every other one.
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(()),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(e)) => {
                    return Err(TokenStoreError::io(&self.lock_path(), "lock", e));
                }
            }
            let waited = started.elapsed();
            if waited >= limit {
                return Err(TokenStoreError::LockTimeout {
                    path: self.path.clone(),
                    lock_path: self.lock_path(),
                    waited,
                });
            }
            std::thread::sleep(pause.min(limit - waited));
            pause = (pause * 2).min(Duration::from_millis(25));
        }
    }

    fn read_map(&self) -> Result<BTreeMap<String, String>, TokenStoreError> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(TokenStoreError::io(&self.path, "read", e)),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(BTreeMap::new());
        }
        // serde_json's messages can quote the input; report only the category and position.
        serde_json::from_slice(&bytes).map_err(|e| TokenStoreError::Corrupt {
            path: self.path.clone(),
            problem: json_problem(&e),
            line: e.line(),
            column: e.column(),
        })
    }

    fn write_map(&self, map: &BTreeMap<String, String>) -> Result<(), TokenStoreError> {
        let mut text = serde_json::to_vec_pretty(map).map_err(|e| {
            TokenStoreError::io(&self.path, "encode", io::Error::other(e.to_string()))
        })?;
        text.push(b'\n');

        let dir = self.dir();
        create_dir_all(&dir).map_err(|e| TokenStoreError::io(&dir, "create the directory", e))?;

        let file_name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "tokens".to_owned());
        let temp = dir.join(format!(
            ".{file_name}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));

        let result = write_new_private_file(&temp, &text)
            .map_err(|e| TokenStoreError::io(&temp, "write the temporary file", e))
            .and_then(|()| {
                fs::rename(&temp, &self.path)
                    .map_err(|e| TokenStoreError::io(&self.path, "replace", e))
            });
        if result.is_err() {
            let _ = fs::remove_file(&temp);
            return result;
        }
        sync_dir(&dir);
        Ok(())
    }
}

/// Creates `path` (which must not exist) with mode `0600` on Unix, writes `content` and flushes
/// it to disk.
fn write_new_private_file(path: &Path, content: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(content)?;
    file.sync_all()
}

fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Flushes the directory entry of a rename to disk, where the platform allows it (best effort:
/// the rename itself has already succeeded).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

impl TokenStore for FileTokenStore {
    fn get(&self, key: &str) -> Result<Option<String>, TokenStoreError> {
        let _guard = lock(&FILE_LOCK);
        Ok(self.read_map()?.remove(key))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), TokenStoreError> {
        let _guard = lock(&FILE_LOCK);
        let mut map = self.read_map()?;
        map.insert(key.to_owned(), value.to_owned());
        self.write_map(&map)
    }

    fn remove(&self, key: &str) -> Result<(), TokenStoreError> {
        let _guard = lock(&FILE_LOCK);
        let mut map = self.read_map()?;
        if map.remove(key).is_some() {
            self.write_map(&map)?;
        }
        Ok(())
    }

    fn lock_for_refresh(&self) -> LockFuture<'_> {
        Box::pin(async move {
            let file = self.open_lock_file()?;
            // Usually free: take it without leaving the caller's thread.
            match file.try_lock() {
                Ok(()) => return Ok(StoreLock::new(file)),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(e)) => {
                    return Err(TokenStoreError::io(&self.lock_path(), "lock", e));
                }
            }
            // Held elsewhere: wait on a thread of its own, so that no async runtime thread
            // blocks (svc-auth needs no runtime). If this future is dropped meanwhile, the
            // thread still finishes, and the lock it may take is released with the file.
            let (tx, rx) = tokio::sync::oneshot::channel();
            let store = self.clone();
            std::thread::Builder::new()
                .name("svc-auth-store-lock".to_owned())
                .spawn(move || {
                    let result = store
                        .wait_for_lock(&file, Self::LOCK_WAIT_LIMIT)
                        .map(|()| file);
                    let _ = tx.send(result);
                })
                .map_err(|e| {
                    TokenStoreError::io(&self.lock_path(), "start a thread to wait for", e)
                })?;
            match rx.await {
                Ok(result) => result.map(StoreLock::new),
                Err(_) => Err(TokenStoreError::io(
                    &self.lock_path(),
                    "wait for",
                    io::Error::other("the waiting thread stopped"),
                )),
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A directory under the system temp dir, removed when dropped.
    pub(crate) struct TempDir(pub(crate) PathBuf);

    impl TempDir {
        pub(crate) fn new(label: &str) -> Self {
            static N: AtomicU64 = AtomicU64::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let path = std::env::temp_dir().join(format!(
                "svc-auth-{label}-{}-{nanos}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&path).unwrap();
            Self(path)
        }

        pub(crate) fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn memory_store_clones_share() {
        let a = MemoryTokenStore::new();
        let b = a.clone();
        a.set("k", "SECRET-VALUE").unwrap();
        assert_eq!(b.get("k").unwrap().as_deref(), Some("SECRET-VALUE"));
        assert_eq!(format!("{b:?}"), r#"MemoryTokenStore { keys: ["k"] }"#);
        b.remove("k").unwrap();
        b.remove("k").unwrap(); // removing twice is fine
        assert_eq!(a.get("k").unwrap(), None);
        // Usable as a trait object.
        let shared: Arc<dyn TokenStore> = Arc::new(a);
        shared.set("x", "1").unwrap();
        assert_eq!(Arc::clone(&shared).get("x").unwrap().as_deref(), Some("1"));
    }

    #[test]
    fn file_store_round_trip_and_tolerates_missing_file() {
        let dir = TempDir::new("round-trip");
        let store = FileTokenStore::new(dir.0.join("nested").join("tokens.json"));
        assert_eq!(store.get("svc_auth").unwrap(), None);
        store.remove("svc_auth").unwrap(); // nothing to remove, no file created
        assert!(!store.path().exists());

        store.set("svc_auth", "one").unwrap();
        store.set("other", "two").unwrap();
        assert_eq!(store.get("svc_auth").unwrap().as_deref(), Some("one"));
        let text = fs::read_to_string(store.path()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json, serde_json::json!({"svc_auth": "one", "other": "two"}));

        store.remove("svc_auth").unwrap();
        assert_eq!(store.get("svc_auth").unwrap(), None);
        assert_eq!(store.get("other").unwrap().as_deref(), Some("two"));

        // A second store on the same file sees the same entries.
        let again = FileTokenStore::new(store.path());
        assert_eq!(again.get("other").unwrap().as_deref(), Some("two"));

        // An empty file counts as an empty store.
        fs::write(store.path(), "  \n").unwrap();
        assert_eq!(store.get("other").unwrap(), None);
    }

    #[test]
    fn file_store_writes_atomically_and_leaves_no_temp_files() {
        let dir = TempDir::new("atomic");
        let store = FileTokenStore::new(dir.0.join("tokens.json"));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        store.set(&format!("k{t}"), &format!("v{i}")).unwrap();
                        // Every read sees a whole file.
                        store.get("k0").unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for t in 0..8 {
            assert_eq!(store.get(&format!("k{t}")).unwrap().as_deref(), Some("v24"));
        }
        assert_eq!(dir.entries(), vec!["tokens.json".to_owned()]);
    }

    #[cfg(unix)]
    #[test]
    fn file_store_mode_is_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("mode");
        let path = dir.0.join("tokens.json");
        // Even a file that existed with a wider mode is replaced by a private one.
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let store = FileTokenStore::new(&path);
        store.set("svc_auth", "x").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let sub = dir.0.join("sub");
        FileTokenStore::new(sub.join("t.json"))
            .set("k", "v")
            .unwrap();
        let dir_mode = fs::metadata(&sub).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700, "{dir_mode:o}");
    }

    #[test]
    fn corrupt_file_is_an_error_and_is_not_overwritten() {
        let dir = TempDir::new("corrupt");
        let path = dir.0.join("tokens.json");
        let store = FileTokenStore::new(&path);
        for content in [
            "{not json",
            r#""SECRET-TOKEN""#,
            r#"{"svc_auth": 5}"#,
            r#"{"svc_auth": "SECRET-TOKEN", "x": ["SECRET-TOKEN"]}"#,
            "[1, 2]",
            "\u{feff}{}",
        ] {
            fs::write(&path, content).unwrap();
            let err = store.get("svc_auth").unwrap_err();
            assert!(
                matches!(err, TokenStoreError::Corrupt { .. }),
                "{content}: {err:?}"
            );
            let message = err.to_string();
            assert!(message.contains("tokens.json"), "{message}");
            assert!(!message.contains("SECRET"), "{message}");
            assert!(!format!("{err:?}").contains("SECRET"));
            assert!(store.set("svc_auth", "new").is_err());
            assert!(store.remove("svc_auth").is_err());
            assert_eq!(fs::read_to_string(&path).unwrap(), content);
        }
    }

    #[test]
    fn io_errors_name_the_file() {
        let dir = TempDir::new("io");
        // The path is a directory: reading it fails with an I/O error, not a panic.
        let store = FileTokenStore::new(&dir.0);
        let err = store.get("k").unwrap_err();
        assert!(
            matches!(err, TokenStoreError::Io { action: "read", .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains(&*dir.0.to_string_lossy()));
    }

    #[test]
    fn a_lock_held_elsewhere_times_out_with_a_clear_error() {
        let dir = TempDir::new("lock-timeout");
        let store = FileTokenStore::new(dir.0.join("session.json"));
        // Another holder: a separate open of the lock file, as another process would have.
        let other = store.open_lock_file().unwrap();
        other.try_lock().unwrap();
        let mine = store.open_lock_file().unwrap();
        let err = store
            .wait_for_lock(&mine, Duration::from_millis(20))
            .unwrap_err();
        assert!(
            matches!(err, TokenStoreError::LockTimeout { .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains("session.json.lock") && message.contains("refresh lock"),
            "{message}"
        );
        // Released by its holder: taken at once.
        other.unlock().unwrap();
        store.wait_for_lock(&mine, Duration::ZERO).unwrap();
    }

    #[tokio::test]
    async fn a_dropped_wait_for_the_lock_leaves_it_free() {
        let dir = TempDir::new("lock-drop");
        let store = FileTokenStore::new(dir.0.join("session.json"));
        let held = store.lock_for_refresh().await.unwrap();
        {
            // A caller that starts waiting (its thread is spawned on the first poll) and gives
            // up while the lock is held elsewhere.
            let mut waiting = store.lock_for_refresh();
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(waiting.as_mut().poll(&mut cx).is_pending());
            drop(waiting);
        }
        drop(held);
        // Whatever the abandoned waiter did, the lock can be taken again.
        let again = store.lock_for_refresh().await.unwrap();
        drop(again);
    }
}
