//! `cargo xtask fidelity --coverage`: which of the engine's own branches the project's
//! differential runs reach.
//!
//! The engine is Python: coverage.py in branch mode, run around the engine's launcher, records
//! every branch a run takes. When coverage is on ([`enable`]), [`super::engine::start`] starts
//! the engine under `python -m coverage run` with the rc file [`write_rc`] writes (branch mode,
//! one data file per process, and `sigterm`, so that the `SIGTERM` [`super::Server`] then sends
//! on its way out saves the data; a `SIGKILL` would lose it). At the end the data files are
//! combined and read back as JSON ([`Report::read`]) for the modules of the engine's records
//! request path ([`MODULES`]). The report lists every branch not reached as `file:line` with its
//! source line and, where docs/fidelity.md gives one, the reason no request can reach it; its
//! last line reads `engine coverage: P% of N branches`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The modules of the engine's records request path, relative to site-packages: the router
/// and its handlers, the request, the views and their mixins, the filters, the fields and
/// serializers, the paginator, the SQL queryset, reflection and type codes.
pub const MODULES: &[&str] = &[
    "jet_bridge/router.py",
    "jet_bridge/handlers/view.py",
    "jet_bridge_base/request.py",
    "jet_bridge_base/views/base/api.py",
    "jet_bridge_base/views/base/generic_api.py",
    "jet_bridge_base/views/mixins/list.py",
    "jet_bridge_base/views/mixins/create.py",
    "jet_bridge_base/views/mixins/retrieve.py",
    "jet_bridge_base/views/mixins/update.py",
    "jet_bridge_base/views/mixins/destroy.py",
    "jet_bridge_base/views/mixins/model.py",
    "jet_bridge_base/views/model.py",
    "jet_bridge_base/filters/filter_class.py",
    "jet_bridge_base/filters/model.py",
    "jet_bridge_base/filters/filter.py",
    "jet_bridge_base/filters/filter_for_dbfield.py",
    "jet_bridge_base/filters/lookups.py",
    "jet_bridge_base/filters/order_by.py",
    "jet_bridge_base/filters/model_search.py",
    "jet_bridge_base/filters/model_relation.py",
    "jet_bridge_base/filters/model_m2m.py",
    "jet_bridge_base/filters/model_segment.py",
    "jet_bridge_base/filters/model_aggregate.py",
    "jet_bridge_base/filters/model_group.py",
    "jet_bridge_base/filters/semantic_search.py",
    "jet_bridge_base/filters/char_filter.py",
    "jet_bridge_base/filters/integer_filter.py",
    "jet_bridge_base/filters/float_filter.py",
    "jet_bridge_base/filters/boolean_filter.py",
    "jet_bridge_base/filters/datetime_filter.py",
    "jet_bridge_base/filters/wkt_filter.py",
    "jet_bridge_base/filters/binary_filter.py",
    "jet_bridge_base/fields/field.py",
    "jet_bridge_base/fields/char.py",
    "jet_bridge_base/fields/integer.py",
    "jet_bridge_base/fields/float.py",
    "jet_bridge_base/fields/boolean.py",
    "jet_bridge_base/fields/datetime.py",
    "jet_bridge_base/fields/json.py",
    "jet_bridge_base/fields/array.py",
    "jet_bridge_base/fields/binary.py",
    "jet_bridge_base/serializers/serializer.py",
    "jet_bridge_base/serializers/model_serializer.py",
    "jet_bridge_base/serializers/model.py",
    "jet_bridge_base/paginators/pagination.py",
    "jet_bridge_base/paginators/page_number.py",
    "jet_bridge_base/db_types/queryset.py",
    "jet_bridge_base/db_types/common.py",
    "jet_bridge_base/db_types/sql/common.py",
    "jet_bridge_base/db_types/sql/type_codes.py",
    "jet_bridge_base/db_types/sql/sql_reflect.py",
    "jet_bridge_base/db_types/sql/sql_db.py",
    "jet_bridge_base/db_types/sql/timezones.py",
    "jet_bridge_base/responses/json.py",
    "jet_bridge_base/encoders.py",
    "jet_bridge_base/utils/exceptions.py",
];

/// Lines of the request-path modules no request to an engine over SQLite, PostgreSQL or
/// MySQL can reach, each with its reason (coverage.py's `exclude_also`: a line that opens a
/// block excludes the block, and the branches into it). docs/fidelity.md lists them too (a
/// test holds the two together).
pub const EXCLUDED: &[(&str, &str)] = &[
    (
        r"isinstance\(.*\b(Mongo\w+|ObjectId)\b",
        "MongoDB only: the emulator serves SQL databases",
    ),
    (
        r"def get_mongo_\w+\(",
        "MongoDB only: the emulator serves SQL databases",
    ),
    (
        r"== '(mssql|mssql\+pyodbc|clickhouse|clickhouse\+native|bigquery|snowflake|databricks|oracle)'",
        "a database the emulator does not serve (SQL Server, ClickHouse, BigQuery, Snowflake, \
         Databricks, Oracle)",
    ),
    (
        r"def date_trunc_column_clickhouse\(",
        "ClickHouse only: a database the emulator does not serve",
    ),
    (
        r"is_track_queries_enabled\(\)|TRACK_QUERY_|def track_query_(start|finish)\(|def (start_track|get_track_time|get_track_memory_usage)\(",
        "the engine's query tracking (its TRACK_QUERY_SLOW_TIME and TRACK_QUERY_HIGH_MEMORY \
         settings) only writes log lines",
    ),
    (
        r"def sql_build_engine_url\(|def sql_create_connection_engine\(|if metadata_dump:",
        "connecting: the engine builds its one connection from its start options (host, port, \
         user, SSL, extra options, a saved metadata file), the same for every request of a run",
    ),
    (
        r"def get_timezone_from_str\(",
        "dead code: nothing in the engine calls it",
    ),
    (
        r"class ArrayField\(",
        "no column takes the ArrayField: its rule (`INTEGER[]`) never matches, as SQLAlchemy \
         prints every array type as `ARRAY`",
    ),
    (
        r"if not isinstance\(body, dict\):|if len\(items\) == 0:|if len\(columns\) == 0 or len\(rows\) == 0:",
        "the segment filter reads `self.handler.data`, which the view does not have: it fails \
         (500) before these lines, whatever the request",
    ),
    (
        r"elif callable\(operator\):|if post_process:",
        "no lookup has a callable operator or a post_process",
    ),
    (
        r"if settings\.DEBUG:",
        "the engine's DEBUG setting only changes the page of a 500, not its status",
    ),
    (
        r"X_BRIDGE_SETTINGS|self\.bridge_settings|database_ssl_|rls_type",
        "needs an X-Bridge-Settings header, encrypted with the project's secret key (the \
         hosted service's own connections)",
    ),
];

/// Conditions that, for every request to the records routes, are decided by the engine's
/// start options or by its own code, never by the request: coverage.py counts no branch from
/// these lines (`partial_branches`), each for the reason given. docs/fidelity.md lists them
/// too.
pub const FIXED: &[(&str, &str)] = &[
    (
        r"if 'context' in kwargs:|if self\.meta:|if hasattr\(self\.meta, '(model|fields|model_fields)'\):|if item\.name:",
        "the records views' filter class and serializer always have their model, context and \
         named filters",
    ),
    (
        r"if not filter_class:|if self\.pagination_class is None:|if self\.paginator is None:|if filter_instance:|if not hasattr\(self, action\):|if request\.session is not None:|if isinstance\(response, RedirectResponse\):",
        "the records views always have a filter class, a paginator, the routed action and a \
         session, and answer no redirect",
    ),
    (
        r"if not isinstance\(data, string_types\):|for v in source\.get\(name, \[\]\):|if isinstance\(v, bytes\):",
        "Tornado gives the body as bytes and the query's values as text",
    ),
    (
        r"if not bridge_settings_encoded:",
        "needs an X-Bridge-Settings header, encrypted with the project's secret key",
    ),
    (
        r"if settings\.(DISABLE_AUTH|CORS_HEADERS):|if connection:",
        "the engine's start options: authentication on, CORS headers on, one connection",
    ),
    (
        r"if not permission\.has_(object_)?permission\(|if isinstance\(exc, PermissionDenied\):",
        "credentials: the emulator checks its own (docs/auth.md) before a request reaches a \
         records route, so a request the engine's key check refuses is not one of its records \
         requests",
    ),
    (
        r"if not self\.fields or not isinstance\(self\.fields, Iterable\):|if validate_method is not None:|if 'allow_many' not in kwargs:|if self\.rendered_data is not None:|elif hasattr\(obj, 'tolist'\):",
        "the engine's own code: a model serializer always has the model's columns as its \
         fields and no validate_ methods, a JSON field is always made the same way, an answer is \
         rendered once, and no value is a NumPy array",
    ),
    (
        r"^ {16}if isinstance\(value, bytes\):|elif len\(values\) == 1:",
        "Tornado gives each form field a list of one or more byte strings",
    ),
    (
        r"if ordering:|elif isinstance\(x, UnaryExpression\):",
        "a non-empty `_order_by` always splits into one name or more, each a column or its \
         descending form",
    ),
    (
        r"if callable\(self\.default\):|if foreign_key:",
        "no field of the records views has a callable default, and a foreign key constraint \
         always has its columns",
    ),
    (
        r"if isinstance\(row, Row\):|if isinstance\(row, dict\):|if 'group_1' in row:",
        "an SQL group's rows are always SQLAlchemy rows, named `group`, `group_2`, ...",
    ),
    (
        r"elif hasattr\(queryset, '_order_by'\) and queryset\._order_by:|if hasattr\(queryset, '_limit_clause'\) and queryset\._limit_clause:|elif hasattr\(queryset, '_limit'\) and queryset\._limit:|if get_queryset_limit\(queryset\) is None:",
        "SQLAlchemy 1.4 keeps a query's ordering in `_order_by_clauses`, and an unpaginated \
         list's query has no limit yet",
    ),
    (
        r"if len\(table\.primary_key\.columns\) == 0 and table_name not in MappedBase\.classes:",
        "the engine gives every table without a key one of its columns as key, so none is \
         left out",
    ),
    (
        r"if hasattr\(e\.orig, 'args'\) and hasattr\(e\.orig\.args, '__getitem__'\):|elif len\(e\.orig\.args\) == 2:",
        "the drivers' errors always carry one argument (sqlite3, psycopg2) or two (PyMySQL)",
    ),
    (
        r"if kwargs\.get\('exc_info'\):",
        "Tornado calls `write_error` without `exc_info` only for a request it refuses before \
         any handler runs (a malformed request line or header), which no HTTP client sends",
    ),
    (
        r"if len\(value\):|if value != '':|elif isinstance\(value, datetime\):|if pre_process:",
        "a filter's value is never empty when it gets here (an empty list or text is one of \
         EMPTY_VALUES, which stop it before) and never a date-time (it comes from text or JSON), \
         and every lookup has a pre_process",
    ),
    (
        r"if get_session_engine\(queryset\.session\) == 'postgresql':",
        "an ARRAY column exists on PostgreSQL only (the JSON branches on the same line, reached \
         both ways, are not counted either)",
    ),
    (
        r"if similarity_gte is not None:",
        "comes after pgvector's cosine distance, which only a column of pgvector's `vector` \
         type has (the emulator refuses `_semantic_search`, docs/contract.md)",
    ),
    (
        r"if value is empty:|if self\.required:|if self\.many:|if isinstance\(value, Mapping\):|if not field\.required:|if self\.instance is not None:|if self\.errors:|if self\.instance is None:|elif self\.validated_data is not None:",
        "the records views validate a whole body, never absent, with a serializer of one \
         record (never many, no required field left out), write the answer from the stored \
         record, and save only valid data, whose create or update returns the record",
    ),
    (
        r"if not page_number:|if not page_size:|if self\.page_size_query_param:|if self\.max_page_size:|elif has_next is None and len\(data\) == 0:",
        "the paginator's page and size are always 1 or more, its class sets both parameters \
         and a largest size, and a page's count is always known",
    ),
    (
        r"if sub_relationship\.table\.name != relation_name:|for sub_relationship in relationship\.mapper\.relationships:|if len\(relations\) == 0:",
        "a relationship has no `table`: `_m2m` fails (500) on the first related model it looks \
         at, so it never gets past this line, and a model without relationships never enters \
         the loop",
    ),
    (
        r"or not hasattr\(column, 'astext'\):|if column is not None \\$",
        "only JSON columns have `astext`, and they take the branch before; a column typed \
         `object_id` is MongoDB's",
    ),
    (
        r"elif isinstance\(exc, SqlError\):",
        "raised by the SQL view only (docs/sql.md), never by a records route",
    ),
    (
        r"if views:|if schema is not None:|if schema is None:|if only is None:|elif callable\(only\):|if missing:|if bind is None:|if pending_connection:|DATABASE_MAX_TABLES|if foreign and hasattr|if database_timezone:|if clear:|if mapper\.selectable\.schema:|if name in \['pg_stat_statements'\]:",
        "reflection options fixed at the engine's start (schema, views, only, table limit, \
         time zone, PostgreSQL's pg_stat_statements view skipped by name), the same for every \
         request of a run",
    ),
];

/// The figure of the last recorded run (`cargo xtask fidelity --coverage`, docs/fidelity.md),
/// in tenths of a percent, less a few branches' margin (a run's figure moves by a branch or two
/// with its timing): the check fails when a run reaches fewer. Raise it with the figure.
pub const RECORDED_PER_MILLE: u32 = 970;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Turns coverage on for every engine this process starts from now on, its data files in
/// `dir` (emptied first).
pub fn enable(dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    write_rc(dir)?;
    DIR.set(dir.to_path_buf())
        .map_err(|_| "engine coverage was already turned on".to_owned())
}

/// The data directory, when coverage is on.
pub fn dir() -> Option<&'static Path> {
    DIR.get().map(PathBuf::as_path)
}

/// The rc file of the runs in `dir`.
fn rc(dir: &Path) -> PathBuf {
    dir.join("coveragerc")
}

/// The rc file of the report that leaves nothing out.
fn raw_rc(dir: &Path) -> PathBuf {
    dir.join("coveragerc-raw")
}

/// Branch mode, one data file per engine process (`parallel`), saved on `SIGTERM`, over the
/// engine's two packages only; the report leaves out [`EXCLUDED`] and [`FIXED`]. A second rc
/// file without them gives the figure of every branch of the modules.
fn write_rc(dir: &Path) -> Result<(), String> {
    let run = format!(
        "[run]\nbranch = True\nparallel = True\nsigterm = True\n\
         source_pkgs = jet_bridge, jet_bridge_base\ndata_file = {}\n",
        dir.join(".coverage").display()
    );
    std::fs::write(raw_rc(dir), &run).map_err(|e| format!("writing the coverage rc file: {e}"))?;
    let mut text = format!("{run}\n[report]\nexclude_also =\n");
    for (pattern, _) in EXCLUDED {
        text.push_str("    ");
        text.push_str(pattern);
        text.push('\n');
    }
    // coverage.py's own defaults, which a list of ours replaces, then ours.
    text.push_str("partial_branches =\n    #\\s*(pragma|PRAGMA)[:\\s]?\\s*(no|NO)\\s*(branch|BRANCH)\n    ^\\s*(while (True|1|False|0)|if (True|1|False|0)):\n");
    for (pattern, _) in FIXED {
        text.push_str("    ");
        text.push_str(pattern);
        text.push('\n');
    }
    std::fs::write(rc(dir), text).map_err(|e| format!("writing the coverage rc file: {e}"))
}

/// The arguments that run `launcher` under coverage (after `python`).
pub fn run_args(dir: &Path, launcher: &Path) -> Vec<String> {
    vec![
        "-m".to_owned(),
        "coverage".to_owned(),
        "run".to_owned(),
        format!("--rcfile={}", rc(dir).display()),
        launcher.display().to_string(),
    ]
}

/// Installs coverage.py into the engine's venv when it is not there.
pub fn install(python: &Path) -> Result<(), String> {
    let has = Command::new(python)
        .args(["-c", "import coverage"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has {
        return Ok(());
    }
    eprintln!("fidelity: installing coverage.py into the engine's venv");
    let ok = Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "coverage>=7.4,<8"])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err("installing coverage.py failed".to_owned())
    }
}

/// Combines the runs' data files and writes them as JSON; returns the paths of the report
/// and of the one that leaves nothing out.
pub fn combine(python: &Path, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    write_rc(dir)?;
    let rc = format!("--rcfile={}", rc(dir).display());
    let raw = format!("--rcfile={}", raw_rc(dir).display());
    let json = dir.join("coverage.json");
    let raw_json = dir.join("coverage-raw.json");
    // A report of runs combined before has no data files left to combine.
    let parallel = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with(".coverage."));
    let mut steps = Vec::new();
    if parallel {
        steps.push(vec![
            "-m", "coverage", "combine", "--append", "--quiet", &rc,
        ]);
    }
    let json_text = json.display().to_string();
    let raw_text = raw_json.display().to_string();
    for args in steps.into_iter().chain([
        vec!["-m", "coverage", "json", "--quiet", &rc, "-o", &json_text],
        vec!["-m", "coverage", "json", "--quiet", &raw, "-o", &raw_text],
    ]) {
        let output = Command::new(python)
            .args(&args)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("running coverage: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "`python {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Ok((json, raw_json))
}

/// One module's branches.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Module {
    /// Branches in the module.
    pub branches: u64,
    /// Branches some run took.
    pub covered: u64,
    /// Each branch not taken: (from line, to line; negative: the function's exit).
    pub missing: Vec<(i64, i64)>,
    /// The module's source lines, for the report.
    pub source: Vec<String>,
}

/// The request-path modules' branches, all runs combined.
#[derive(Debug, Default)]
pub struct Report {
    /// By path relative to site-packages, in [`MODULES`]' order.
    pub modules: Vec<(&'static str, Module)>,
}

impl Report {
    /// Reads coverage.py's JSON report. With `source_pkgs` it lists every file of the two
    /// packages, imported or not, so a module of [`MODULES`] it does not list is misspelled
    /// here: an error, never a module of no branches.
    pub fn read(json: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(json)
            .map_err(|e| format!("reading {}: {e}", json.display()))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| format!("reading {}: {e}", json.display()))?;
        Report::from_json(&value, MODULES, |path| {
            std::fs::read_to_string(path)
                .map(|s| s.lines().map(str::to_owned).collect())
                .unwrap_or_default()
        })
    }

    /// The report of `modules` in coverage.py's JSON `value`; `source` reads a file's lines.
    fn from_json(
        value: &Value,
        modules: &[&'static str],
        source: impl Fn(&str) -> Vec<String>,
    ) -> Result<Report, String> {
        let files = value["files"]
            .as_object()
            .ok_or("coverage.py's JSON report has no `files`")?;
        let modules = modules
            .iter()
            .map(|&module| {
                let suffix = format!("site-packages/{module}");
                let (path, file) = files
                    .iter()
                    .find(|(path, _)| path.ends_with(&suffix))
                    .ok_or_else(|| {
                        format!(
                            "coverage.py measured no file {module} (xtask/src/fidelity/coverage.rs \
                             MODULES names a module the engine does not have)"
                        )
                    })?;
                let summary = &file["summary"];
                let missing = file["missing_branches"]
                    .as_array()
                    .map(|pairs| {
                        pairs
                            .iter()
                            .filter_map(|pair| Some((pair[0].as_i64()?, pair[1].as_i64()?)))
                            .collect()
                    })
                    .unwrap_or_default();
                let m = Module {
                    branches: summary["num_branches"].as_u64().unwrap_or(0),
                    covered: summary["covered_branches"].as_u64().unwrap_or(0),
                    missing,
                    source: source(path),
                };
                Ok((module, m))
            })
            .collect::<Result<_, String>>()?;
        Ok(Report { modules })
    }

    /// (branches reached, branches) over every module.
    pub fn totals(&self) -> (u64, u64) {
        self.modules
            .iter()
            .fold((0, 0), |(c, n), (_, m)| (c + m.covered, n + m.branches))
    }

    /// The figure in tenths of a percent (rounded down).
    pub fn per_mille(&self) -> u32 {
        let (covered, branches) = self.totals();
        (covered * 1000).checked_div(branches).unwrap_or(0) as u32
    }

    /// The report: one line per module, then every branch not reached with its reason from
    /// `reasons` (docs/fidelity.md), then `engine coverage: P% of N branches`.
    pub fn render(&self, reasons: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nengine branches reached, by module of the records request path:"
        );
        for (module, m) in &self.modules {
            let pct = percent(m.covered, m.branches);
            let _ = writeln!(
                out,
                "  {pct:>6} {:>4}/{:<4} {module}",
                m.covered, m.branches
            );
        }
        let mut undecided = 0;
        let _ = writeln!(
            out,
            "\nbranches not reached (file:line -> line, the source, the reason):"
        );
        for (module, m) in &self.modules {
            for &(from, to) in &m.missing {
                let key = format!("{module}:{from}");
                let line = usize::try_from(from)
                    .ok()
                    .and_then(|n| m.source.get(n.wrapping_sub(1)))
                    .map_or("", |s| s.trim());
                let target = if to < 0 {
                    "exit".to_owned()
                } else {
                    to.to_string()
                };
                let reason = match reasons.get(&key) {
                    Some(reason) => reason.as_str(),
                    None => {
                        undecided += 1;
                        "NOT DECIDED: no request reaches it and docs/fidelity.md gives no reason"
                    }
                };
                let _ = writeln!(out, "  {key} -> {target}  `{line}`\n      {reason}");
            }
        }
        let (covered, branches) = self.totals();
        let _ = writeln!(
            out,
            "\n{undecided} branches not reached and not decided in docs/fidelity.md"
        );
        let _ = writeln!(
            out,
            "engine coverage: {} of {branches} branches",
            percent(covered, branches)
        );
        out
    }
}

/// `P%` with one decimal, rounded down (so 89.96% never shows as 90.0%).
fn percent(part: u64, whole: u64) -> String {
    let tenths = (part * 1000).checked_div(whole).unwrap_or(0);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// The reasons docs/fidelity.md gives for branches no request reaches: the lines of its
/// section "Branches no request reaches" of the form `` - `file.py:LINE`: reason ``.
pub fn reasons(docs: &str) -> BTreeMap<String, String> {
    let mut reasons = BTreeMap::new();
    let mut inside = false;
    for line in docs.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = heading.trim() == "Branches no request reaches";
            continue;
        }
        if !inside {
            continue;
        }
        let Some(rest) = line.trim().strip_prefix("- `") else {
            continue;
        };
        let Some((places, reason)) = rest.split_once("`:") else {
            continue;
        };
        // One reason may cover several places: `a.py:1`, `a.py:7`.
        for place in places.split("`, `") {
            reasons.insert(place.trim().to_owned(), reason.trim().to_owned());
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_counts_the_listed_modules_and_names_each_missed_branch() {
        let value = json!({"files": {
            "/v/lib/python3.11/site-packages/jet_bridge_base/request.py": {
                "summary": {"num_branches": 4, "covered_branches": 3},
                "missing_branches": [[2, -1]],
            },
            "/v/lib/python3.11/site-packages/jet_bridge_base/not_listed.py": {
                "summary": {"num_branches": 100, "covered_branches": 0},
                "missing_branches": [],
            },
            "/v/lib/python3.11/site-packages/jet_bridge/router.py": {
                "summary": {"num_branches": 6, "covered_branches": 5},
                "missing_branches": [[3, 5]],
            },
        }});
        let modules = ["jet_bridge/router.py", "jet_bridge_base/request.py"];
        let report = Report::from_json(&value, &modules, |_| {
            vec!["a".to_owned(), "b".to_owned(), "if x:".to_owned()]
        })
        .unwrap();
        let misspelled = Report::from_json(&value, &["jet_bridge/nope.py"], |_| Vec::new());
        assert!(misspelled.unwrap_err().contains("jet_bridge/nope.py"));
        assert_eq!(report.totals(), (8, 10));
        assert_eq!(report.per_mille(), 800);
        let reasons = reasons(
            "## Branches no request reaches\n\n- `jet_bridge/router.py:3`: only MongoDB\n\n## Next\n- `jet_bridge_base/request.py:2`: not here\n",
        );
        let text = report.render(&reasons);
        assert!(
            text.contains("jet_bridge/router.py:3 -> 5  `if x:`\n      only MongoDB"),
            "{text}"
        );
        assert!(
            text.contains("jet_bridge_base/request.py:2 -> exit"),
            "{text}"
        );
        assert!(
            text.contains("1 branches not reached and not decided"),
            "{text}"
        );
        assert!(
            text.trim_end()
                .ends_with("engine coverage: 80.0% of 10 branches"),
            "{text}"
        );
    }

    #[test]
    fn docs_give_every_exclusion_and_fixed_condition_with_its_reason() {
        let docs = include_str!("../../../docs/fidelity.md");
        for (pattern, reason) in EXCLUDED.iter().chain(FIXED) {
            let pattern_line = format!("`{pattern}`");
            assert!(
                docs.contains(&pattern_line),
                "docs/fidelity.md lacks {pattern_line}"
            );
            let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                docs.contains(&reason),
                "docs/fidelity.md lacks the reason {reason:?}"
            );
        }
    }

    #[test]
    fn percentages_round_down() {
        assert_eq!(percent(8999, 10000), "89.9%");
        assert_eq!(percent(0, 0), "0.0%");
        assert_eq!(percent(1, 3), "33.3%");
    }

    #[test]
    fn one_reason_covers_several_places() {
        let r = reasons("## Branches no request reaches\n- `a.py:1`, `b.py:2`: MongoDB only\n");
        assert_eq!(r.get("a.py:1").map(String::as_str), Some("MongoDB only"));
        assert_eq!(r.get("b.py:2").map(String::as_str), Some("MongoDB only"));
    }
}
