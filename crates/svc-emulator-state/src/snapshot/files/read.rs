//! Reading an export's files safely: regular files only (a link followed to one, never into
//! `/proc`, `/sys` or `/dev`), opened without waiting (`O_NONBLOCK`) and checked as opened,
//! each read no further than its limit, and all of them within one import's budget.

use std::fmt;
use std::fs;
use std::io::Read;
use std::path::Path;

use super::layout::files_error;
use super::warnings::own_uid;
use crate::snapshot::SnapshotError;

/// The most an import reads of one file, and of what.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limit {
    bytes: u64,
    of: &'static str,
    /// What to do with a file this large.
    hint: &'static str,
}

/// The manifest, a `project.json` or a `store.json`: 16 MiB.
pub(super) const JSON_LIMIT: Limit = Limit {
    bytes: 16 << 20,
    of: "an export's manifest, project.json or store.json",
    hint: "an export writes none this large: put the export's own file back, or export again",
};

/// One model's records: 1 GiB.
pub(super) const RECORDS_LIMIT: Limit = Limit {
    bytes: 1 << 30,
    of: "one model's records file",
    hint: "keep a model this large in a database of your own (a resource's `database`, \
           without `reset`), which an export leaves out and an import leaves as it is",
};

/// A JSON file of an export.
pub(super) fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    limit: Limit,
    reader: &mut Reader,
) -> Result<T, SnapshotError> {
    let bytes =
        read_export_file(path, limit, reader).map_err(|e| files_error(path, e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| files_error(path, format!("not readable: {e}")))
}

/// Why a file of an export was not read.
#[derive(Debug)]
pub(super) enum Unread {
    /// It could not be opened or read: missing, not allowed.
    Io(std::io::Error),
    /// It is not a file an export writes: what it is, and what to do.
    Refused(String),
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unread::Io(e) => write!(f, "cannot read it: {e}"),
            Unread::Refused(why) => f.write_str(why),
        }
    }
}

/// The most one import reads, of all its files together: each file counts each time it is
/// read, a link's target too (links may name one file many times).
const IMPORT_BUDGET: u64 = 1 << 30;

/// The directories an import never reads from (where a link may lead): the system's, whose
/// files may say they are regular and empty and then never end, or wait (`/proc/kmsg`).
const SYSTEM_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// What an import has read of an export, in all, and what of it others could change.
#[derive(Debug)]
pub(super) struct Reader {
    /// The bytes it may still read ([`IMPORT_BUDGET`]).
    left: u64,
    /// Whether it notes what others could change (an import does; an export, which reads the
    /// directory it writes, does not).
    pub(super) watching: bool,
    /// This process's user, to tell others' files from its own; none when not known.
    pub(super) me: Option<u32>,
    /// Each file or folder that others could change, with why.
    pub(super) exposed: Vec<String>,
}

impl Reader {
    /// An import's.
    pub(super) fn watching() -> Self {
        Self {
            left: IMPORT_BUDGET,
            watching: true,
            me: own_uid(),
            exposed: Vec::new(),
        }
    }

    /// One that keeps no watch: an export's look at what it writes over.
    pub(super) fn unwatched() -> Self {
        Self {
            left: IMPORT_BUDGET,
            watching: false,
            me: None,
            exposed: Vec::new(),
        }
    }
}

/// The file `path` of an export, whole, when it is a regular file (a symbolic link is followed,
/// to a regular file only, and not into `/proc`, `/sys` or `/dev`) of at most `limit` bytes,
/// and no more than `reader` may still read. Anything else is refused before it is opened (a
/// device's open may act), the file is opened without waiting (`O_NONBLOCK`: a FIFO put in its
/// place meanwhile opens at once) and checked again as opened, and no more than the limit is
/// read from it, whatever its size said.
pub(super) fn read_export_file(
    path: &Path,
    limit: Limit,
    reader: &mut Reader,
) -> Result<Vec<u8>, Unread> {
    check_file(&fs::metadata(path).map_err(Unread::Io)?, limit)?;
    let real = fs::canonicalize(path).map_err(Unread::Io)?;
    if let Some(system) = SYSTEM_DIRS.iter().find(|d| real.starts_with(d)) {
        return Err(Unread::Refused(format!(
            "it is {}, under {system}: an import reads only the files an export writes, never \
             the system's (/proc, /sys, /dev), which may never end or wait; put the export's \
             own file back, or export again",
            real.display()
        )));
    }
    let file = open_regular(&real, limit)?;
    let opened = file.metadata().map_err(Unread::Io)?;
    reader.note(path, &opened, false);
    if let Some(dir) = real.parent()
        && fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
    {
        // A link: what it leads to is read, and may be changed where it is.
        reader.note_dir(dir, true);
    }
    let bytes = read_within(file, opened.len(), limit, reader.left)?;
    reader.left -= bytes.len() as u64;
    Ok(bytes)
}

/// `path` opened to read, without waiting (`O_NONBLOCK`, and `O_NOCTTY`: a terminal does not
/// become this process's), when what was opened is a regular file within `limit`: a FIFO or a
/// device swapped in after a check of the path is refused here, never waited on.
fn open_regular(path: &Path, limit: Limit) -> Result<fs::File, Unread> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(Unread::Io)?;
    check_file(&file.metadata().map_err(Unread::Io)?, limit)?;
    Ok(file)
}

/// What `from` holds, of which its size says `len`, when no more than `limit` and no more than
/// `left` of the import's budget: no more than that is read, whatever `len` said.
fn read_within(from: impl Read, len: u64, limit: Limit, left: u64) -> Result<Vec<u8>, Unread> {
    if len > left && len <= limit.bytes {
        return Err(over_budget());
    }
    let most = limit.bytes.min(left);
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(most)).unwrap_or(0));
    from.take(most.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    let read = bytes.len() as u64;
    if read > limit.bytes {
        return Err(too_large(limit));
    }
    if read > left {
        return Err(over_budget());
    }
    Ok(bytes)
}

/// The import's files reach past [`IMPORT_BUDGET`] in all.
fn over_budget() -> Unread {
    Unread::Refused(format!(
        "the export's files reach past {}, the most one import reads of all its files together \
         (each counts each time it is read, the target of a link too): an export writes each \
         file once; put the export's own files back, or keep the largest models in a database \
         of your own (a resource's `database`, without `reset`), which an export leaves out",
        size_text(IMPORT_BUDGET)
    ))
}

/// Why a file of `meta` is not read within `limit`, if it is not.
fn check_file(meta: &fs::Metadata, limit: Limit) -> Result<(), Unread> {
    if !meta.is_file() {
        return Err(Unread::Refused(format!(
            "{}, not a regular file: an import reads only the regular files an export writes \
             (a symbolic link is followed to one); put the export's own file back, or export \
             again",
            file_kind(meta)
        )));
    }
    if meta.len() > limit.bytes {
        return Err(too_large(limit));
    }
    Ok(())
}

/// A file larger than `limit`, refused.
fn too_large(limit: Limit) -> Unread {
    Unread::Refused(format!(
        "larger than {}, the most an import reads of {}: {}",
        size_text(limit.bytes),
        limit.of,
        limit.hint
    ))
}

/// `bytes` in words: `1 GiB`, `16 MiB`, `10 bytes`.
fn size_text(bytes: u64) -> String {
    match bytes {
        bytes if bytes > 0 && bytes % (1 << 30) == 0 => format!("{} GiB", bytes >> 30),
        bytes if bytes > 0 && bytes % (1 << 20) == 0 => format!("{} MiB", bytes >> 20),
        bytes => format!("{bytes} bytes"),
    }
}

/// What a file that is not a regular one is, in words.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A file whose size says less than it holds (as `/proc`'s files say 0) is read no further
    /// than the limit: the limit holds whatever the size said.
    #[test]
    fn a_file_is_read_no_further_than_its_limit_whatever_its_size_says() {
        let small = Limit {
            bytes: 10,
            of: "a test's file",
            hint: "a hint",
        };
        let endless = std::io::repeat(b'x');
        let refused = read_within(endless, 0, small, u64::MAX)
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "larger than 10 bytes, the most an import reads of a test's file: a hint"
        );
        let read = read_within(std::io::repeat(b'x').take(10), 0, small, u64::MAX).unwrap();
        assert_eq!(read.len(), 10);
    }

    /// A temporary directory of a test, removed at its end.
    struct Temp(PathBuf);

    impl Temp {
        fn new() -> Self {
            let path = std::env::temp_dir()
                .join(format!("svc-files-test-{}", uuid::Uuid::new_v4().simple()));
            fs::create_dir_all(&path).unwrap();
            Self(path)
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Finding F7: an import reads no more than its budget of all its files together, each
    /// read counted, through links too: two links to one file count it twice.
    #[cfg(unix)]
    #[test]
    fn an_import_reads_no_more_than_its_budget_of_all_its_files() {
        let temp = Temp::new();
        let file = temp.0.join("records.json");
        fs::write(&file, [b' '; 600]).unwrap();
        let (one, two) = (temp.0.join("one.json"), temp.0.join("two.json"));
        std::os::unix::fs::symlink(&file, &one).unwrap();
        std::os::unix::fs::symlink(&file, &two).unwrap();
        let mut reader = Reader::watching();
        reader.left = 1000;
        assert_eq!(
            read_export_file(&one, JSON_LIMIT, &mut reader)
                .unwrap()
                .len(),
            600
        );
        assert_eq!(reader.left, 400);
        let refused = read_export_file(&two, JSON_LIMIT, &mut reader)
            .unwrap_err()
            .to_string();
        assert!(
            refused.starts_with("the export's files reach past 1 GiB, the most one import reads"),
            "{refused}"
        );
        // A file whose size says 0 is counted by what it held.
        let refused = read_within(std::io::repeat(b'x'), 0, JSON_LIMIT, 100)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("reach past 1 GiB"), "{refused}");
    }

    /// Finding F6: what an import opens is opened without waiting and checked as opened: a
    /// FIFO (one swapped in after the path was checked) is refused at once, never waited on
    /// for a writer; and a link into `/proc` (whose files say they are regular and empty, and
    /// may never end: `/proc/kmsg`) is refused before it is opened.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_never_waited_on_and_proc_is_never_read() {
        let temp = Temp::new();
        let fifo = temp.0.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let (sent, opened) = std::sync::mpsc::channel();
        let at = fifo.clone();
        std::thread::spawn(move || {
            let _ = sent.send(
                open_regular(&at, JSON_LIMIT)
                    .map(drop)
                    .map_err(|e| e.to_string()),
            );
        });
        // A generous deadline: an open that waits for a writer never answers.
        let answer = opened
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("opening a FIFO waited for a writer");
        assert!(
            answer
                .unwrap_err()
                .starts_with("a FIFO, not a regular file")
        );

        let link = temp.0.join("status.json");
        std::os::unix::fs::symlink("/proc/self/status", &link).unwrap();
        let refused = read_export_file(&link, JSON_LIMIT, &mut Reader::watching())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("under /proc: an import reads only the files an export writes"),
            "{refused}"
        );
    }
}
