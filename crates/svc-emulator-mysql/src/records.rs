//! Records of a MySQL resource: list, retrieve, create, update, delete, as the engine answers
//! them on MySQL (see [`super`]).
//!
//! # Pages
//!
//! Pages that never step over the rows before them, with the answers of `LIMIT n OFFSET m`:
//! MySQL's side of the engine layer's walks (`svc-engine/src/walks.rs`: the memo of anchors and
//! counts, and the seek condition, which both database servers share).
//!
//! - **Keys first.** A page at `OFFSET m` finds the keys of its rows with `OFFSET` over the
//!   keys alone, in a derived table (MySQL takes no `LIMIT` in an `IN` subquery), and joins
//!   the table to them: no value of a skipped row is converted or sent.
//! - **Anchors and counts.** After each page the sort key of its last row is kept, as the
//!   binary protocol read it (and binds it again: `driver::read_bind`, so it compares as the
//!   column's values do), with a token. A later page read under the same token seeks past the
//!   anchor (NULLs first ascending, last descending, as MySQL orders them). A filtered count of
//!   10 000 rows or more, of any page, is kept with a token too ([`Kept`]).
//!
//! ## Validity
//!
//! The token is InnoDB's transaction counter (the status variable `Innodb_max_trx_id`). It
//! moves when a transaction that writes starts its writes and again when it commits (its
//! serialisation number comes from the same counter); reads never move it. The page's
//! statements (its rows, then its count) run between two readings of the counter: when they
//! are equal, no writing transaction began or committed while they ran, so everything they
//! read is the data of that counter value, and two pages with the same counter value saw the
//! same committed rows (a transaction still open at both is invisible to both). Unequal, and
//! a page read from an anchor is read again from the keys and counted again, as two
//! statements of the engine would be. A kept count ([`Kept`], read by `Database::count` for page 1
//! and for a walk's pages alike) follows the same rule on its own: it is kept under the token
//! read before and after its `COUNT`, when they are equal, and answered only while a fresh
//! reading of the token is still that token. Only base tables of InnoDB have anchors and kept
//! counts: other engines' writes do not move the counter. A write anywhere on the server costs
//! the next page its seek and its kept count, never its answer.

use crate::dialect::{MARIADB_QUOTING, MYSQL_QUOTING, MyWhere, datetime_literal, group_key};
use crate::driver::{self, text_rows};
use crate::schema::{ACCESS_DENIED, MyField, MyKeys, MyModel, quote_ident, set_aside_triggers};
use crate::types::{
    MyKind, Offset, cell_number, cell_text, encodable, read_cell, serialized, typed_cell,
    unreadable_sum, unwritable_date_time,
};
use crate::{MyResource, message, server_code};
use mysql_async::{Conn, Row};
use svc_emulator_core::backend::pooled::ESTIMATE_FROM;
use svc_emulator_core::dialect::Dialect;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::group::{Quoting, group_label, group_statement};
use svc_emulator_core::flow::aggregate::SummaryRow;
use svc_emulator_core::flow::database::Database;
use svc_emulator_core::flow::driver::{Driver, DriverRow, Failure, Session};
use svc_emulator_core::flow::export::{Aside, SavedTable, Store, Suspended, only_owned_counters};
use svc_emulator_core::flow::records::Page;
use svc_emulator_core::flow::walks::{from_anchor, keep_anchor, page_select, read_page};
use svc_emulator_core::flow::write::Values;
use svc_engine::aggregate::{read_refused, zero_if_null};
use svc_engine::body::non_field;
use svc_engine::field_input::Internal;
use svc_engine::python::Py;
use svc_engine::python::json::py_json_dumps;
use svc_engine::python::text::unhexlify;
use svc_engine::records::{ModelMap, Records};
use svc_engine::table::{GroupColumns, Summary, Table, Written};
use svc_engine::walks::Walks;
use svc_engine::{AggregateFunc, EngineError, walks as shared};

/// MySQL's error code of a duplicate key.
const DUPLICATE_ENTRY: u16 = 1062;

/// MySQL's side of the record flows (`flow::read`).
impl Database for MyResource {
    /// `TIMEDIFF(NOW(), UTC_TIMESTAMP)` on the database, in whole seconds.
    const TIME_ZONE: Option<&'static str> =
        Some("SELECT CAST(TIME_TO_SEC(TIMEDIFF(NOW(), UTC_TIMESTAMP())) AS SIGNED)");

    fn bind(
        field: &MyField,
        value: &Internal,
        tz: Offset,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Ok(params.bind::<Self>(bind_param(field, value, tz)))
    }

    /// A pooled connection: `tz` is refused by the filters on MySQL.
    async fn connect(&self, _tz: Option<&str>) -> Result<Conn, EngineError> {
        self.conn().await
    }

    async fn reflect(&self, conn: &mut Conn) -> Result<ModelMap<MyModel>, EngineError> {
        crate::schema::load_schema(conn).await
    }

    /// A read's error is where the engine fails (`500`): strict mode answers `400` with
    /// MySQL's message.
    fn fault(&self, e: mysql_async::Error, failure: Failure<'_, MyModel>) -> EngineError {
        match failure {
            Failure::Read { lenient } => self.read_failure(e).unless_lenient(lenient),
            Failure::Write(model) => self.write_error(model, e),
            Failure::Query => driver::query_failed(self, e),
            Failure::Unexpected => self.unexpected(e),
        }
    }

    // MySQL's side of the writes (`flow::write`).
    /// The row's identity (see [`MyModel::identity`]): its cells are bound again as they were
    /// read to find the row (`Driver::cells`).
    fn writable(values: &Values<'_, MyField>) -> Result<(), EngineError> {
        not_writable(values)
    }

    const REFERENCES: &'static str = crate::schema::REFERENCES;
    const KEY_COLUMNS: &'static str = crate::schema::IDENTITY;
    const FIRST_COLUMN: &'static str = crate::schema::FIRST_COLUMN;

    // A list's pages and its count.
    // MySQL's side of a page walk (`flow::walks`): its keys found in a derived table, its anchors
    // in the driver's values, InnoDB's transaction counter as the token.

    /// MySQL's `LIMIT` and `OFFSET` are unsigned 64-bit numbers.
    const MAX_OFFSET: u64 = u64::MAX;

    /// A page past the first reads and converts only its own rows (see `svc-emulator-mysql/src/records.rs`).
    async fn page(
        &self,
        reader: &mut Conn,
        page: &Page<'_, Self>,
        out: &mut Records<'_, MyModel>,
    ) -> Result<Option<u64>, EngineError> {
        if let Some(seek) = seek_terms(page.model, page.terms).filter(|_| page.number > 1) {
            let count = self.walk_between_tokens(reader, page, &seek, out).await?;
            return Ok(Some(count));
        }
        let sql = page.offset_select();
        let mut sink = |row: &Row| out.push(&DriverRow::<Self>(row));
        self.read_rows(reader, &sql, &page.filter.params, page.lenient, &mut sink)
            .await?;
        Ok(None)
    }

    /// The engine's count: the `EXPLAIN SELECT COUNT(*)` estimate of an unfiltered table when
    /// it is at least 10 000 (its `rows` column), else `COUNT(*)`. A filtered count of 10 000
    /// rows or more is kept under InnoDB's transaction counter and read again only when the
    /// counter moved (`svc-emulator-mysql/src/records.rs`, `Kept`): a page asked again on the same data counts no
    /// row again.
    async fn count(
        &self,
        conn: &mut Conn,
        model: &MyModel,
        filter: &MyWhere,
        lenient: bool,
        walks: &Walks<Bind>,
    ) -> Result<u64, EngineError> {
        if filter.sql.is_empty() {
            let explain = format!("EXPLAIN SELECT COUNT(*) FROM {}", model.table_sql);
            let explain = text_rows(conn, &explain)
                .await
                .map_err(|e| self.unexpected(e))?;
            // The estimate is the `rows` column.
            let estimate = explain.first().and_then(|r| cell_number::<u64>(r, 8));
            if let Some(estimate) = estimate
                && estimate >= ESTIMATE_FROM
            {
                return Ok(estimate);
            }
        }
        let key = (!filter.sql.is_empty()).then(|| count_key(model, filter));
        let kept = match &key {
            Some(key) => self.kept_count(conn, model, key, walks).await,
            None => Kept::Nothing,
        };
        if let Kept::Count(n) = kept {
            return Ok(n);
        }
        let sql = ["SELECT COUNT(*) FROM ", &model.table_sql, &filter.sql].concat();
        let n = Self::first_row(conn, &sql, &filter.params, |row| cell_number(row, 0)).await;
        let n = n.map_err(|f| self.fault(f, Failure::Read { lenient }))?;
        let n = n.flatten().unwrap_or(0);
        if let Some(key) = key {
            self.keep_count(conn, (model, walks), key, kept, n).await;
        }
        Ok(n)
    }

    // An export, an import and a saved copy.

    type Keys = MyKeys;

    const KEYS_AFTER_COMMIT: bool = true;

    // InnoDB reads the rows an `INSERT ... SELECT` copies with shared locks, held to the
    // commit: the tables are copied as of one moment all the same.
    const BEGIN_SNAPSHOT: &'static str = "START TRANSACTION WITH CONSISTENT SNAPSHOT";

    async fn make_store(&self, conn: &mut Session<Self>, name: &str) -> Result<Store, EngineError> {
        let database = quote_ident(name);
        let conn = conn.conn();
        if let Err(e) = text_rows(conn, &format!("CREATE DATABASE {database}")).await {
            if !server_code(&e).is_some_and(|code| ACCESS_DENIED.contains(&code)) {
                return Err(self.unexpected(e));
            }
            let user = text_rows(conn, "SELECT CURRENT_USER()")
                .await
                .map_err(|e| self.unexpected(e))?;
            let user = user.first().and_then(|row| cell_text(row, 0));
            let user = user.unwrap_or_default();
            let (name, host) = user.rsplit_once('@').unwrap_or((&user, "%"));
            return Err(EngineError::Internal(format!(
                "the copy is kept in a database of its own, named {}..., and user {user} may \
                 not create one: grant it the privileges \
                 (GRANT ALL ON `svc\\_emulator\\_saved\\_%`.* TO '{name}'@'{host}') ({})",
                svc_emulator_core::flow::snapshot::STORE_PREFIX,
                message(&e)
            )));
        }
        let drop = format!("DROP DATABASE IF EXISTS {database}");
        let pool = self.pool.clone();
        Ok(Store::dropped_by(async move {
            if let Ok(mut conn) = pool.get_conn().await {
                let _ = text_rows(&mut conn, &drop).await;
            }
        }))
    }

    async fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<MyKeys, EngineError> {
        self.auto_increments(conn.conn(), tables).await
    }

    fn check_keys(keys: &MyKeys, tables: &[SavedTable]) -> Result<(), EngineError> {
        let named = keys.iter().map(|(named, _)| named.as_str());
        only_owned_counters("table", named, |n| tables.iter().any(|t| t.sql == n))
    }

    async fn put_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
        keys: &MyKeys,
    ) -> Result<(), EngineError> {
        // The table a counter names is one of the tables written, its name as the schema
        // reflects it and quotes it: a name in an export's file is compared, never written.
        Self::check_keys(keys, tables)?;
        let moves = keys.iter().filter_map(|(named, next)| {
            let table = tables.iter().find(|t| t.sql == *named)?;
            Some((&table.sql, *next))
        });
        let now = self.auto_increments(conn.conn(), tables).await?;
        for (table, next) in moves {
            // Each `ALTER TABLE` commits and takes its time: only the counters that moved.
            if now.iter().any(|(t, n)| t == table && *n == next) {
                continue;
            }
            self.run(
                conn,
                &format!("ALTER TABLE {table} AUTO_INCREMENT = {next}"),
            )
            .await?;
        }
        Ok(())
    }

    /// MySQL cannot turn a trigger off, and `DROP TRIGGER` commits: the saved tables' triggers
    /// are dropped before the transaction and made again after it, from `SHOW CREATE TRIGGER`,
    /// each in the `sql_mode` it was made in and in the order they act, so that a row put back
    /// is written once, not again by a trigger. Meanwhile other sessions' writes to those tables
    /// fire none.
    async fn set_aside(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<Aside, EngineError> {
        set_aside_triggers(self, conn, tables).await
    }

    async fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        _tables: &[SavedTable],
    ) -> Result<Suspended, EngineError> {
        self.run(
            conn,
            "SET @svc_emulator_checks = @@SESSION.foreign_key_checks, \
             @svc_emulator_mode = @@SESSION.sql_mode",
        )
        .await?;
        self.run(
            conn,
            "SET SESSION foreign_key_checks = 0, SESSION sql_mode = \
             CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')",
        )
        .await?;
        Ok(Suspended {
            still_checked: Vec::new(),
            undo: vec![
                "SET SESSION foreign_key_checks = @svc_emulator_checks, \
                 SESSION sql_mode = @svc_emulator_mode"
                    .to_owned(),
            ],
        })
    }

    // An aggregate and a group.
    // MySQL's side of an aggregate and a group (`flow::aggregate`).

    /// MariaDB's reserved words are SQLAlchemy's MariaDB dialect's.
    fn query_dialect(&self) -> (Quoting, &'static str) {
        let quoting = if self.mariadb {
            MARIADB_QUOTING
        } else {
            MYSQL_QUOTING
        };
        (quoting, Self::QUERY_NEVER)
    }

    fn summary_statement(
        model: &MyModel,
        summary: &Summary<'_, MyField>,
        where_sql: &str,
    ) -> Result<String, EngineError> {
        let GroupColumns { ref xs, y, func } = summary.columns;
        // A date-time field's serializer cannot write the number MySQL computes.
        if !summary.encoded()
            && matches!(func, AggregateFunc::Sum | AggregateFunc::Avg)
            && matches!(y.kind, MyKind::DateTime)
        {
            return Err(unwritable_date_time("_y_func", func, y, "a number, which"));
        }
        let mut select = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let (key, _) = group_key(x, summary.lookup(i))?;
            select.push(format!("{key} AS {}", group_label(i).replace('"', "`")));
        }
        select.push(format!("{}({}) AS y_func", func.as_str(), y.qualified));
        let labels: Vec<String> = (0..xs.len())
            .map(|i| group_label(i).replace('"', "`"))
            .collect();
        let table = &model.table_sql;
        Ok(group_statement(
            &select,
            &labels,
            table,
            where_sql,
            summary.limit,
        ))
    }

    fn summary_row(
        summary: &Summary<'_, MyField>,
        row: &Row,
        tz: Offset,
    ) -> Result<SummaryRow, EngineError> {
        let GroupColumns { ref xs, y, func } = summary.columns;
        let key = |(i, x): (usize, &&MyField)| match group_key(x, summary.lookup(i))? {
            (_, true) => encodable(&typed_cell(row, i, x), "_x_column", x),
            (_, false) => Ok(read_cell(row, i).encoded()),
        };
        let keys = xs.iter().enumerate().map(key).collect::<Result<_, _>>()?;
        // `sum`, `min` and `max` keep the column's type; `count` and `avg` are numbers.
        let typed = matches!(
            func,
            AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max
        );
        let v = if typed {
            typed_cell(row, xs.len(), y)
        } else {
            read_cell(row, xs.len())
        };
        unreadable_sum(y, func, &v)?;
        let v = zero_if_null(func, v);
        let value = match (summary.written, &v) {
            // A date-time Python has no date for is PyMySQL's text.
            (Written::Serialized, Py::Str(text)) if y.kind == MyKind::DateTime => {
                let what = format!("{text:?}, a date");
                return Err(unwritable_date_time("_y_column", func, y, &what));
            }
            (Written::Serialized, _) => serialized(func, y, &v, tz),
            (Written::Encoded, _) if typed => encodable(&v, "_y_column", y)?,
            (Written::Encoded, _) => v.encoded(),
        };
        Ok(SummaryRow { keys, value })
    }
}

impl MyResource {
    /// A database error of a write: a `400` with MySQL's message; a duplicate key names its
    /// column when the key is named after one, as the engine's pattern (`Duplicate entry '...'
    /// for key '...'`) does.
    pub(crate) fn write_error(&self, model: &MyModel, e: mysql_async::Error) -> EngineError {
        let Some(code) = server_code(&e) else {
            return self.unexpected(e);
        };
        let text = message(&e);
        if code == DUPLICATE_ENTRY
            && let Some(key) = text
                .rsplit_once("for key '")
                .map(|(_, rest)| rest.trim_end_matches('\''))
            && model.field(key).is_some()
        {
            return EngineError::duplicate_value(&text, key);
        }
        non_field(text)
    }

    /// A database error of a read: the engine re-raises it (`500`).
    fn read_failure(&self, e: mysql_async::Error) -> EngineError {
        match server_code(&e) {
            Some(_) => read_refused("MySQL", &message(&e)),
            None => self.unexpected(e),
        }
    }
}

/// A value the serializer made, as PyMySQL sends it (`tz`: the engine's default time zone, to
/// which an aware date-time is moved).
fn bind_param(field: &MyField, v: &Internal, tz: Offset) -> Bind {
    match v {
        // The engine's `BinaryField` reads hex (checked by [`not_writable`]).
        Internal::Str(s) if field.kind == MyKind::Binary => {
            Bind::Bytes(unhexlify(s).unwrap_or_default())
        }
        Internal::None => Bind::Null,
        Internal::Bool(b) => Bind::Int(i64::from(*b)),
        Internal::Int(i) => match (i.parse::<i64>(), i.parse::<u64>()) {
            (Ok(n), _) => Bind::Int(n),
            (_, Ok(n)) => Bind::UInt(n),
            _ => Bind::Text(i.clone()),
        },
        Internal::Float(f) => Bind::Float(*f),
        Internal::Str(s) => Bind::Text(s.clone()),
        // PyMySQL writes an aware value's wall time: the engine moves it to its zone first
        // only for a `DATETIME` (`prepare_datetime_timezone_naive`).
        Internal::DateTime(dt) if field.timestamp => Bind::Text(datetime_literal(dt)),
        Internal::DateTime(dt) => Bind::Text(datetime_literal(&dt.in_zone(tz))),
        Internal::Json(j) => Bind::Text(py_json_dumps(j)),
    }
}

/// Values the engine cannot write. Text for a blob: SQLAlchemy's `LargeBinary` cannot bind a
/// `str` (the engine's `400`, Python's message). For `BINARY`/`VARBINARY` the engine's
/// `BinaryField` reads hex; other text, and NaN or infinities (PyMySQL refuses them), make it
/// fail (`500`): `[decision: stricter]`, a `400` naming the field.
fn not_writable(values: &[(&MyField, Internal)]) -> Result<(), EngineError> {
    for (f, v) in values {
        if f.kind == MyKind::Blob && *v != Internal::None {
            return Err(non_field("string argument without an encoding".to_owned()));
        }
        if f.kind == MyKind::Binary
            && let Internal::Str(s) = v
            && unhexlify(s).is_none()
        {
            let why = format!(
                "Field {:?} takes bytes as hex (0a1b); the data engine fails (500) on {s:?}.",
                f.name
            );
            return Err(EngineError::stricter(&f.name, why));
        }
        if let Internal::Float(x) = v
            && !x.is_finite()
        {
            let why = format!(
                "The data engine cannot send {x} to MySQL for field {:?} (it fails with a 500).",
                f.name
            );
            return Err(EngineError::stricter(&f.name, why));
        }
    }
    Ok(())
}

/// Whether values of the kind read back from the binary protocol and bound again compare
/// exactly as the column's values do among themselves, so that one can be a sort key to seek
/// past. Not `DECIMAL` (a bound value compares as a double), `ENUM` (ordered by member
/// number, compared as text), `SET`, `BIT`, bytes, JSON, nor `DATETIME`/`TIMESTAMP` (a
/// `TIMESTAMP` is read in the session's zone, where an hour may repeat).
fn seekable(kind: MyKind) -> bool {
    matches!(
        kind,
        MyKind::Integer
            | MyKind::MediumInt
            | MyKind::Year
            | MyKind::Float
            | MyKind::Double
            | MyKind::Date
            | MyKind::Time
            | MyKind::String
    )
}

/// The terms of `terms` (field index, descending) up to the first that is the model's key,
/// when the order is total there and every one can be sought past; `None` otherwise.
pub(crate) fn seek_terms(model: &MyModel, terms: &[(usize, bool)]) -> Option<Vec<(usize, bool)>> {
    shared::seek_terms(model.unique_key(), model.pk, terms, |i| {
        model.fields.get(i).is_some_and(|f| seekable(f.kind))
    })
}

/// The statement that reads the token.
const TOKEN: &str = "SHOW GLOBAL STATUS LIKE 'Innodb_max_trx_id'";

impl MyResource {
    /// The token: InnoDB's transaction counter, for a base table of InnoDB (other engines'
    /// writes do not move it); `None` where there is none (then no anchor is kept or used).
    async fn token(&self, conn: &mut Conn, model: &MyModel) -> Option<String> {
        if !model.extra.0 {
            return None;
        }
        // Its rows are the variable's name and value.
        let rows = text_rows(conn, TOKEN).await.ok()?;
        rows.first().and_then(|row| cell_text(row, 1))
    }

    /// A page past the first of an order that reaches the unique key (`seek`), and its count: from
    /// the nearest anchor of the same walk when the data is still that of the anchor, else with
    /// `OFFSET` over the keys alone; the end of a full page is kept as an anchor. The page and
    /// its count (`Database::count`, which keeps a large one itself) are read between two readings
    /// of the token: when they differ, a page read from an anchor is read again.
    pub(crate) async fn walk_between_tokens(
        &self,
        conn: &mut Conn,
        page: &Page<'_, Self>,
        seek: &[(usize, bool)],
        out: &mut Records<'_, MyModel>,
    ) -> Result<u64, EngineError> {
        let (model, filter, offset, lenient) = (page.model, page.filter, page.offset, page.lenient);
        let before = self.token(conn, model).await;
        let walk_key = page.walk_key();
        let anchor = before.as_ref().and_then(|token| {
            page.walks
                .anchor(&walk_key, offset)
                .filter(|(_, a)| &a.token == token)
        });
        let extra = Self::sort_key_columns(model, seek);
        // The sort key is read after the columns.
        let at = model.columns().len();
        let cells: Vec<usize> = (at..at + seek.len()).collect();
        let from_offset = page_select(page, &extra, &filter.sql, offset);
        let end = match &anchor {
            Some(anchor) => {
                let (sql, params) = from_anchor(page, seek, &extra, anchor);
                read_page(self, conn, (&sql, &params), page, out, &cells).await?
            }
            None => {
                read_page(
                    self,
                    conn,
                    (&from_offset, &filter.params),
                    page,
                    out,
                    &cells,
                )
                .await?
            }
        };
        // The count keeps itself (`Database::count`, [`Kept`]): it is read between the page's two
        // readings of the token, so a write it missed moves the token.
        let mut count = self.count(conn, model, filter, lenient, page.walks).await?;
        let after = match before {
            Some(_) => self.token(conn, model).await,
            None => None,
        };
        match (before, after) {
            (Some(before), Some(after)) if before == after => {
                keep_anchor(&walk_key, page, end, before);
            }
            _ if anchor.is_some() => {
                // A write committed while the page was read: the anchor may be stale, so the
                // page and its count are read afresh, as the engine reads them.
                out.clear();
                read_page(self, conn, (&from_offset, &filter.params), page, out, &[]).await?;
                count = self.count(conn, model, filter, lenient, page.walks).await?;
            }
            _ => {}
        }
        Ok(count)
    }
}

/// The filtered counts that are kept: at least this many rows. Keeping one reads the token
/// once a request while the data stays (`SHOW GLOBAL STATUS`), and twice more after each write:
/// at 10k rows, page 1 filtered to 1,111 of them and counted each time cost what a page 1 at 1M
/// that reads the token instead costs (1.09 ms and 1.08 ms, docs/performance.md, section 11).
/// Below 10 000 rows, as in a test suite's tables, which write between two lists, a count is
/// read each time, as the engine reads it: no token is read for it.
const KEEP_COUNTS_FROM: u64 = 10_000;

/// What the memo holds of a filtered count ([`MyResource::kept_count`]).
#[derive(Debug)]
pub(crate) enum Kept {
    /// The count, kept under the token that still is the token: the answer.
    Count(u64),
    /// A large count kept under another token, or marked under none (`""`, which no token
    /// is): counted again under this token, and kept under it when the token has not moved by
    /// the end of the count.
    Since(String),
    /// Nothing worth keeping (small, never counted, no token: not InnoDB).
    Nothing,
}

impl MyResource {
    /// What the memo holds of the filtered count of `model` whose memo key is `key`
    /// ([`count_key`]). The token is read only for a count worth keeping.
    pub(crate) async fn kept_count(
        &self,
        conn: &mut Conn,
        model: &MyModel,
        key: &[u8],
        walks: &Walks<Bind>,
    ) -> Kept {
        let Some((token, n)) = walks.count(key).filter(|&(_, n)| n >= KEEP_COUNTS_FROM) else {
            return Kept::Nothing;
        };
        match self.token(conn, model).await {
            Some(now) if now == token => Kept::Count(n),
            Some(now) => Kept::Since(now),
            None => Kept::Nothing,
        }
    }

    /// Keeps `n`, the filtered count of `model` (memo key `key`) read after
    /// [`kept_count`](Self::kept_count) said `kept`: under the token when it has not moved
    /// since, else nothing; the first large one is marked under no token, so that the next is
    /// read between two readings of the token (see "Validity" above).
    pub(crate) async fn keep_count(
        &self,
        conn: &mut Conn,
        (model, walks): (&MyModel, &Walks<Bind>),
        key: Vec<u8>,
        kept: Kept,
        n: u64,
    ) {
        if n < KEEP_COUNTS_FROM {
            return;
        }
        match kept {
            Kept::Since(before) => {
                if self.token(conn, model).await.as_ref() == Some(&before) {
                    walks.keep_count(key, before, n);
                }
            }
            Kept::Nothing if model.extra.0 => walks.keep_count(key, String::new(), n),
            Kept::Count(_) | Kept::Nothing => {}
        }
    }
}

/// The memo's key of the count of `filter`'s rows of `model`.
pub(crate) fn count_key(model: &MyModel, filter: &MyWhere) -> Vec<u8> {
    let sql = ["COUNT ", &model.table_sql, &filter.sql].concat();
    filter.params.memo_key(&sql)
}

#[cfg(test)]
mod pages_tests {
    use super::*;
    use crate::schema::{InnoDb, MyField};
    use svc_engine::table::Reflected;

    #[test]
    fn seeks_follow_mysqls_null_order_and_bind_each_place() {
        let field = |name: &str| MyField {
            name: name.to_owned(),
            kind: MyKind::Integer,
            engine: MyKind::Integer.engine_type(),
            has_default: false,
            not_null: false,
            primary_key: false,
            autoincrement: false,
            generated: false,
            sql: format!("`{name}`"),
            extra: crate::schema::MyColumn {
                members: Vec::new(),
                qualified: format!("`t`.`{name}`"),
                timestamp: false,
            },
        };
        let fields = vec![field("age"), field("id")];
        let select = |f: &MyField| f.qualified.clone();
        let model = MyModel::new(
            "t".to_owned(),
            fields,
            &[],
            Reflected {
                sql: "`t`".to_owned(),
                holds_rows: true,
                related: false,
                extra: InnoDb(true),
            },
            select,
        );
        let model = model.unwrap();
        let seek_condition = <MyResource as Database>::seek_condition;
        let mut params = Binds::default();
        let sql = seek_condition(
            &model,
            &[(0, false), (1, true)],
            &[Some(Bind::Int(30)), Some(Bind::Int(7))],
            &mut params,
        );
        assert_eq!(
            sql,
            "(`t`.`age` > ? OR (`t`.`age` = ? AND ((`t`.`id` < ?))))"
        );
        assert_eq!(params.0, [Bind::Int(30), Bind::Int(30), Bind::Int(7)]);
        let mut params = Binds::default();
        let sql = seek_condition(
            &model,
            &[(0, true), (1, true)],
            &[Some(Bind::Int(30)), Some(Bind::Int(7))],
            &mut params,
        );
        assert_eq!(
            sql,
            "(`t`.`age` < ? OR `t`.`age` IS NULL OR (`t`.`age` = ? AND ((`t`.`id` < ?))))"
        );
    }

    #[test]
    fn walk_keys_tell_a_number_from_its_text() {
        let key = |value: Bind| Binds(vec![value]).memo_key("q");
        let a = key(Bind::Int(1));
        let b = key(Bind::Text("1".to_owned()));
        let c = key(Bind::Null);
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
