//! The hostile cases that need databases of their own: a second emulator serves a SQLite
//! resource of 10 000 rows (`big`) and a PostgreSQL database on a throwaway cluster (`pg`,
//! crate `pg-cluster`), whose `standard_conforming_strings` a case turns off.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Instant;

use pg_cluster::Cluster;
use serde_json::{Value, json};

use super::{Row, at_once, secs, statuses};
use crate::fidelity::Server;
use crate::fidelity::emulator::launch;
use crate::http;

const TOKEN: &str = "abuse-token";
/// The token of resource `pgoff` (each resource has its own).
const TOKEN_OFF: &str = "abuse-token-off";
/// The token of resource `big`.
const TOKEN_BIG: &str = "abuse-token-big";
const DATABASE: &str = "abuse";
/// Rows of the SQLite resource that the moving queue lists, whole, 50 times at once.
const BIG_ROWS: usize = 10_000;
/// Concurrent lists of it: more than the resource's 16 turns, and each takes a while.
const LISTS: usize = 50;

/// The second emulator, its cluster and its resources.
pub struct Databases {
    server: Server,
    addr: SocketAddr,
    cluster: Cluster,
}

impl Databases {
    /// Starts a cluster with database `abuse` and an emulator serving it and `big`.
    pub fn start(binary: &Path, dir: &Path) -> Result<Databases, String> {
        let cluster = Cluster::start().map_err(|e| format!("starting PostgreSQL: {e}"))?;
        cluster
            .create_database(DATABASE)
            .map_err(|e| format!("creating database {DATABASE}: {e}"))?;
        cluster
            .psql(
                DATABASE,
                "CREATE TABLE items (id serial PRIMARY KEY, label text);
                 INSERT INTO items (label) SELECT 'seed ' || g FROM generate_series(1, 240) g;
                 DELETE FROM items WHERE id % 2 = 0 AND id < 200;",
            )
            .map_err(|e| format!("seeding {DATABASE}: {e}"))?;
        let big_seed = format!(
            "CREATE TABLE rows (id INTEGER PRIMARY KEY, name TEXT, amount REAL, at TEXT); \
             WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {BIG_ROWS}) \
             INSERT INTO rows SELECT n, 'row ' || n, n * 1.5, '2024-01-01' FROM g;"
        );
        let config = json!({"projects": [{
            "name": "abuse",
            "environments": ["prod"],
            "resources": [
                {"name": "pg", "token": TOKEN, "database": cluster.url(DATABASE)},
                // The same database, on connections that read backslashes in every string.
                {"name": "pgoff", "token": TOKEN_OFF, "database": format!(
                    "{}?options=-c%20standard_conforming_strings%3Doff",
                    cluster.url(DATABASE)
                )},
                {"name": "big", "token": TOKEN_BIG, "seed_sql": big_seed},
            ],
        }]});
        let config_path = dir.join("databases.json");
        std::fs::write(&config_path, config.to_string())
            .map_err(|e| format!("writing {}: {e}", config_path.display()))?;
        let args = vec![
            "--config".to_owned(),
            config_path.to_string_lossy().into_owned(),
        ];
        let (server, info) = launch(binary, dir, &args)?;
        let base = info["api_base_url"].as_str().unwrap_or_default();
        let addr = base
            .strip_prefix("http://")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| format!("unexpected api_base_url {base:?}"))?;
        Ok(Databases {
            server,
            addr,
            cluster,
        })
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<http::Response, String> {
        let body = body.map(|b| b.to_string());
        // Each resource has a token of its own.
        let token = match path.split('/').next() {
            Some("pgoff") => TOKEN_OFF,
            Some("big") => TOKEN_BIG,
            _ => TOKEN,
        };
        http::send(
            self.addr,
            method,
            &format!("/projects/abuse/prod/{path}"),
            Some(token),
            body.as_deref().map(str::as_bytes),
        )
    }

    fn sql(&self, query: &str, p: Option<&str>) -> Result<http::Response, String> {
        self.sql_on("pg", query, p)
    }

    fn sql_on(
        &self,
        resource: &str,
        query: &str,
        p: Option<&str>,
    ) -> Result<http::Response, String> {
        let body = match p {
            Some(p) => json!({"query": query, "v": 2, "params_obj": {"p": p}}),
            None => json!({ "query": query }),
        };
        self.send("POST", &format!("{resource}/sql_get_query"), Some(body))
    }

    /// `VmHWM` of the emulator in MiB, after resetting it to the current RSS when `reset`.
    fn peak_mib(&self, reset: bool) -> u64 {
        let pid = self.server.pid();
        if reset {
            let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
        }
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    }
}

/// An advisory lock taken through `sql_get_query` is free for everyone else once the query
/// ends (it stayed until the pool handed its connection out again).
pub fn advisory_locks(db: &Databases) -> Row {
    let took = db.sql(
        "select pg_advisory_lock(770011), pg_advisory_lock_shared(770012), \
         set_config('work_mem', '1MB', false)",
        None,
    );
    let held = db
        .cluster
        .psql(
            DATABASE,
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'",
        )
        .map(|out| out.trim().to_owned())
        .unwrap_or_else(|e| format!("psql failed: {e}"));
    Row {
        case: "PostgreSQL: advisory locks taken through SQL",
        figures: format!(
            "query {}; advisory locks held afterwards: {held}",
            took.map_or_else(|e| e, |r| r.status.to_string())
        ),
        held: held == "0",
    }
}

/// Statements whose quotes a scanner reads differently from PostgreSQL's lexer, with values
/// that would run as SQL if spliced: no answer shows the role's name.
pub fn lexer_tricks(db: &Databases) -> Row {
    let role = db.cluster.user().to_owned();
    let probes = [
        ("select name'\\', ' :p ' as b", " || current_user || "),
        ("select else'\\', ' :p ' as b", " || current_user || "),
        ("select $é$ :p $é$", "$é$ || current_user || $é$"),
        ("select 'it\\'s :p' as v", " || current_user || "),
    ];
    let mut answers = Vec::new();
    let mut ran = 0;
    for resource in ["pg", "pgoff"] {
        for (query, p) in probes {
            let reply = db.sql_on(resource, query, Some(p));
            if let Ok(r) = &reply
                && r.status == 200
                && r.text().contains(&role)
            {
                ran += 1;
            }
            answers.push(reply.map(|r| r.status));
        }
    }
    Row {
        case: "PostgreSQL: parameter values in statements the lexer reads otherwise (standard_conforming_strings on and off)",
        figures: format!("{}; values that ran as SQL: {ran}", statuses(&answers)),
        held: ran == 0,
    }
}

/// Four answers of one 100 MB row at once: refused, and the emulator's memory holds.
pub fn huge_rows(db: &Databases) -> Row {
    let before = db.peak_mib(true);
    let started = Instant::now();
    let addr = db.addr;
    let answers = at_once(4, move || {
        let body = json!({"query": "select repeat('y', 100000000) as big"}).to_string();
        http::send(
            addr,
            "POST",
            "/projects/abuse/prod/pg/sql_get_query",
            Some(TOKEN),
            Some(body.as_bytes()),
        )
        .map(|r| r.status)
    });
    let took = started.elapsed();
    let peak = db.peak_mib(false);
    Row {
        case: "PostgreSQL: four answers of one 100 MB row at once",
        figures: format!(
            "{} after {}; peak {peak} MiB (from {before} MiB)",
            statuses(&answers),
            secs(took)
        ),
        held: answers.iter().all(|a| *a == Ok(400)) && peak.saturating_sub(before) < 128,
    }
}

/// 60 creates with serial keys filling gaps below the largest and 60 without, all at once.
pub fn racing_serial_keys(db: &Databases) -> Row {
    let addr = db.addr;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let answers = at_once(120, move || {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = if i.is_multiple_of(2) {
            json!({"id": 2 + i, "label": format!("keyed {i}")})
        } else {
            json!({"label": format!("keyless {i}")})
        };
        http::send(
            addr,
            "POST",
            "/projects/abuse/prod/pg/models/items",
            Some(TOKEN),
            Some(body.to_string().as_bytes()),
        )
        .map(|r| r.status)
    });
    Row {
        case: "PostgreSQL: 60 creates with serial keys below the largest and 60 without, at once",
        figures: statuses(&answers),
        held: answers.iter().all(|a| *a == Ok(201)),
    }
}

/// 50 lists of all 10 000 rows of one SQLite resource at once: a queue that moves, which is
/// never shed (a request gave up 2 s after it arrived, however fast the queue moved).
pub fn moving_queue(db: &Databases) -> Row {
    let addr = db.addr;
    let started = Instant::now();
    let answers = at_once(LISTS, move || {
        http::send(
            addr,
            "GET",
            "/projects/abuse/prod/big/models/rows?_no_pagination=1",
            Some(TOKEN_BIG),
            None,
        )
        .map(|r| r.status)
    });
    Row {
        case: "A busy queue that moves: 50 lists of 10 000 rows of one SQLite resource at once",
        figures: format!("{} in {}", statuses(&answers), secs(started.elapsed())),
        held: answers.iter().all(|a| *a == Ok(200)),
    }
}

/// One case on the databases' emulator.
type Case = fn(&Databases) -> Row;

/// Every case of this module, by name.
pub const CASES: [(&str, Case); 5] = [
    ("advisory locks", advisory_locks),
    ("lexer tricks", lexer_tricks),
    ("huge rows", huge_rows),
    ("racing serial keys", racing_serial_keys),
    ("moving queue", moving_queue),
];
