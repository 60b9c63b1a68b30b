//! 10. The emulator over PostgreSQL beside pgbench running the same statements, 16 connections.
//!
//! A throwaway cluster (crate `pg-cluster`) holds two copies of section 7's table with 10k rows:
//! `pgb`, which both contenders load, and `pgb_capture`, whose sessions log every statement
//! (`log_statement = 'all'`). The emulator serves both. For each request (page 1 of 25 with
//! its count; one record by its key) one request to the capture copy, after a warm-up, is read
//! back from the server's log: the statements the emulator sent and their parameters. They
//! become a pgbench script (integer parameters as `\set` variables, which `-M prepared` sends as
//! parameters of a prepared statement; any other value as a literal), run by
//! `pgbench -n -M prepared -c 16 -j 1`. The emulator's load is a child process with 16 requests
//! in flight on one thread (loadgen.rs), as pgbench's is one thread with 16 connections. The two
//! alternate, a round each, and the figure is the median of the rounds' ratios.
//!
//! Beside each ratio, the CPU time per request of every process involved (from /proc): the
//! emulator (this process: its runtime and blocking pool), the load generator, PostgreSQL (the
//! postmaster and its children); pgbench and PostgreSQL. On a machine whose cores are all busy,
//! throughput is the cores divided by the CPU time a request takes everywhere, so these rows
//! account for the gap.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{BenchEmulator, Settings};
use crate::loadgen::{self, Cpu, LoadSpec};
use crate::report::{Row, Target, median, per_second};

const ROWS: usize = 10_000;
const IN_FLIGHT: usize = 16;
const LOADED: &str = "pgb";
const CAPTURE: &str = "pgb_capture";

/// The requests compared: (name, the path after the model, the row's words).
const REQUESTS: [(&str, &str, &str); 2] = [
    ("list", "", "list page 1 of 25 with its count"),
    ("retrieve", "/5000", "retrieve one record by its key"),
];

fn what(words: &str) -> String {
    format!(
        "10. PostgreSQL, {words}, {IN_FLIGHT} connections: emulator vs pgbench -M prepared on the same statements"
    )
}

fn cpu_what(words: &str) -> String {
    format!(
        "10. PostgreSQL, {words}, {IN_FLIGHT} connections: CPU per request, emulator + load + PostgreSQL vs pgbench + PostgreSQL"
    )
}

fn not_measured(why: &str) -> Vec<Row> {
    REQUESTS
        .iter()
        .flat_map(|(_, _, words)| [what(words), cpu_what(words)])
        .map(|benchmark| Row {
            benchmark,
            figure: format!("not measured: {why}"),
            baseline: "-".to_owned(),
            ratio: f64::NAN,
            target: Target::None,
        })
        .collect()
}

/// One statement the emulator sent, with its parameters (`None` for NULL).
#[derive(Debug, Clone, PartialEq)]
struct Logged {
    sql: String,
    params: Vec<Option<String>>,
}

/// The statements of a server log's text (PostgreSQL's default `log_line_prefix`, `%m [%p] `):
/// `LOG:  execute NAME: SQL` or `LOG:  statement: SQL` records, each with the parameters of its
/// `DETAIL:  parameters: $1 = '...', ...` line. A record runs until the next line that starts
/// with a prefix.
fn statements(log: &str) -> Vec<Logged> {
    // Records: (pid, kind and text), the text's continuation lines joined back.
    let mut records: Vec<(String, String)> = Vec::new();
    for line in log.lines() {
        let prefixed = line.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && line.contains(" [")
            && line.contains("]");
        if prefixed {
            let Some((head, rest)) = line.split_once("] ") else {
                continue;
            };
            let pid = head.rsplit('[').next().unwrap_or("").to_owned();
            records.push((pid, rest.to_owned()));
        } else if let Some(last) = records.last_mut() {
            last.1.push('\n');
            last.1.push_str(line);
        }
    }
    let mut out: Vec<(String, Logged)> = Vec::new();
    for (pid, text) in records {
        if let Some(rest) = text.strip_prefix("LOG:  execute ") {
            if let Some((_, sql)) = rest.split_once(": ") {
                out.push((
                    pid,
                    Logged {
                        sql: sql.to_owned(),
                        params: Vec::new(),
                    },
                ));
            }
        } else if let Some(sql) = text.strip_prefix("LOG:  statement: ") {
            out.push((
                pid,
                Logged {
                    sql: sql.to_owned(),
                    params: Vec::new(),
                },
            ));
        } else if let Some(list) = text.strip_prefix("DETAIL:  parameters: ")
            && let Some((_, last)) = out.iter_mut().rev().find(|(p, _)| *p == pid)
        {
            last.params = parameters(list);
        }
    }
    out.into_iter().map(|(_, l)| l).collect()
}

/// `$1 = '25', $2 = NULL, $3 = 'it''s'`: the values in order.
fn parameters(list: &str) -> Vec<Option<String>> {
    let mut values = Vec::new();
    let mut rest = list;
    while let Some((_, after)) = rest.split_once(" = ") {
        if let Some(after) = after.strip_prefix("NULL") {
            values.push(None);
            rest = after;
            continue;
        }
        let Some(quoted) = after.strip_prefix('\'') else {
            break;
        };
        let mut value = String::new();
        let mut chars = quoted.char_indices().peekable();
        let mut end = quoted.len();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|(_, c)| *c) == Some('\'') {
                    chars.next();
                    value.push('\'');
                } else {
                    end = i + 1;
                    break;
                }
            } else {
                value.push(c);
            }
        }
        values.push(Some(value));
        rest = &quoted[end..];
    }
    values
}

/// A pgbench script running `statements`: integer parameters as `\set` variables (sent as
/// parameters of the prepared statement), others as quoted literals.
fn script(statements: &[Logged]) -> String {
    let mut out = String::new();
    for (s, statement) in statements.iter().enumerate() {
        let mut sql = statement.sql.trim().trim_end_matches(';').to_owned();
        // From the highest number down, so that `$1` does not eat the start of `$12`.
        for (i, value) in statement.params.iter().enumerate().rev() {
            let n = i + 1;
            let replacement = match value {
                Some(v) if !v.is_empty() && v.parse::<i64>().is_ok() => {
                    let _ = writeln!(out, "\\set s{s}p{n} {v}");
                    format!(":s{s}p{n}")
                }
                Some(v) => format!("'{}'", v.replace('\'', "''")),
                None => "NULL".to_owned(),
            };
            sql = sql.replace(&format!("${n}"), &replacement);
        }
        let _ = writeln!(out, "{sql};");
    }
    out
}

/// What the emulator sends PostgreSQL for one request to `url` (the capture copy), read back
/// from the log written while it ran.
fn capture(log: &Path, url: &str, token: &str) -> Result<Vec<Logged>, String> {
    let one = |time_ms: u64| LoadSpec {
        url: url.to_owned(),
        authorization: token.to_owned(),
        in_flight: 1,
        time: Duration::from_millis(time_ms),
        body: None,
    };
    // A warm-up: the pool's connections opened, statements prepared.
    loadgen::run_child(&one(100))?;
    let client = crate::emulator::LoadClient::new(token);
    let rt = crate::harness::client_runtime();
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let before = std::fs::metadata(log).map_err(|e| e.to_string())?.len();
    rt.block_on(client.get(uri));
    // The server writes its log through the watchdog's pipe: give it a moment.
    std::thread::sleep(Duration::from_millis(300));
    let text = std::fs::read(log).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&text[before as usize..]).into_owned();
    let found = statements(&text);
    if found.is_empty() {
        return Err("no statement in the server's log".to_owned());
    }
    Ok(found)
}

/// A pgbench run of `script_path`: transactions per second, and its own CPU.
fn pgbench(
    cluster: &pg_cluster::Cluster,
    script_path: &Path,
    seconds: u64,
) -> Result<(f64, Cpu), String> {
    let before = loadgen::children();
    let output = Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-c"])
        .arg(IN_FLIGHT.to_string())
        .args(["-j", "1", "-T"])
        .arg(seconds.to_string())
        .arg("-f")
        .arg(script_path)
        .args(["-h", "127.0.0.1", "-p"])
        .arg(cluster.port().to_string())
        .arg("-U")
        .arg(cluster.user())
        .arg(LOADED)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run pgbench: {e}"))?;
    let cpu = loadgen::children().since(before);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "pgbench failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let tps = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
        .ok_or_else(|| format!("no tps in pgbench's output: {stdout}"))?;
    Ok((tps, cpu))
}

/// `123 us (user 80, system 43)`.
fn per_request(cpu: Cpu, requests: f64) -> String {
    format!(
        "{:.0} us (user {:.0}, system {:.0})",
        cpu.total() / requests * 1e6,
        cpu.user / requests * 1e6,
        cpu.system / requests * 1e6
    )
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "10. emulator over PostgreSQL beside pgbench -M prepared, {IN_FLIGHT} connections, {ROWS} rows"
    );
    match measure(settings) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("   not measured: {e}");
            not_measured(&e)
        }
    }
}

fn measure(settings: &Settings) -> Result<Vec<Row>, String> {
    if Command::new("pgbench").arg("--version").output().is_err() {
        return Err("pgbench is not installed".to_owned());
    }
    let cluster = pg_cluster::Cluster::start().map_err(|e| e.to_string())?;
    for name in [LOADED, CAPTURE] {
        cluster.create_database(name).map_err(|e| e.to_string())?;
        cluster
            .psql(name, &crate::pg_scale::seed_sql(ROWS))
            .map_err(|e| e.to_string())?;
    }
    cluster
        .psql(
            "postgres",
            &format!("ALTER DATABASE {CAPTURE} SET log_statement = 'all';"),
        )
        .map_err(|e| e.to_string())?;
    let data_dir = cluster.dir().join("data");
    let log = cluster.dir().join("server.log");
    let (loaded_url, capture_url) = (cluster.url(LOADED), cluster.url(CAPTURE));
    let emulator =
        BenchEmulator::start_databases(&[(LOADED, &loaded_url), (CAPTURE, &capture_url)]);
    let work = std::env::temp_dir().join(format!("svc-bench-pgbench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    // pgbench's -T is whole seconds; the emulator's runs last as long.
    let seconds = settings.load_time.as_secs().max(1);
    let time = Duration::from_secs(seconds);
    let mut rows = Vec::new();
    for (name, tail, words) in REQUESTS {
        let capture_target = format!("{}{tail}", emulator.items_url(CAPTURE));
        let logged = capture(&log, &capture_target, &emulator.token(CAPTURE))?;
        let text = script(&logged);
        eprintln!("   {name}: the emulator sends\n{}", indent(&text));
        let script_path: PathBuf = work.join(format!("{name}.sql"));
        std::fs::write(&script_path, &text).map_err(|e| e.to_string())?;
        let spec = LoadSpec {
            url: format!("{}{tail}", emulator.items_url(LOADED)),
            authorization: emulator.token(LOADED),
            in_flight: IN_FLIGHT,
            time,
            body: None,
        };
        // Warm-up of both.
        loadgen::run_child(&spec)?;
        pgbench(&cluster, &script_path, 1)?;
        let (mut emu, mut bench, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let (mut emu_cpu, mut load_cpu, mut emu_pg) =
            (Cpu::default(), Cpu::default(), Cpu::default());
        let (mut bench_cpu, mut bench_pg) = (Cpu::default(), Cpu::default());
        let (mut emu_requests, mut bench_transactions) = (0.0, 0.0);
        for _ in 0..settings.runs {
            let own = loadgen::own();
            let pg = loadgen::postgres(&data_dir).unwrap_or_default();
            let run = loadgen::run_child(&spec)?;
            emu_cpu = emu_cpu.plus(loadgen::own().since(own));
            emu_pg = emu_pg.plus(loadgen::postgres(&data_dir).unwrap_or_default().since(pg));
            load_cpu = load_cpu.plus(run.cpu);
            // Every reading spans the child's warm-up (a fifth of the run) too: its requests
            // are counted at the measured rate, so each per-request figure is like the others.
            emu_requests += run.requests as f64 * 1.2;

            let pg = loadgen::postgres(&data_dir).unwrap_or_default();
            let (tps, cpu) = pgbench(&cluster, &script_path, seconds)?;
            bench_pg = bench_pg.plus(loadgen::postgres(&data_dir).unwrap_or_default().since(pg));
            bench_cpu = bench_cpu.plus(cpu);
            bench_transactions += tps * seconds as f64;

            emu.push(run.per_second());
            bench.push(tps);
            ratios.push(run.per_second() / tps);
        }
        let (e, b) = (median(&emu), median(&bench));
        eprintln!(
            "   {name}: emulator {}, pgbench {}",
            per_second(e, "req"),
            per_second(b, "tx")
        );
        rows.push(Row {
            benchmark: what(words),
            figure: format!("emulator {}", per_second(e, "req")),
            baseline: format!("pgbench {}", per_second(b, "tx")),
            ratio: median(&ratios),
            target: Target::AtLeast(0.7),
        });
        let emu_total = emu_cpu.plus(load_cpu).plus(emu_pg);
        let bench_total = bench_cpu.plus(bench_pg);
        rows.push(Row {
            benchmark: cpu_what(words),
            figure: format!(
                "emulator {} + load {} + PostgreSQL {}",
                per_request(emu_cpu, emu_requests),
                per_request(load_cpu, emu_requests),
                per_request(emu_pg, emu_requests)
            ),
            baseline: format!(
                "pgbench {} + PostgreSQL {}",
                per_request(bench_cpu, bench_transactions),
                per_request(bench_pg, bench_transactions)
            ),
            ratio: (emu_total.total() / emu_requests) / (bench_total.total() / bench_transactions),
            target: Target::None,
        });
    }
    drop(emulator);
    let _ = std::fs::remove_dir_all(&work);
    Ok(rows)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_statements_from_a_log_and_writes_a_script() {
        let log = "2026-11-23 11:00:00.000 UTC [42] LOG:  execute s0: SELECT a\n\
                   FROM t WHERE id = $1 AND name = $2 AND x = $10\n\
                   2026-11-23 11:00:00.001 UTC [43] LOG:  statement: BEGIN\n\
                   2026-11-23 11:00:00.002 UTC [42] DETAIL:  parameters: $1 = '7', $2 = 'it''s', $3 = NULL, $4 = '', $5 = '5', $6 = '6', $7 = '7', $8 = '8', $9 = '9', $10 = '10'\n";
        let found = statements(log);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].sql,
            "SELECT a\nFROM t WHERE id = $1 AND name = $2 AND x = $10"
        );
        assert_eq!(found[0].params[1], Some("it's".to_owned()));
        assert_eq!(found[0].params[2], None);
        assert_eq!(found[0].params[9], Some("10".to_owned()));
        assert_eq!(found[1].sql, "BEGIN");
        let text = script(&found);
        assert!(text.contains("\\set s0p1 7\n"), "{text}");
        assert!(
            text.contains("id = :s0p1 AND name = 'it''s' AND x = :s0p10;"),
            "{text}"
        );
        assert!(text.ends_with("BEGIN;\n"), "{text}");
    }
}
