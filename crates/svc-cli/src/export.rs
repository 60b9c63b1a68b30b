//! `svc records export`: every matching record, across pages, to NDJSON or CSV, on stdout or into
//! a file that appears only once the export is complete.
//!
//! - With `--out PATH`, the records go to a new temporary file beside PATH
//!   (`.NAME.PID.tmp`). When the last record is in, it is flushed, synced and renamed over PATH.
//!   On an error or a stop signal (Ctrl-C, SIGTERM), the temporary file is removed and PATH is
//!   left as it was: absent, or byte for byte what it held.
//! - On stdout, records stream as they arrive.
//! - Whatever stops an export early, the command says how many records were written before it
//!   stopped and what became of them, and exits with the code of the cause (130 for SIGINT, 143
//!   for SIGTERM). A closed stdout (`svc records export | head`) still stops quietly.
//! - Progress goes to stderr (see [`crate::progress`]): a line with the total, rate and ETA
//!   redrawn while stderr is a terminal, one summary line otherwise; the line is cleared before
//!   any last message.
//!
//! Memory stays bounded: records are formatted into a buffer of about [`CHUNK`] bytes that is
//! written out whenever it fills.
//!
//! Records are not decoded into maps: the SDK hands each on as its JSON text, a slice of the
//! page it came in ([`Records::stream_text`]), which goes out as it stands wherever it is already compact JSON, and CSV
//! cells are cut from it (see [`crate::canon`]). The bytes written are those that decoding each
//! record and formatting it again would give.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use futures_util::{FutureExt, TryStreamExt};
use svc_api::model::records::ListQuery;
use svc_api::{RecordStream, RecordText, Records};

use crate::args::ExportFormat;
use crate::canon::Formatter;
use crate::exit::Failure;
use crate::output;
use crate::progress;
use crate::signals::{self, Signal};

/// Bytes of formatted records held before they are written out.
const CHUNK: usize = 64 * 1024;

const RERUN_HINT: &str = "run the same command again to export every record";

/// Streams every record matching `query` to `out` (stdout when `None`).
pub async fn run(
    records: Records<'_>,
    query: ListQuery,
    format: ExportFormat,
    out: Option<&Path>,
) -> Result<(), Failure> {
    // Watch for the signals before anything exists that would need cleaning up.
    let mut stop = signals::interrupted();
    let mut stream = records.stream_text(query)?;
    let mut sink = Sink::open(out)?;
    let mut progress = progress::Export::new(
        out.map(|p| output::for_terminal(&p.display().to_string()).into_owned()),
    );
    let mut copy = Copy::new(format);

    let result = tokio::select! {
        biased;
        signal = &mut stop => Err(Failure::Interrupted(signal)),
        result = copy.all(&mut stream, &mut sink, &mut progress) => result,
    };
    // Stop fetching pages before anything else.
    drop(stream);
    let result = match result {
        Ok(()) => sink.commit(),
        Err(Failure::BrokenPipe) if sink.is_stdout() => {
            // Ctrl-C on `svc records export | jq` stops jq too, and the write may fail before
            // the signal is seen: let the signal tell.
            tokio::task::yield_now().await;
            match (&mut stop).now_or_never() {
                Some(signal) => Err(Failure::Interrupted(signal)),
                None => {
                    progress.abandon();
                    return Err(Failure::BrokenPipe);
                }
            }
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => {
            progress.done(copy.written);
            Ok(())
        }
        Err(cause) => {
            progress.abandon();
            Err(sink.abandon(&mut copy, cause))
        }
    }
}

/// Formats records into a buffer and writes it out a chunk at a time.
struct Copy {
    format: ExportFormat,
    formatter: Formatter,
    buf: Vec<u8>,
    /// Records formatted so far.
    written: u64,
    /// Records whose bytes have all been written to the sink.
    delivered: u64,
}

impl Copy {
    fn new(format: ExportFormat) -> Self {
        Self {
            format,
            formatter: Formatter::default(),
            buf: Vec::with_capacity(CHUNK + CHUNK / 4),
            written: 0,
            delivered: 0,
        }
    }

    async fn all(
        &mut self,
        stream: &mut RecordStream<RecordText>,
        sink: &mut Sink,
        progress: &mut progress::Export,
    ) -> Result<(), Failure> {
        while let Some(record) = stream.try_next().await? {
            self.push(record.as_bytes())?;
            progress.tick(self.written, stream.total());
            if self.buf.len() >= CHUNK {
                self.drain(sink)?;
            }
        }
        self.drain(sink)
    }

    /// Formats one record, given as its JSON text.
    fn push(&mut self, record: &[u8]) -> Result<(), Failure> {
        match self.format {
            ExportFormat::Ndjson => self.formatter.ndjson(record, &mut self.buf)?,
            ExportFormat::Csv => self.formatter.csv(record, &mut self.buf)?,
        }
        self.written += 1;
        Ok(())
    }

    /// Writes out what is buffered.
    fn drain(&mut self, sink: &mut Sink) -> Result<(), Failure> {
        if !self.buf.is_empty() {
            sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.delivered = self.written;
        Ok(())
    }
}

/// Where the records go.
enum Sink {
    Stdout,
    /// A temporary file, renamed over PATH at the end.
    Part(PartFile),
    /// PATH exists and is not a regular file (a FIFO, `/dev/stdout`): written directly, as it
    /// cannot be replaced.
    Direct {
        file: File,
        path: PathBuf,
    },
}

impl Sink {
    fn open(out: Option<&Path>) -> Result<Self, Failure> {
        let Some(path) = out else {
            return Ok(Sink::Stdout);
        };
        let meta = match fs::metadata(path) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(Failure::Usage(format!(
                    "cannot use --out {}: {e}",
                    path.display()
                )));
            }
        };
        match meta {
            None => PartFile::create(path, path.to_owned(), None).map(Sink::Part),
            Some(meta) if meta.is_dir() => Err(Failure::usage_hint(
                format!("--out {} is a directory", path.display()),
                "give the path of a file, such as --out orders.ndjson",
            )),
            Some(meta) if meta.is_file() => {
                // Refuse what writing PATH directly would refuse (a read-only file), without
                // changing it: no truncation.
                OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))?;
                // Through a symbolic link, replace the file it points to and keep the link.
                let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
                let target = if is_link {
                    fs::canonicalize(path).map_err(|e| {
                        Failure::Usage(format!("cannot use --out {}: {e}", path.display()))
                    })?
                } else {
                    path.to_owned()
                };
                PartFile::create(path, target, Some(meta.permissions())).map(Sink::Part)
            }
            Some(_) => {
                let file = File::create(path).map_err(|e| {
                    Failure::Usage(format!("cannot create {}: {e}", path.display()))
                })?;
                Ok(Sink::Direct {
                    file,
                    path: path.to_owned(),
                })
            }
        }
    }

    fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout)
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        match self {
            Sink::Stdout => {
                // Stdout may be the terminal that shows the progress line: records start on a
                // clean line, the next tick draws the progress again below them.
                if std::io::stdout().is_terminal() {
                    progress::clear();
                }
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)
                    .and_then(|()| out.flush())
                    .map_err(output::io)
            }
            Sink::Part(part) => part.write_all(bytes),
            Sink::Direct { file, path } => file
                .write_all(bytes)
                .map_err(|e| Failure::Other(format!("cannot write {}: {e}", path.display()))),
        }
    }

    /// Every record is written: makes the export visible.
    fn commit(&mut self) -> Result<(), Failure> {
        match self {
            Sink::Stdout | Sink::Direct { .. } => Ok(()),
            Sink::Part(part) => part.persist(),
        }
    }

    /// The export stopped early because of `cause`: cleans up and says what it had done.
    fn abandon(self, copy: &mut Copy, cause: Failure) -> Failure {
        let interrupted = matches!(cause, Failure::Interrupted(_));
        let (count, note) = match self {
            Sink::Part(mut part) => (copy.written, part.discard(copy.written)),
            mut kept @ (Sink::Stdout | Sink::Direct { .. }) => {
                // Hand over the whole records still buffered (none is cut in half).
                if !matches!(cause, Failure::BrokenPipe) {
                    let _ = copy.drain(&mut kept);
                }
                let note = match &kept {
                    Sink::Direct { path, .. } => format!(
                        "{} is not a regular file, so the records went straight to it: it got an incomplete export",
                        path.display()
                    ),
                    _ => "the records on stdout are an incomplete export".to_owned(),
                };
                (copy.delivered, note)
            }
        };
        let records = plural(count);
        let message = match &cause {
            Failure::Interrupted(signal) => stopped_by(*signal, &records),
            other => format!("export failed: {records} written before this error: {other}"),
        };
        let stopped = Failure::Stopped {
            cause: Box::new(cause),
            message,
            note,
        };
        if interrupted {
            stopped.with_hint(RERUN_HINT)
        } else {
            stopped
        }
    }
}

fn stopped_by(signal: Signal, records: &str) -> String {
    match signal {
        Signal::Interrupt => {
            format!("export interrupted by {signal}: {records} written before it stopped")
        }
        Signal::Terminate => {
            format!("export stopped by {signal}: {records} written before it stopped")
        }
    }
}

fn plural(n: u64) -> String {
    if n == 1 {
        "1 record".to_owned()
    } else {
        format!("{n} records")
    }
}

/// The temporary file of an export to `--out PATH`. Dropped before [`persist`](Self::persist),
/// it is removed.
struct PartFile {
    file: Option<File>,
    temp: PathBuf,
    /// What the temporary file replaces: PATH, or the file a symbolic link at PATH points to.
    target: PathBuf,
    /// PATH as given, for messages.
    shown: PathBuf,
    existed: bool,
    /// Nothing is left to clean up.
    settled: bool,
}

impl PartFile {
    /// Creates the temporary file beside `target`. `permissions` are those of the file it will
    /// replace, if any: the export does not widen them.
    fn create(
        shown: &Path,
        target: PathBuf,
        permissions: Option<fs::Permissions>,
    ) -> Result<Self, Failure> {
        let name = target.file_name().ok_or_else(|| {
            Failure::usage_hint(
                format!("--out {} does not name a file", shown.display()),
                "give the path of a file, such as --out orders.ndjson",
            )
        })?;
        let pid = std::process::id();
        let mut attempt = 0u32;
        let (file, temp) = loop {
            let mut hidden = OsString::from(".");
            hidden.push(name);
            hidden.push(if attempt == 0 {
                format!(".{pid}.tmp")
            } else {
                format!(".{pid}.{attempt}.tmp")
            });
            let temp = target.with_file_name(hidden);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => break (file, temp),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => {
                    return Err(Failure::usage_hint(
                        format!(
                            "cannot create {} (the export is written there, then renamed to {}): {e}",
                            temp.display(),
                            shown.display()
                        ),
                        "check that the directory exists and that you may write in it",
                    ));
                }
            }
        };
        let mut part = PartFile {
            file: Some(file),
            temp,
            target,
            shown: shown.to_owned(),
            existed: permissions.is_some(),
            settled: false,
        };
        // On Unix the mode matters (another user may read the file). Elsewhere it is a read-only
        // flag, which the file it replaces cannot have had (it was opened for writing).
        #[cfg(unix)]
        if let (Some(permissions), Some(file)) = (permissions, &part.file)
            && let Err(e) = file.set_permissions(permissions)
        {
            let message = format!(
                "cannot give {} the permissions of {}: {e}",
                part.temp.display(),
                part.shown.display()
            );
            let _ = part.discard(0);
            return Err(Failure::Other(message));
        }
        Ok(part)
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let written = match &mut self.file {
            Some(file) => file.write_all(bytes),
            None => Err(std::io::Error::other("the file is closed")),
        };
        written.map_err(|e| Failure::Other(format!("cannot write {}: {e}", self.temp.display())))
    }

    /// Syncs the temporary file and renames it over the target.
    fn persist(&mut self) -> Result<(), Failure> {
        let Some(file) = self.file.take() else {
            return Err(Failure::Other(format!(
                "{} was closed before the export ended",
                self.temp.display()
            )));
        };
        file.sync_all()
            .map_err(|e| Failure::Other(format!("cannot write {}: {e}", self.temp.display())))?;
        drop(file);
        fs::rename(&self.temp, &self.target).map_err(|e| {
            Failure::Other(format!(
                "cannot rename {} to {}: {e}",
                self.temp.display(),
                self.target.display()
            ))
        })?;
        self.settled = true;
        // Make the rename itself durable (best effort: not every platform can sync a directory).
        #[cfg(unix)]
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    /// Removes the temporary file, which holds `written` records; says what became of PATH
    /// and of the partial export.
    fn discard(&mut self, written: u64) -> String {
        self.file = None;
        let removed = match fs::remove_file(&self.temp) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        self.settled = true;
        let path = format!(
            "{} was {}",
            self.shown.display(),
            if self.existed {
                "not changed"
            } else {
                "not created"
            }
        );
        let what = if written == 0 {
            "the temporary file"
        } else {
            "the partial export in"
        };
        let temp = self.temp.display();
        match removed {
            Ok(()) => format!("{path}; {what} {temp} was removed"),
            Err(e) => format!("{path}; {what} {temp} could not be removed ({e}): delete it"),
        }
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.settled {
            self.file = None;
            let _ = fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("svc-cli-export-unit-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_part_file_replaces_its_target_only_when_persisted() {
        let dir = scratch("persist");
        let path = dir.join("out.ndjson");
        fs::write(&path, "old\n").unwrap();

        let mut sink = Sink::open(Some(&path)).unwrap();
        sink.write_all(b"new\n").unwrap();
        let temp = match &sink {
            Sink::Part(part) => part.temp.clone(),
            _ => panic!("a regular file gets a temporary file"),
        };
        assert_eq!(
            temp.file_name().unwrap().to_string_lossy(),
            format!(".out.ndjson.{}.tmp", std::process::id())
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "old\n");
        sink.commit().unwrap();
        drop(sink);
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(entries(&dir), ["out.ndjson"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_abandoned_export_leaves_the_target_alone() {
        let dir = scratch("abandon");
        let old = dir.join("old.csv");
        fs::write(&old, "keep me").unwrap();
        let mut sink = Sink::open(Some(&old)).unwrap();
        sink.write_all(b"partial").unwrap();
        let mut copy = Copy::new(ExportFormat::Csv);
        copy.written = 3;
        let f = sink.abandon(&mut copy, Failure::Interrupted(Signal::Interrupt));
        assert_eq!(f.code(), crate::exit::INTERRUPTED);
        assert!(f.to_string().contains("3 records written before"), "{f}");
        let note = f.note().unwrap();
        assert!(note.contains("old.csv was not changed"), "{note}");
        assert!(note.contains("was removed"), "{note}");
        assert_eq!(fs::read_to_string(&old).unwrap(), "keep me");

        let new = dir.join("new.csv");
        let sink = Sink::open(Some(&new)).unwrap();
        let mut copy = Copy::new(ExportFormat::Csv);
        copy.written = 1;
        let f = sink.abandon(&mut copy, Failure::Other("disk full".into()));
        assert_eq!(f.code(), crate::exit::OTHER);
        assert!(
            f.to_string()
                .contains("1 record written before this error: disk full"),
            "{f}"
        );
        assert!(f.note().unwrap().contains("new.csv was not created"));
        assert_eq!(entries(&dir), ["old.csv"]);

        // Dropped without a commit (a panic on the way out): still removed.
        drop(Sink::open(Some(&new)).unwrap());
        assert_eq!(entries(&dir), ["old.csv"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_are_refused() {
        let dir = scratch("dir");
        let f = Sink::open(Some(&dir)).err().unwrap();
        assert_eq!(f.code(), crate::exit::USAGE);
        assert!(f.hint().is_some());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_links_are_followed() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = scratch("mode");
        let real = dir.join("real.ndjson");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("link.ndjson");
        symlink(&real, &link).unwrap();

        let mut sink = Sink::open(Some(&link)).unwrap();
        sink.write_all(b"new").unwrap();
        sink.commit().unwrap();
        drop(sink);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(entries(&dir), ["link.ndjson", "real.ndjson"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_and_ndjson_are_buffered_whole_records() {
        let mut copy = Copy::new(ExportFormat::Csv);
        copy.push(br#"{"id": 1, "note": "a,b"}"#).unwrap();
        copy.push(br#"{"id": 2}"#).unwrap();
        assert_eq!(copy.buf, b"id,note\n1,\"a,b\"\n2,\n");
        let mut copy = Copy::new(ExportFormat::Ndjson);
        copy.push(br#"{"id": 1}"#).unwrap();
        assert_eq!(copy.buf, b"{\"id\":1}\n");
        assert_eq!((copy.written, copy.delivered), (1, 0));
    }
}
