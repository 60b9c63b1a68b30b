//! 4. Rows to a sink, at the limit (issue 85): the emulator's 10000-record `_no_pagination`
//!    list beside a bare rusqlite loop, in the same process, that reads the same rows from the
//!    same SQLite file and writes them as the same JSON bytes.
//!
//! The emulator serves the table from a file (`target/bench/data/sink-v1-10000.sqlite`, made
//! once with section 4's seed and section 5's index on `status`, and reused), so that the bare
//! loop can open the very database the emulator answers from; the in-memory table of section
//! 4's other rows is the emulator's own and no other connection can reach it. Before anything is timed, the bare loop's bytes
//! must equal the emulator's answer, byte for byte.
//!
//! Two rows: records per second of each, timed in turns (reported), and instructions per
//! record from callgrind (the judged figure: wall clock moves with the machine, instruction
//! counts do not). The emulator's count is its threads' (every thread but the client's, as
//! section 6 counts a server), the bare loop's the main thread's, where it runs.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http::Uri;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use tokio::runtime::Runtime;

use crate::emulator::LoadClient;
use crate::harness::{
    BenchEmulator, Done, Settings, client_runtime, load, load_count, profile_window_end,
    profile_window_start,
};
use crate::instructions::{Threads, per_request};
use crate::report::{Row, Target, median, per_second, seconds};

const RESOURCE: &str = "sink";
const ROWS: usize = 10_000;
/// Lists counted under callgrind: 100000 records. A list is several milliseconds of the
/// emulator's time natively and about a second under callgrind, so the count is small;
/// instruction counts need no more to settle (5 lists and 10 give counts per record within 0.2%
/// of each other).
const COUNTED_LISTS: u64 = 10;
/// Lists made before callgrind's window opens (statements prepared, caches and buffers
/// grown): a few, where `harness::profile_loop` makes at least 20 requests, which is 200000
/// records here.
const WARM_UP_LISTS: u64 = 3;
/// The emulator's SQLite readers map the file (`READER_MMAP_BYTES` in svc-emulator-sqlite):
/// the bare loop reads it the same way.
const MMAP_BYTES: i64 = 1 << 30;
/// The judged bar: the emulator at least half the bare loop's records per instruction.
const BAR: f64 = 0.5;

/// The file both read: its own, so that no other section's writes or indexes touch it.
fn file() -> PathBuf {
    PathBuf::from("target/bench/data").join(format!("sink-v1-{ROWS}.sqlite"))
}

/// How the engine writes each column of the table (the 12 fields of `harness::Item`), which
/// the bare loop knows beforehand, as a program written for its own table does.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A JSON number.
    Integer,
    /// `true` or `false` (SQLite stores a `BOOLEAN` as 0 or 1).
    Bool,
    /// A JSON string.
    Text,
    /// A `REAL`, as a string in Python's `str(float)` form (`"83.89"`, `"12.0"`).
    RealText,
    /// A `DATETIME` stored `YYYY-MM-DD HH:MM:SS`, written as `isoformat()` writes it: a `T`
    /// for the space.
    DateTime,
}

/// The columns, in the table's order, which is the order of the emulator's records.
const COLUMNS: [(&str, Kind); 12] = [
    ("id", Kind::Integer),
    ("name", Kind::Text),
    ("email", Kind::Text),
    ("city", Kind::Text),
    ("vip", Kind::Bool),
    ("score", Kind::Integer),
    ("total", Kind::RealText),
    ("quantity", Kind::Integer),
    ("status", Kind::Text),
    // `YYYY-MM-DD`, written as stored.
    ("ordered_on", Kind::Text),
    ("created_at", Kind::DateTime),
    ("note", Kind::Text),
];

/// The bare baseline: one read-only connection to the file, one statement, and a writer that
/// puts each row's values straight into the JSON bytes.
struct BareLoop {
    conn: Connection,
    sql: String,
    /// Each column's `"name":`, after a `{` for the first and a `,` for the others.
    keys: Vec<Vec<u8>>,
}

impl BareLoop {
    fn open(path: &Path) -> Result<Self, String> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let _: i64 = conn
            .query_row(&format!("PRAGMA mmap_size = {MMAP_BYTES}"), [], |row| {
                row.get(0)
            })
            .map_err(|e| format!("cannot map {}: {e}", path.display()))?;
        let names: Vec<&str> = COLUMNS.iter().map(|(name, _)| *name).collect();
        // The engine lists a model newest first, by its primary key descending.
        let sql = format!("SELECT {} FROM items ORDER BY id DESC", names.join(", "));
        let mut keys = Vec::with_capacity(COLUMNS.len());
        for (i, name) in names.iter().enumerate() {
            let mut key = vec![if i == 0 { b'{' } else { b',' }];
            serde_json::to_writer(&mut key, name).map_err(|e| e.to_string())?;
            key.push(b':');
            keys.push(key);
        }
        Ok(Self { conn, sql, keys })
    }

    /// Every row, as the JSON array the emulator answers a `_no_pagination` list with.
    fn list(&self) -> Result<Vec<u8>, String> {
        let mut stmt = self
            .conn
            .prepare_cached(&self.sql)
            .map_err(|e| e.to_string())?;
        let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        out.push(b'[');
        let mut first = true;
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            if !first {
                out.push(b',');
            }
            first = false;
            for (i, (key, (name, kind))) in self.keys.iter().zip(COLUMNS).enumerate() {
                out.extend_from_slice(key);
                let value = row.get_ref(i).map_err(|e| e.to_string())?;
                write_value(&mut out, kind, value).map_err(|e| format!("{name}: {e}"))?;
            }
            out.push(b'}');
        }
        out.push(b']');
        Ok(out)
    }
}

/// One value, as the engine writes a value of its column's kind; an error for a value the
/// table should not hold.
#[inline]
fn write_value(out: &mut Vec<u8>, kind: Kind, value: ValueRef<'_>) -> Result<(), String> {
    let written = match (kind, value) {
        (_, ValueRef::Null) => {
            out.extend_from_slice(b"null");
            Ok(())
        }
        (Kind::Integer, ValueRef::Integer(i)) => serde_json::to_writer(&mut *out, &i),
        (Kind::Bool, ValueRef::Integer(i)) => {
            out.extend_from_slice(if i != 0 { b"true" } else { b"false" });
            Ok(())
        }
        // Printable ASCII with no `"` or `\` is its own JSON text: copied between quotes, where
        // the rest is checked as UTF-8 and escaped by serde_json.
        (Kind::Text, ValueRef::Text(t)) if t.iter().all(|&b| plain_json_byte(b)) => {
            out.push(b'"');
            out.extend_from_slice(t);
            out.push(b'"');
            Ok(())
        }
        (Kind::Text, ValueRef::Text(t)) => serde_json::to_writer(&mut *out, text(t)?),
        // serde_json's shortest round-trip form, with `.0` on whole numbers, is Python's
        // `str(float)` from 1e-4 up to 1e16, which holds the table's totals (1.00 to 1000.99).
        (Kind::RealText, ValueRef::Real(f)) => {
            out.push(b'"');
            let written = serde_json::to_writer(&mut *out, &f);
            out.push(b'"');
            written
        }
        (Kind::DateTime, ValueRef::Text(t)) => {
            let (date, time) = match text(t)?.split_at_checked(10) {
                Some((date, time)) if time.starts_with(' ') => (date, &time[1..]),
                _ => return Err(format!("not a stored date-time: {:?}", text(t)?)),
            };
            out.push(b'"');
            out.extend_from_slice(date.as_bytes());
            out.push(b'T');
            out.extend_from_slice(time.as_bytes());
            out.push(b'"');
            Ok(())
        }
        (_, other) => return Err(format!("unexpected value {other:?}")),
    };
    written.map_err(|e| e.to_string())
}

/// A byte that stands for itself inside a JSON string, and is a whole UTF-8 character.
#[inline]
fn plain_json_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'
}

/// Text as SQLite stores it, which must be UTF-8 to be written as JSON text.
#[inline]
fn text(t: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(t).map_err(|e| e.to_string())
}

/// The first byte where two answers differ, with a little of each around it.
fn first_difference(served: &[u8], written: &[u8]) -> Option<String> {
    let at = served
        .iter()
        .zip(written)
        .position(|(a, b)| a != b)
        .or_else(|| (served.len() != written.len()).then(|| served.len().min(written.len())))?;
    let around = |bytes: &[u8]| {
        let from = at.saturating_sub(60);
        String::from_utf8_lossy(&bytes[from..(at + 60).min(bytes.len())]).into_owned()
    };
    Some(format!(
        "at byte {at} of {} (emulator) and {} (bare loop):\n  emulator:  {}\n  bare loop: {}",
        served.len(),
        written.len(),
        around(served),
        around(written)
    ))
}

/// `{items_url}?_no_pagination=1`.
fn list_uri(emulator: &BenchEmulator) -> Uri {
    format!("{}?_no_pagination=1", emulator.items_url(RESOURCE))
        .parse()
        .expect("a valid URI")
}

/// The emulator serving the file, made with section 4's seed the first time.
fn start_emulator() -> BenchEmulator {
    let path = file();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create target/bench/data");
    }
    BenchEmulator::start_files(&[(RESOURCE, ROWS, &path)])
}

/// Lists per second of the emulator, 1 in flight, for `load_time`.
fn emulator_lists(rt: &Runtime, client: &LoadClient, uri: &Uri, load_time: Duration) -> f64 {
    let (client, uri) = (client.clone(), uri.clone());
    load(rt, 1, load_time, move || {
        let (client, uri) = (client.clone(), uri.clone());
        async move {
            black_box(client.get(uri).await);
        }
    })
    .per_second()
}

/// Lists per second of the bare loop, for `load_time` (at least one list).
fn bare_lists(bare: &BareLoop, load_time: Duration) -> f64 {
    let start = Instant::now();
    let mut lists = 0u64;
    while lists == 0 || start.elapsed() < load_time {
        black_box(bare.list().expect("the bare loop reads the rows"));
        lists += 1;
    }
    lists as f64 / start.elapsed().as_secs_f64()
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "4. rows to a sink: the {ROWS}-record _no_pagination list from a SQLite file beside a bare rusqlite loop"
    );
    let emulator = start_emulator();
    let client = LoadClient::new(&emulator.token(RESOURCE));
    let rt = client_runtime();
    let uri = list_uri(&emulator);
    let served = rt.block_on(client.get(uri.clone()));
    let bare = BareLoop::open(&file()).expect("the bare loop opens the emulator's file");
    let written = bare.list().expect("the bare loop reads the rows");
    if let Some(difference) = first_difference(&served, &written) {
        panic!("the bare loop must write the emulator's bytes; they differ {difference}");
    }
    eprintln!(
        "   the bare loop writes the emulator's {} bytes exactly",
        served.len()
    );

    emulator_lists(&rt, &client, &uri, settings.load_time);
    bare_lists(&bare, settings.load_time);
    let (mut emulator_rates, mut bare_rates, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        let e = emulator_lists(&rt, &client, &uri, settings.load_time);
        let b = bare_lists(&bare, settings.load_time);
        emulator_rates.push(e);
        bare_rates.push(b);
        ratios.push(e / b);
    }
    let (emulator_rate, bare_rate) = (median(&emulator_rates), median(&bare_rates));
    let records = ROWS as f64;
    eprintln!(
        "   emulator {} ({} a list), bare loop {} ({} a list)",
        per_second(emulator_rate * records, "record"),
        seconds(1.0 / emulator_rate),
        per_second(bare_rate * records, "record"),
        seconds(1.0 / bare_rate),
    );
    // The children run the file alone.
    drop((bare, client, emulator));

    let what = format!(
        "4. emulator, {ROWS}-record _no_pagination list from a SQLite file vs a bare rusqlite loop writing the same JSON bytes"
    );
    vec![
        Row {
            benchmark: format!("{what}, records per second"),
            figure: format!(
                "emulator {} ({} a list)",
                per_second(emulator_rate * records, "record"),
                seconds(1.0 / emulator_rate)
            ),
            baseline: format!(
                "bare loop {} ({} a list)",
                per_second(bare_rate * records, "record"),
                seconds(1.0 / bare_rate)
            ),
            ratio: median(&ratios),
            target: Target::None,
        },
        instructions_row(&what),
    ]
}

/// Instructions per record of each under callgrind; the ratio is the bare loop's over the
/// emulator's, a speed read like the records per second (at least [`BAR`]).
fn instructions_row(what: &str) -> Row {
    let benchmark = format!(
        "{what}, instructions per record (callgrind; ratio: bare's / emulator's, as a speed)"
    );
    let valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output();
    let measured = if valgrind.is_ok_and(|o| o.status.success()) {
        eprintln!("   instructions per record (callgrind, {COUNTED_LISTS} lists each)");
        per_request("emulator-sink", COUNTED_LISTS, Threads::Server).and_then(|emulator| {
            per_request("bare-sink", COUNTED_LISTS, Threads::Client)
                .map(|bare| (emulator / ROWS as f64, bare / ROWS as f64))
        })
    } else {
        Err("valgrind is not installed".to_owned())
    };
    match measured {
        Ok((emulator, bare)) => {
            eprintln!("   emulator {emulator:.0} per record, bare loop {bare:.0}");
            Row {
                benchmark,
                figure: format!("emulator {emulator:.0}"),
                baseline: format!("bare loop {bare:.0}"),
                ratio: bare / emulator,
                target: Target::AtLeast(BAR),
            }
        }
        Err(e) => {
            eprintln!("   instructions: not measured: {e}");
            Row {
                benchmark,
                figure: format!("not measured: {e}"),
                baseline: "-".to_owned(),
                ratio: f64::NAN,
                target: Target::None,
            }
        }
    }
}

/// The file must exist for a profile: `--only emulator` makes it.
fn existing_file() -> Result<PathBuf, String> {
    let path = file();
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: run `svc-bench --only emulator` once to make it",
            path.display()
        ))
    }
}

/// Prints what a profile did, in the form the instruction counter reads: `N requests`.
fn report_profile(what: &str, done: Done) {
    eprintln!(
        "{what}, 1 in flight: {} requests, {:.0} req/s",
        done.requests,
        done.per_second()
    );
}

/// Profile `emulator-sink`: the emulator's `_no_pagination` list of the file, one at a time;
/// with `--requests N`, N lists between callgrind's window marks after [`WARM_UP_LISTS`].
pub fn profile_emulator(settings: &Settings) -> Result<(), String> {
    let path = existing_file()?;
    let emulator = BenchEmulator::start_files(&[(RESOURCE, ROWS, &path)]);
    let client = LoadClient::new(&emulator.token(RESOURCE));
    let uri = list_uri(&emulator);
    let rt = client_runtime();
    let list = move || {
        let (client, uri) = (client.clone(), uri.clone());
        async move {
            black_box(client.get(uri).await);
        }
    };
    let done = match settings.profile_requests {
        Some(lists) => {
            load_count(&rt, 1, WARM_UP_LISTS, list.clone());
            profile_window_start();
            let done = load_count(&rt, 1, lists, list);
            profile_window_end();
            done
        }
        None => load(&rt, 1, settings.load_time, list),
    };
    report_profile(&format!("emulator {ROWS}-record list"), done);
    Ok(())
}

/// Profile `bare-sink`: the bare loop on the main thread; with `--requests N`, N lists
/// between callgrind's window marks after [`WARM_UP_LISTS`].
pub fn profile_bare(settings: &Settings) -> Result<(), String> {
    let bare = BareLoop::open(&existing_file()?)?;
    let start = Instant::now();
    let lists = match settings.profile_requests {
        Some(lists) => {
            for _ in 0..WARM_UP_LISTS {
                black_box(bare.list()?);
            }
            profile_window_start();
            for _ in 0..lists {
                black_box(bare.list()?);
            }
            profile_window_end();
            lists
        }
        None => {
            let mut lists = 0;
            while start.elapsed() < settings.load_time {
                black_box(bare.list()?);
                lists += 1;
            }
            lists
        }
    };
    report_profile(
        &format!("bare rusqlite loop {ROWS}-record list"),
        Done {
            requests: lists,
            elapsed: start.elapsed(),
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(kind: Kind, value: ValueRef<'_>) -> String {
        let mut out = Vec::new();
        write_value(&mut out, kind, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_are_written_as_the_engine_writes_them() {
        assert_eq!(written(Kind::Integer, ValueRef::Integer(-42)), "-42");
        assert_eq!(written(Kind::Bool, ValueRef::Integer(1)), "true");
        assert_eq!(written(Kind::Bool, ValueRef::Integer(0)), "false");
        assert_eq!(written(Kind::Text, ValueRef::Null), "null");
        assert_eq!(
            written(Kind::Text, ValueRef::Text("Kraków \"x\"\n".as_bytes())),
            r#""Kraków \"x\"\n""#
        );
        assert_eq!(written(Kind::RealText, ValueRef::Real(83.89)), r#""83.89""#);
        assert_eq!(written(Kind::RealText, ValueRef::Real(12.0)), r#""12.0""#);
        assert_eq!(
            written(Kind::DateTime, ValueRef::Text(b"2024-01-01 00:10:31")),
            r#""2024-01-01T00:10:31""#
        );
        let mut out = Vec::new();
        assert!(
            write_value(
                &mut out,
                Kind::DateTime,
                ValueRef::Text(b"2024-01-01T00:10")
            )
            .is_err()
        );
        assert!(write_value(&mut out, Kind::Integer, ValueRef::Real(1.5)).is_err());
    }

    #[test]
    fn the_first_difference_is_found() {
        assert_eq!(first_difference(b"[1,2]", b"[1,2]"), None);
        assert!(
            first_difference(b"[1,2]", b"[1,3]")
                .unwrap()
                .starts_with("at byte 3 ")
        );
        assert!(
            first_difference(b"[1,2", b"[1,2,3]")
                .unwrap()
                .starts_with("at byte 4 ")
        );
    }
}
