//! Files that hold secrets: the start line of `svc emulator exec --startup-file` (the API key,
//! every token, the page's sign-in token), verify's reports and cases (what a reference
//! answered), the config file. Each is written so that no other local user can read it or
//! redirect it:
//!
//! - created `0600` on Unix (whatever the umask), as a new temporary file beside the target
//!   (`O_EXCL`: a file or link planted under its name makes the write fail, never followed);
//! - written whole, then renamed over the target: a reader sees the old file or the new one,
//!   never half of one, and an existing file of wider mode is replaced, not rewritten;
//! - a target that is a symbolic link is refused: the link is neither followed nor replaced.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Why `path` cannot be written as a private file (a symbolic link, a folder); `Ok` when it
/// can be tried. Checked before a command sends anything, and again when it writes.
pub fn check_target(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "{} is a symbolic link: it would hold secrets, so it is not written through a link; \
             remove the link or give another path",
            path.display()
        )),
        Ok(meta) if meta.is_dir() => Err(format!("{} is a folder", path.display())),
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` as a private file (see the module's comment).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    check_target(path).map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
    replace(path, bytes)
}

/// Like [`write()`], but a symbolic link at `path` is replaced by the file (still never
/// followed): for the user's own config file, which a link in their dotfiles may name.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (temp, mut file) = create_temp(path)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temp, path)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A new file beside `path`, readable and writable by its owner only.
fn create_temp(path: &Path) -> io::Result<(PathBuf, std::fs::File)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut attempt = 0u32;
    loop {
        let temp = path.with_file_name(format!(".{name}.{}.{}.tmp", std::process::id(), unique()));
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 8 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A number unlikely to repeat: the clock's nanoseconds and a counter.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    nanos ^ (COUNTER.fetch_add(1, Ordering::Relaxed) << 32)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("svc-private-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn a_new_file_and_a_replaced_one_are_the_owners_only_and_whole() {
        let dir = dir("mode");
        let path = dir.join("start.json");
        write(&path, b"one").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(mode(&path), 0o600);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symbolic_link_is_refused_and_its_target_untouched() {
        let dir = dir("link");
        let target = dir.join("victim");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.join("start.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write(&link, b"secret").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A dangling link too: nothing is created where it points.
        let nowhere = dir.join("nowhere");
        let dangling = dir.join("dangling.json");
        std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
        assert!(write(&dangling, b"secret").is_err());
        assert!(!nowhere.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
