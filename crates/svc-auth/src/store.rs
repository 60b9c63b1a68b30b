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

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
/// `Debug` lists the keys, not the values.
#[derive(Clone, Default)]
pub struct MemoryTokenStore {
    map: Arc<Mutex<HashMap<String, String>>>,
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
    /// A store in the file at `path`. Nothing is read or written until the first call.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
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

        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
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
}
