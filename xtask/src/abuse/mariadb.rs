//! The hostile cases on MariaDB: a third emulator serves a database of its own on the MariaDB
//! server that crate `maria-server` finds or starts (the machine's own on 127.0.0.1:3306, or a
//! throwaway one), dropped at the end.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::{Value, json};

use super::{Row, at_once, secs, statuses};
use crate::fidelity::Server;
use crate::fidelity::emulator::launch;
use crate::http;

const TOKEN: &str = "abuse-token-my";
/// Rows seeded in `items`; the even keys below 200 are then deleted (gaps to fill).
const SEEDED: usize = 240;

/// The emulator and its MariaDB database.
pub struct Maria {
    // Dropped first: the emulator before the database it reads.
    server: Server,
    addr: SocketAddr,
    db: maria_server::Database<'static>,
}

impl Maria {
    /// A database with `items`, and an emulator serving it as resource `my`.
    pub fn start(binary: &Path, dir: &Path) -> Result<Maria, String> {
        let mariadb = maria_server::Server::shared().map_err(|e| format!("MariaDB: {e}"))?;
        let db = mariadb
            .database("svc_abuse")
            .map_err(|e| format!("MariaDB: {e}"))?;
        db.sql(&format!(
            "CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, label TEXT) ENGINE=InnoDB; \
             INSERT INTO items (label) SELECT CONCAT('seed ', seq) FROM seq_1_to_{SEEDED}; \
             DELETE FROM items WHERE id % 2 = 0 AND id < 200;"
        ))
        .map_err(|e| format!("seeding {}: {e}", db.name()))?;
        let config = json!({"projects": [{
            "name": "abuse",
            "environments": ["prod"],
            "resources": [{"name": "my", "token": TOKEN, "database": db.url()}],
        }]});
        let config_path = dir.join("mariadb.json");
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
        Ok(Maria { server, addr, db })
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<http::Response, String> {
        send_at(self.addr, method, path, body)
    }

    fn sql(&self, query: &str, p: Option<Value>) -> Result<http::Response, String> {
        let body = match p {
            Some(p) => json!({"query": query, "v": 2, "params_obj": {"p": p}}),
            None => json!({ "query": query }),
        };
        self.send("POST", "sql_get_query", Some(&body))
    }

    /// What the `mariadb` client prints for `sql` on the database (a connection of its own).
    fn direct(&self, sql: &str) -> String {
        self.db
            .sql(sql)
            .map(|out| out.trim().to_owned())
            .unwrap_or_else(|e| format!("the client failed: {e}"))
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

fn send_at(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<http::Response, String> {
    let body = body.map(Value::to_string);
    http::send(
        addr,
        method,
        &format!("/projects/abuse/prod/my/{path}"),
        Some(TOKEN),
        body.as_deref().map(str::as_bytes),
    )
}

/// Huge values: four SQL answers of one 15 MB value each at once (just under the server's
/// `max_allowed_packet`), and a record of a 20 MB text: answered or refused, never a failure,
/// and the emulator's memory holds.
pub fn huge_values(my: &Maria) -> Row {
    let before = my.peak_mib(true);
    let started = Instant::now();
    let addr = my.addr;
    let answers = at_once(4, move || {
        let body = json!({"query": "select repeat('y', 15000000) as big, repeat('z', 15000000) as bigger"});
        send_at(addr, "POST", "sql_get_query", Some(&body)).map(|r| r.status)
    });
    let took = started.elapsed();
    let record = json!({"label": "w".repeat(20 * 1024 * 1024)});
    let written = my
        .send("POST", "models/items", Some(&record))
        .map(|r| r.status);
    let peak = my.peak_mib(false);
    let rows = my.direct("SELECT COUNT(*) FROM items WHERE LENGTH(label) > 1000000");
    Row {
        case: "MariaDB: four answers of two 15 MB values at once, and a record of 20 MB",
        figures: format!(
            "{} after {}; the record: {}; peak {peak} MiB (from {before} MiB); huge rows stored: {rows}",
            statuses(&answers),
            secs(took),
            written.clone().map_or_else(|e| e, |s| s.to_string()),
        ),
        held: answers.iter().all(|a| *a == Ok(400))
            && written.is_ok_and(|s| (400..500).contains(&s))
            && peak.saturating_sub(before) < 256
            && rows == "0",
    }
}

/// Long queries: one that sleeps past the time limit (stopped by the server, and gone from
/// its process list), and a statement of 2 MB of text.
pub fn long_queries(my: &Maria) -> Row {
    let started = Instant::now();
    let slept = my.sql("select sleep(600) as s", None).map(|r| r.status);
    let took = started.elapsed();
    let running = my.direct(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%sleep(600)%' \
         AND INFO NOT LIKE '%PROCESSLIST%'",
    );
    let long_text = format!("select 1{} as v", " + 1".repeat(500_000));
    let started = Instant::now();
    let long = my.sql(&long_text, None);
    let long_took = started.elapsed();
    let long_status = long.as_ref().map(|r| r.status).map_err(String::clone);
    let summed = long
        .as_ref()
        .ok()
        .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .map(|v| v.to_string())
        .unwrap_or_default();
    Row {
        case: "MariaDB: a query past the time limit, and one of 2 MB of text",
        figures: format!(
            "sleep: {} after {}, still running afterwards: {running}; 2 MB query: {} after {}",
            slept.clone().map_or_else(|e| e, |s| s.to_string()),
            secs(took),
            long_status
                .as_ref()
                .map_or_else(Clone::clone, ToString::to_string),
            secs(long_took),
        ),
        held: slept == Ok(400)
            && took.as_secs() < 30
            && running == "0"
            && long_status
                .as_ref()
                .is_ok_and(|&s| s == 200 || (400..500).contains(&s))
            && (long_status != Ok(200) || summed.contains("500001")),
    }
}

/// Statements whose quotes and comments a scanner may read otherwise than MySQL's lexer
/// (backslash escapes, double-quoted strings, `#` and `--` comments, executable comments,
/// quoted names), and values that would run as SQL if spliced: no answer shows the user's name,
/// the table is still there, and none is a failure (`5xx`).
pub fn parameter_tricks(my: &Maria) -> Row {
    let spliced = "' , current_user() , '";
    let probes: [(&str, Value); 11] = [
        ("select 'it\\'s :p' as v", json!(spliced)),
        ("select \"a :p\" as v", json!(spliced)),
        ("select :p as v # :p", json!(spliced)),
        ("select :p as v -- :p", json!(spliced)),
        ("select 1 /*! , :p */ as v", json!(spliced)),
        ("select 1 /*M! , :p */ as v", json!(spliced)),
        ("select 1 /*+ :p */ as v", json!(spliced)),
        ("select `:p` from (select 1 as `:p`) t", json!(spliced)),
        ("select :p as v", json!("\\' , current_user() , \\'")),
        ("select :p as v", json!("1; DROP TABLE items")),
        (
            "select * from items where label = :p",
            json!("x' OR '1'='1"),
        ),
    ];
    let user = my.direct("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)");
    let mut answers = Vec::new();
    let mut ran = 0;
    for (query, p) in probes {
        let reply = my.sql(query, Some(p));
        if let Ok(r) = &reply
            && r.status == 200
            && (r.text().contains(&format!("{user}@")) || r.text().contains("seed"))
        {
            ran += 1;
        }
        answers.push(reply.map(|r| r.status));
    }
    let rows = my.direct("SELECT COUNT(*) FROM items");
    Row {
        case: "MariaDB: parameter values in statements the lexer reads otherwise",
        figures: format!(
            "{}; values that ran as SQL: {ran}; items afterwards: {rows}",
            statuses(&answers)
        ),
        held: ran == 0
            && rows.parse::<usize>().is_ok_and(|n| n > 0)
            && answers.iter().all(|a| a.as_ref().is_ok_and(|&s| s < 500)),
    }
}

/// Session state left behind on a pooled connection: a user variable, a named lock, row locks
/// (`FOR UPDATE`) and a session setting taken through SQL are gone for the next query and for
/// every other client.
pub fn session_state(my: &Maria) -> Row {
    let lock = format!("svc_abuse_{}", std::process::id());
    let took = [
        my.sql("select @svc_left := 'left behind' as v", None),
        my.sql(&format!("select get_lock('{lock}', 0) as l"), None),
        my.sql("select id from items where id = 1 for update", None),
        my.sql(
            "select 1 as v from (select @@session.sql_mode) s where (@svc_mode := 'x') is not null",
            None,
        ),
    ]
    .map(|r| r.map(|r| r.status));
    // Every pooled connection in turn: none shows the variable.
    let mut left = 0;
    for _ in 0..16 {
        if let Ok(r) = my.sql("select @svc_left as v, @svc_mode as m", None)
            && r.text().contains("left behind")
        {
            left += 1;
        }
    }
    let free = my.direct(&format!("SELECT IS_FREE_LOCK('{lock}')"));
    let updated = my.direct(
        "SET SESSION innodb_lock_wait_timeout = 3; UPDATE items SET label = label WHERE id = 1; \
         SELECT ROW_COUNT() >= 0",
    );
    Row {
        case: "MariaDB: session state taken through SQL (a variable, a named lock, row locks)",
        figures: format!(
            "{}; variable seen afterwards: {left} of 16; lock free: {free}; row writable: {updated}",
            statuses(&took)
        ),
        held: left == 0 && free == "1" && updated == "1",
    }
}

/// 60 creates with keys filling gaps below the largest and 60 without, all at once: each
/// answers the record it wrote.
pub fn racing_keys(my: &Maria) -> Row {
    let addr = my.addr;
    let next = Arc::new(AtomicUsize::new(0));
    let answers = at_once(120, move || {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let label = format!("raced {i}");
        let body = if i.is_multiple_of(2) {
            json!({"id": 2 + i, "label": label})
        } else {
            json!({ "label": label })
        };
        let reply = send_at(addr, "POST", "models/items", Some(&body));
        let answered = reply
            .as_ref()
            .ok()
            .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok());
        let own = answered.is_some_and(|v| {
            v["label"] == json!(label) && (!i.is_multiple_of(2) || v["id"] == json!(2 + i))
        });
        (reply.map(|r| r.status), own)
    });
    let statuses_only: Vec<Result<u16, String>> = answers.iter().map(|(s, _)| s.clone()).collect();
    let wrong = answers.iter().filter(|(_, own)| !own).count();
    let stored = my.direct("SELECT COUNT(DISTINCT id) FROM items WHERE label LIKE 'raced %'");
    Row {
        case: "MariaDB: 60 creates with keys below the largest and 60 without, at once",
        figures: format!(
            "{}; answers of another record: {wrong}; stored: {stored}",
            statuses(&statuses_only)
        ),
        held: statuses_only.iter().all(|a| *a == Ok(201)) && wrong == 0 && stored == "120",
    }
}

/// One case on the MariaDB emulator.
type Case = fn(&Maria) -> Row;

/// Every case of this module, by name.
pub const CASES: [(&str, Case); 5] = [
    ("MariaDB huge values", huge_values),
    ("MariaDB long queries", long_queries),
    ("MariaDB parameter tricks", parameter_tricks),
    ("MariaDB session state", session_state),
    ("MariaDB racing keys", racing_keys),
];
