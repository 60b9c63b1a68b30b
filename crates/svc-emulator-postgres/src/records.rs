//! Records of a PostgreSQL resource: list, retrieve, create, update, delete, as the engine
//! answers them on PostgreSQL (see [`super`]).
//!
//! # Pages
//!
//! Pages that never step over the rows before them, with the answers of `LIMIT n OFFSET m`:
//! PostgreSQL's side of the engine layer's walks (`svc-engine/src/walks.rs`, the memo and the seek
//! condition both backends share), with the statement's snapshot as the token.
//!
//! The engine pages with `OFFSET`: PostgreSQL reads, and converts to text, every row before
//! the page, so a walk through a table page by page costs the square of its size. Two things
//! change that here, both only where the order is total (it reaches the model's primary key,
//! a single column: unique and never NULL), so that the rows of a page are exactly the ones
//! `OFFSET` gives:
//!
//! - **Keys first.** A page at `OFFSET m` finds the keys of its rows with `OFFSET` over the
//!   keys alone (`WHERE key = ANY(ARRAY(SELECT key ... LIMIT n OFFSET m))`), then reads and
//!   converts only those rows: no value of a skipped row is converted.
//! - **Counts.** A filtered count is kept with the snapshot it was made in; the count
//!   statement answers it again when its own snapshot is the same, and counts otherwise
//!   (`CASE WHEN snapshot = kept THEN kept_count ELSE (SELECT count(*) ...) END`: PostgreSQL
//!   runs the subquery only when it is needed).
//! - **Anchors.** After each page the sort key of its last row is remembered (its *anchor*),
//!   with the snapshot of the statement that read it (`txid_current_snapshot()`). A later page
//!   of the same selection and order starts from the nearest anchor at or before it, with a
//!   `WHERE` that seeks past that sort key in PostgreSQL's own order (NULLs last ascending,
//!   first descending; the column's collation on both sides), and steps over only the rows
//!   between.
//!
//! ## Validity
//!
//! An anchor says where row `at` of the selection was in one snapshot of the database (and a
//! count how many rows it had). Two
//! snapshots with the same text (`xmin:xmax:running transactions`) see the same committed
//! data: no transaction that writes can commit, abort or even begin its writes without moving
//! `xmax` or the list of running transactions. A page that starts from an anchor reads the
//! snapshot of its own statement beside its rows; a different snapshot, or no row to show it,
//! and the page is read again from the keys, as above. So a write anywhere (any database of
//! the server) costs the next page a second statement, never a different answer.

use crate::dialect::{
    Literal, PgWhere, cast, datetime_literal, group_key, serialized, type_of, unencodable,
};
use crate::driver::run;
use crate::schema::{
    CHECKED_REFERENCES, PgField, PgKeys, PgModel, REFERENCES, SET_SEQUENCES, TRIGGERS, by_ctid,
    names, table,
};
use crate::types::{Offset, PgKind, read_held};
use crate::{PgResource, driver, message};
use deadpool_postgres::Object;
use std::collections::HashMap;
use svc_emulator_core::backend::pooled::ESTIMATE_FROM;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::group::{group_label, group_statement};
use svc_emulator_core::dialect::lookup::Cmp;
use svc_emulator_core::dialect::seek::Nulls;
use svc_emulator_core::dialect::{Dialect, quote_ident};
use svc_emulator_core::flow::aggregate::SummaryRow;
use svc_emulator_core::flow::database::Database;
use svc_emulator_core::flow::delete::delete_locked;
use svc_emulator_core::flow::driver::{Driver, DriverRow, Failure, Session};
use svc_emulator_core::flow::export::{SavedTable, Store, Suspended, only_owned_counters};
use svc_emulator_core::flow::records::Page;
use svc_emulator_core::flow::walks::{from_anchor, keep_anchor, page_select, sort_key_of};
use svc_emulator_core::flow::write::{ReadBack, Values, insert_statement, set_list, update_sql};
use svc_engine::aggregate::{fails, not_json_refused, read_refused, zero_if_null};
use svc_engine::body::{non_field, query_failed};
use svc_engine::field_input::Internal;
use svc_engine::python::floats::py_float_repr;
use svc_engine::python::json::{PyJson, py_json_dumps};
use svc_engine::python::text::{py_text, py_uuid};
use svc_engine::records::{ModelMap, Records, record_json};
use svc_engine::table::{GroupColumns, Summary, Table, Written};
use svc_engine::walks::Walks;
use svc_engine::{AggregateFunc, EngineError, walks as shared};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

/// PostgreSQL's side of the record flows (`flow::read`).
impl Database for PgResource {
    /// Read on either pool: kept prepared where the pool keeps its statements, and prepared
    /// again after a query's session ends with `DISCARD ALL` (`Driver::clean`).
    const TIME_ZONE: Option<&'static str> = Some("SELECT EXTRACT(TIMEZONE FROM now())::int4");

    /// A value as psycopg2 writes its literal, cast to the column's type (PostgreSQL stores
    /// an aware date-time with its offset: `tz` is not needed).
    fn bind(
        field: &PgField,
        value: &Internal,
        _tz: i32,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Ok(bind_value(field, value, params))
    }

    /// An integer key is compared as psycopg2 writes a Python int, a `bigint` literal (or a
    /// `numeric` one past 64 bits), never cast to the column's type: a key past an `integer`
    /// column's range finds no record (`404`) instead of failing.
    fn bind_key(pk: &PgField, key: &Internal, params: &mut Binds) -> Result<String, EngineError> {
        Ok(match key {
            Internal::Int(i) if pk.kind == PgKind::Integer => {
                let fits = i.parse::<i64>().is_ok();
                cast(
                    params,
                    Some(i.clone()),
                    if fits { "bigint" } else { "numeric" },
                )
            }
            _ => bind_value(pk, key, params),
        })
    }

    /// Qualified: the select list reads each column as text under its own name, and a bare
    /// name in `ORDER BY` would sort by that text.
    fn sort_column(model: &PgModel, field: &PgField) -> String {
        format!("{}.{}", model.table_sql, field.sql)
    }

    async fn connect(&self, tz: Option<&str>) -> Result<Object, EngineError> {
        self.client_in(tz).await
    }

    async fn reflect(&self, conn: &mut Object) -> Result<ModelMap<PgModel>, EngineError> {
        let models = crate::schema::load_schema(conn).await?;
        // Statements prepared for the old schema: prepared again when next used.
        self.pool.manager().statement_caches.clear();
        Ok(models)
    }

    /// A read's error (a value PostgreSQL cannot compare, an operator the column's type lacks)
    /// is where the engine fails (`500`): strict mode answers `400` with PostgreSQL's message.
    fn fault(&self, e: tokio_postgres::Error, failure: Failure<'_, PgModel>) -> EngineError {
        match failure {
            Failure::Read { lenient } => self.read_failure(e).unless_lenient(lenient),
            Failure::Write(model) => self.write_error(model, e),
            Failure::Query => driver::query_failed(self, e),
            Failure::Unexpected => self.unexpected(e),
        }
    }

    // PostgreSQL's side of the writes (`flow::write`). A locked row is named by its `ctid`, since
    // a key of several columns names a row by all of them and the URL gives the first one only:
    // the locked row is `[Bind::Text(ctid)]`, the cells of `lock_select`.

    /// Where the row is stored: a key of several columns names a row by all of them, and the
    /// URL gives the first one only.
    fn lock_select(_model: &PgModel) -> String {
        "ctid::text".to_owned()
    }

    fn writable(values: &Values<'_, PgField>) -> Result<(), EngineError> {
        not_iterable(values)
    }

    fn at_locked(_model: &PgModel, locked: &[Bind], params: &mut Binds) -> String {
        format!("ctid = {}::tid", Self::bind_text(ctid(locked), params))
    }

    /// One statement: `UPDATE ... RETURNING` the row (a `SELECT` when nothing is set).
    async fn update_locked(
        &self,
        tx: &mut Session<Self>,
        model: &PgModel,
        values: &Values<'_, PgField>,
        locked: Vec<Bind>,
        tz: i32,
    ) -> Result<ReadBack, EngineError> {
        let mut params = Binds::default();
        let sets = set_list::<Self>(values, tz, &mut params)?;
        let at_row = Self::at_locked(model, &locked, &mut params);
        let (table, list) = (&model.table_sql, &model.select_list);
        let sql = if values.is_empty() {
            format!("SELECT {list}, 1 FROM {table} WHERE {at_row}")
        } else {
            let at = at_identity(model, &at_row);
            let found = refreshed(model, values, &mut params);
            let update = update_sql::<Self>(model, &sets, &at);
            format!("{update} RETURNING {list}, {found}")
        };
        let rows = driver::rows(tx.conn(), &sql, &params).await;
        let rows = rows.map_err(|e| self.write_error(model, e))?;
        if !values.is_empty() && rows.len() > 1 {
            // Rows that share a promoted key: the ORM's flush expected to update one row and
            // matched several, which the engine answers `400 Query failed` (nothing written:
            // the transaction rolls back when dropped).
            return Err(query_failed());
        }
        if !values.is_empty() && key_set_to_null(model, values) {
            // Written, but the ORM cannot name the record after its flush (a NULL identity):
            // the engine rolls back (`400 Query failed`).
            return Err(query_failed());
        }
        let row = rows.first().ok_or(EngineError::RecordNotFound)?;
        let found = Self::text(row, model.fields.len()).as_deref() == Some("1");
        Ok(ReadBack::of(
            model,
            found.then(|| record_json(model, &DriverRow::<Self>(row), tz)),
        ))
    }

    const REFERENCES: &'static str = REFERENCES;
    const KEY_COLUMNS: &'static str = crate::schema::IDENTITY;
    const FIRST_COLUMN: &'static str = crate::schema::FIRST_COLUMN;

    async fn delete_locked(
        &self,
        tx: &mut Session<Self>,
        model: &PgModel,
        locked: Vec<Bind>,
    ) -> Result<(), EngineError> {
        let at = by_ctid();
        let where_sql = at_identity(model, &at.condition);
        let row = vec![Bind::Text(ctid(&locked))];
        delete_locked(self, tx, model, &table(model), &at, row, &where_sql).await
    }

    /// One statement: `INSERT ... RETURNING` the row, with whether the engine's ORM finds it
    /// again by the key values it was given (`refreshed`); a serial key it was not given
    /// it reads from the `RETURNING`, which finds the row.
    async fn insert(
        &self,
        tx: &mut Session<Self>,
        model: &PgModel,
        values: &Values<'_, PgField>,
        tz: i32,
    ) -> Result<ReadBack, EngineError> {
        let pk = model.pk_field();
        let pk_given = values.iter().any(|(f, _)| f.primary_key);
        let mut params = Binds::default();
        let (insert, _) = insert_statement::<Self>(model, values, tz, &mut params)?;
        let found = refreshed(model, values, &mut params);
        let sql = format!("{insert} RETURNING {}, {found}", model.select_list);
        if pk.autoincrement && pk_given {
            // A key given for a serial column: the engine sets the sequence to the largest key
            // *before* its ORM flushes the INSERT (its `setval` runs first), so the sequence
            // does not account for the new key. The largest key must count every key handed
            // out: the table is locked against other writers first (inserts in flight finish,
            // new ones wait for this one), so no keyless create of another caller gets a key
            // that a sequence moved back below uncommitted rows hands out again.
            let lock = format!("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", model.table_sql);
            let lock = tx.execute_one(&lock).await;
            lock.map_err(|e| self.write_error(model, e))?;
            let resync = format!(
                "SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence($1::text, $2::text), \
                 max({})) FROM {}",
                pk.sql, model.table_sql
            );
            let names = Binds(vec![
                Bind::Text(model.table_sql.clone()),
                Bind::Text(pk.name.clone()),
            ]);
            let resync = driver::rows(tx.conn(), &resync, &names).await;
            resync.map_err(|e| self.write_error(model, e))?;
        }
        if let Some((check, check_params)) = values_read_first(values) {
            let read = driver::rows(tx.conn(), &check, &check_params).await;
            read.map_err(|e| self.write_error(model, e))?;
        }
        // Prepared for this run alone: PostgreSQL plans it with its values, and reads the text
        // of a value of a type whose input never changes as it plans, before the key's
        // `nextval`, as it reads the engine's literals (a statement kept prepared may be
        // planned once for any values, which reads them as each row is made).
        let rows = run(tx.conn(), None, &sql, &params).await;
        let row = self.one_row(rows.map_err(|e| self.write_error(model, e))?)?;
        let found = Self::text(&row, model.fields.len()).as_deref() == Some("1");
        Ok(ReadBack::of(
            model,
            found.then(|| record_json(model, &DriverRow::<Self>(&row), tz)),
        ))
    }

    // A list's pages and its count.
    // PostgreSQL's side of a page walk (`flow::walks`): its keys found by `= ANY(ARRAY(...))`, its
    // anchors as text, the snapshot as the token (read beside the page's rows, `svc-emulator-postgres/src/records.rs`).

    /// A page reads and converts only its own rows (see `svc-emulator-postgres/src/records.rs`). The count, when
    /// it is sure to be needed (any page but the first) or cheap (the catalog's estimate, or a
    /// count of a table too small to have one), goes with the page: both statements are sent
    /// before either answer is awaited.
    async fn page(
        &self,
        reader: &mut Object,
        page: &Page<'_, Self>,
        out: &mut Records<'_, PgModel>,
    ) -> Result<Option<u64>, EngineError> {
        let client = &*reader;
        let (rows, count) = if page.number > 1 || page.filter.sql.is_empty() {
            let (rows, count) = futures_util::future::try_join(
                self.page_rows(client, page),
                self.count_rows(client, page.model, page.filter, page.lenient, page.walks),
            )
            .await?;
            (rows, Some(count))
        } else {
            (self.page_rows(client, page).await?, None)
        };
        rows.iter()
            .for_each(|row| out.push(&DriverRow::<Self>(row)));
        Ok(count)
    }

    async fn count(
        &self,
        reader: &mut Object,
        model: &PgModel,
        filter: &PgWhere,
        lenient: bool,
        walks: &Walks<Bind>,
    ) -> Result<u64, EngineError> {
        self.count_rows(reader, model, filter, lenient, walks).await
    }

    /// Each term's column as text.
    fn sort_key_columns(model: &PgModel, terms: &[(usize, bool)]) -> String {
        terms
            .iter()
            .map(|&(i, _)| format!(", ({})::text", model.fields[i].sql))
            .collect()
    }

    /// Each value bound once, cast to its column's type. PostgreSQL orders NULLs after every
    /// other value, so they come last ascending and first descending.
    fn seek_condition(
        model: &PgModel,
        terms: &[(usize, bool)],
        key: &[Option<Bind>],
        params: &mut Binds,
    ) -> String {
        let fields: Vec<&PgField> = terms.iter().map(|&(i, _)| &model.fields[i]).collect();
        let columns: Vec<(&str, bool)> = fields
            .iter()
            .zip(terms)
            .map(|(f, &(_, desc))| (f.sql.as_str(), desc))
            .collect();
        let mut bound: HashMap<usize, String> = HashMap::new();
        let mut bind = |i: usize| {
            bound
                .entry(i)
                .or_insert_with(|| cast(params, key_text(&key[i]), &fields[i].cast))
                .clone()
        };
        svc_emulator_core::dialect::seek::seek_condition(&columns, key, Nulls::Largest, &mut bind)
    }

    /// The rows skipped are skipped by their keys alone, which the page's rows are then read
    /// by: `key = ANY(ARRAY(SELECT key ... LIMIT n OFFSET skip))` (the key is unique:
    /// `seek_terms`).
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        let model = page.model;
        let key = &model.pk_field().sql;
        format!(
            "SELECT {list}{extra} FROM {table} WHERE {key} = ANY(ARRAY(SELECT {key} FROM \
             {table}{where_sql}{order} LIMIT {per_page} OFFSET {skip})){order}",
            list = model.select_list,
            table = model.table_sql,
            order = page.order,
            per_page = page.per_page,
        )
    }

    // An export, an import and a saved copy.

    type Keys = PgKeys;

    const OVERRIDING: &'static str = " OVERRIDING SYSTEM VALUE";

    const CYCLE_HINT: &'static str = "make one of those foreign keys DEFERRABLE (ALTER TABLE ... \
        ALTER CONSTRAINT ... DEFERRABLE), or connect as a role that may set \
        session_replication_role (a superuser, or GRANT SET ON PARAMETER \
        session_replication_role TO the role)";

    async fn make_store(&self, conn: &mut Session<Self>, name: &str) -> Result<Store, EngineError> {
        let schema = quote_ident(name);
        if let Err(e) = conn.execute_one(&format!("CREATE SCHEMA {schema}")).await {
            if e.code() != Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                return Err(self.unexpected(e));
            }
            let who = "SELECT current_user::text, current_database()::text";
            let who = driver::rows(conn.conn(), who, &Binds::default()).await;
            let who = self.one_row(who.map_err(|e| self.unexpected(e))?)?;
            let (role, database): (String, String) = (who.get(0), who.get(1));
            return Err(EngineError::Internal(format!(
                "the copy is kept in a schema of its own, and role {role} may not create one in \
                 database {database}: grant it the privilege (GRANT CREATE ON DATABASE {} TO \
                 {}) ({})",
                quote_ident(&database),
                quote_ident(&role),
                message(&e).trim_end()
            )));
        }
        let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
        let pool = self.pool.clone();
        Ok(Store::dropped_by(async move {
            if let Ok(mut client) = pool.get().await {
                let _ = PgResource::execute_one(&mut client, &drop).await;
            }
        }))
    }

    async fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<PgKeys, EngineError> {
        let sequences = self.sequences(conn, tables).await?;
        if sequences.is_empty() {
            return Ok(Vec::new());
        }
        // One statement reads them all; each is a relation of its own.
        let reads: Vec<String> = sequences
            .iter()
            .enumerate()
            .map(|(i, s)| format!("SELECT {i}, last_value, is_called FROM {s}"))
            .collect();
        let read = format!("{} ORDER BY 1", reads.join(" UNION ALL "));
        let rows = driver::rows(conn.conn(), &read, &Binds::default()).await;
        let rows = rows.map_err(|e| self.unexpected(e))?;
        Ok(sequences
            .into_iter()
            .zip(rows.iter())
            .map(|(s, r)| (s, r.get(1), r.get(2)))
            .collect())
    }

    /// `written`: the tables the restore or import writes, whose sequences alone may move.
    async fn put_keys(
        &self,
        conn: &mut Session<Self>,
        written: &[SavedTable],
        keys: &PgKeys,
    ) -> Result<(), EngineError> {
        // What would fail at the commit fails here, before the sequences move; and no table
        // keeps checks pending, which the triggers' `ALTER TABLE` after this would refuse.
        self.run(conn, "SET CONSTRAINTS ALL IMMEDIATE").await?;
        if keys.is_empty() {
            return Ok(());
        }
        // Only the sequences of the tables written move: a name in an export's file is
        // compared with theirs, never cast to a relation of its own choosing.
        let owned = self.sequences(conn, written).await?;
        let named = keys.iter().map(|k| k.0.as_str());
        only_owned_counters("sequence", named, |n| owned.iter().any(|o| o == n))?;
        let sequences = Bind::Texts(keys.iter().map(|k| k.0.clone()).collect());
        let values = Bind::Ints(keys.iter().map(|k| k.1).collect());
        let called = Bind::Bools(keys.iter().map(|k| k.2).collect());
        let set = Binds(vec![sequences, values, called]);
        let set = driver::rows(conn.conn(), SET_SEQUENCES, &set).await;
        set.map_err(|e| self.unexpected(e))?;
        Ok(())
    }

    async fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<Suspended, EngineError> {
        self.run(conn, "SAVEPOINT svc_emulator_checks").await?;
        let replica = conn
            .execute_one("SET LOCAL session_replication_role = replica")
            .await
            .is_ok();
        let (firing, still_checked) = if replica {
            (["A", "R"], Vec::new())
        } else {
            // Refused (not a superuser): the transaction goes on as before it was asked.
            for statement in [
                "ROLLBACK TO SAVEPOINT svc_emulator_checks",
                "SET CONSTRAINTS ALL DEFERRED",
            ] {
                self.run(conn, statement).await?;
            }
            let tables = Binds(vec![names(tables)]);
            let references = driver::rows(conn.conn(), CHECKED_REFERENCES, &tables).await;
            let references = references.map_err(|e| self.unexpected(e))?;
            let still_checked = references.iter().map(|r| (r.get(0), r.get(1))).collect();
            (["O", "A"], still_checked)
        };
        let firing = Bind::Texts(firing.map(str::to_owned).to_vec());
        let tables_firing = Binds(vec![names(tables), firing]);
        let triggers = driver::rows(conn.conn(), TRIGGERS, &tables_firing).await;
        let triggers = triggers.map_err(|e| self.unexpected(e))?;
        let mut disable = Vec::new();
        let mut undo = Vec::new();
        for row in &triggers {
            let (table, trigger, enabled): (String, String, String) =
                (row.get(0), row.get(1), row.get(2));
            disable.push(format!("ALTER TABLE {table} DISABLE TRIGGER {trigger}"));
            let how = match enabled.as_str() {
                "A" => "ALWAYS ",
                "R" => "REPLICA ",
                _ => "",
            };
            undo.push(format!("ALTER TABLE {table} ENABLE {how}TRIGGER {trigger}"));
        }
        for statement in &disable {
            self.run(conn, statement).await?;
        }
        Ok(Suspended {
            still_checked,
            undo,
        })
    }

    /// One `TRUNCATE` of them all: the foreign keys among them need no order.
    async fn empty(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<(), EngineError> {
        if tables.is_empty() {
            return Ok(());
        }
        let list: Vec<&str> = tables.iter().map(|t| t.sql.as_str()).collect();
        let truncate = format!("TRUNCATE TABLE {}", list.join(", "));
        match conn.execute_one(&truncate).await {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => {
                Err(EngineError::Internal(format!(
                    "{}: the saved tables are emptied with TRUNCATE, which needs that privilege \
                     on each (GRANT TRUNCATE ON ALL TABLES IN SCHEMA ... TO the role)",
                    message(&e).trim_end()
                )))
            }
            Err(e) => Err(self.unexpected(e)),
        }
    }

    // An aggregate and a group.
    // PostgreSQL's side of an aggregate and a group (`flow::aggregate`).

    /// The engine's statement, with each value also read as text with its type. `min` and
    /// `max` keep the column's type, read as its kind reads it (`char(n)` with its padding,
    /// arrays as JSON); other results are numbers or intervals.
    fn summary_statement(
        model: &PgModel,
        summary: &Summary<'_, PgField>,
        where_sql: &str,
    ) -> Result<String, EngineError> {
        let GroupColumns { ref xs, y, func } = summary.columns;
        // A serializer writes what the encoder cannot.
        unencodable(xs, summary.encoded().then_some(y), func)?;
        let keys = xs
            .iter()
            .enumerate()
            .map(|(i, x)| group_key(x, summary.lookup(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut inner = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            inner.push(format!("{key} AS {}", group_label(i)));
        }
        inner.push(format!("{}({}) AS y_func", func.as_str(), y.sql));
        let labels: Vec<String> = (0..keys.len()).map(group_label).collect();
        let mut outer = Vec::new();
        for (i, label) in labels.iter().enumerate() {
            // A date bucket is a date-time, read as text; a plain key as its column's kind.
            let text = if keys[i] == xs[i].sql {
                xs[i].kind.text_of(&format!("q.{label}"))
            } else {
                format!("q.{label}::text")
            };
            outer.push(format!("{text}, {}", type_of(&format!("q.{label}"))));
        }
        let y_text = match func {
            AggregateFunc::Min | AggregateFunc::Max => y.kind.text_of("q.y_func"),
            _ => "q.y_func::text".to_owned(),
        };
        outer.push(format!("{y_text}, {}", type_of("q.y_func")));
        let table = &model.table_sql;
        Ok(format!(
            "SELECT {} FROM ({}) AS q",
            outer.join(", "),
            group_statement(&inner, &labels, table, where_sql, summary.limit)
        ))
    }

    fn summary_row(
        summary: &Summary<'_, PgField>,
        row: &Row,
        tz: Offset,
    ) -> Result<SummaryRow, EngineError> {
        let GroupColumns { ref xs, y, func } = summary.columns;
        let mut keys = Vec::with_capacity(xs.len());
        for (i, x) in xs.iter().enumerate() {
            let v = read_held(
                &row.get::<_, String>(2 * i + 1),
                row.get(2 * i),
                "_x_column",
                &x.name,
            )?;
            if v.is_not_json() {
                return Err(not_json_refused("_x_column", &x.name));
            }
            let Some(json) = v.encodable() else {
                return Err(fails(
                    "_x_column",
                    format!(
                        "Cannot group by the bytea field {:?}: a value is not UTF-8 text, which \
                         the data engine's JSON encoder fails on (500).",
                        x.name
                    ),
                ));
            };
            keys.push(json);
        }
        let at = 2 * xs.len();
        let held = read_held(
            &row.get::<_, String>(at + 1),
            row.get(at),
            "_y_column",
            &y.name,
        );
        let v = zero_if_null(func, held?);
        let value = match summary.written {
            Written::Serialized => serialized(func, y, &v, tz),
            Written::Encoded if v.is_not_json() => {
                return Err(not_json_refused("_y_column", &y.name));
            }
            Written::Encoded => v.encoded(),
        };
        Ok(SummaryRow { keys, value })
    }
}

/// Whether the engine's ORM finds a written row again, as a `CASE` of the row's values: `1`
/// where each key column given in `values` equals the value given, bound as psycopg2 writes
/// the ORM's key when it reads the record back ([`Literal`]: typed by the Python value, not
/// cast to the column, whose type may have stored another value: a `timestamp(0)` rounds
/// fractional seconds, a `numeric(10,2)` a third decimal). `1` when no key column is given.
fn refreshed(model: &PgModel, values: &Values<'_, PgField>, params: &mut Binds) -> String {
    let equal: Vec<String> = model
        .identity
        .iter()
        .filter_map(|&i| {
            let field = &model.fields[i];
            let (_, value) = values.iter().find(|(f, _)| f.name == field.name)?;
            Some(key_literal(value)?.compare(Cmp::Eq, params, field))
        })
        .collect();
    if equal.is_empty() {
        "1".to_owned()
    } else {
        format!("CASE WHEN {} THEN 1 ELSE 0 END", equal.join(" AND "))
    }
}

/// Whether `values` set every column of the model's identity to NULL (a promoted key: a
/// declared one is `NOT NULL`).
fn key_set_to_null(model: &PgModel, values: &Values<'_, PgField>) -> bool {
    model.identity.iter().all(|&i| {
        let name = &model.fields[i].name;
        values
            .iter()
            .any(|(f, v)| f.name == *name && *v == Internal::None)
    })
}

/// The literal psycopg2 writes for a key's value as the serializer made it; `None` for a
/// value the ORM's read-back is not compared with here (`None`, JSON).
fn key_literal(value: &Internal) -> Option<Literal> {
    Some(match value {
        Internal::Int(i) => Literal::Int(i.clone()),
        Internal::Float(f) => Literal::Float(*f),
        Internal::Bool(b) => Literal::Bool(*b),
        Internal::DateTime(dt) => Literal::DateTime(*dt),
        Internal::Str(s) => Literal::Str(s.clone()),
        Internal::None | Internal::Json(_) => return None,
    })
}

/// `SELECT` of the values whose text PostgreSQL reads by an input function that is not
/// immutable (dates, times, intervals, money, types it does not know to SQLAlchemy), when a
/// create has any. psycopg2 writes each value as a literal, which PostgreSQL reads while it
/// parses the `INSERT`: a bad one fails before the key's sequence moves. A bound parameter of
/// such a type is read while the row is made, after `nextval`: the sequence would move on
/// every refused create and the next record's key differ from the engine's.
fn values_read_first(values: &Values<'_, PgField>) -> Option<(String, Binds)> {
    let mut params = Binds::default();
    let reads: Vec<String> = values
        .iter()
        .filter(|(f, v)| !matches!(v, Internal::None) && !f.kind.read_when_parsed())
        .map(|(f, v)| bind_value(f, v, &mut params))
        .collect();
    (!reads.is_empty()).then(|| (format!("SELECT {}", reads.join(", ")), params))
}

/// The `ctid` of the locked row, as [`Database::lock_select`] read it (its first cell, text;
/// empty where it is not, which no row's `ctid` is).
fn ctid(locked: &[Bind]) -> String {
    match locked.first() {
        Some(Bind::Text(ctid)) => ctid.clone(),
        _ => String::new(),
    }
}

/// The condition of a write by identity, from the condition `at_row` on the locked row: the ORM
/// writes by identity, and a promoted key names every row that shares its value.
fn at_identity(model: &PgModel, at_row: &str) -> String {
    if model.promoted_key {
        format!(
            "{k} IN (SELECT {k} FROM {t} WHERE {at_row})",
            k = model.pk_field().sql,
            t = model.table_sql,
        )
    } else {
        at_row.to_owned()
    }
}

impl PgResource {
    /// Runs a read (a database error as [`Failure::Read`] says).
    pub(crate) async fn read_rows(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        sql: &str,
        params: &Binds,
        lenient: bool,
    ) -> Result<Vec<Row>, EngineError> {
        // Prepared once per connection, which a page and its count may use at the same time.
        let rows = run(client, Some(&client.statement_cache), sql, params).await;
        rows.map_err(|e| self.fault(e, Failure::Read { lenient }))
    }

    /// A database error of a read: the engine re-raises it (`500`).
    pub(crate) fn read_failure(&self, e: tokio_postgres::Error) -> EngineError {
        match e.as_db_error() {
            Some(_) => read_refused("PostgreSQL", crate::message(&e).trim_end()),
            None => self.unexpected(e),
        }
    }

    /// A database error of a write: a `400` with PostgreSQL's message; a unique violation
    /// names its column, as the engine's pattern (`Key (col)=(...) already exists`) does.
    pub(crate) fn write_error(&self, model: &PgModel, e: tokio_postgres::Error) -> EngineError {
        let Some(db) = e.as_db_error() else {
            return self.unexpected(e);
        };
        if *db.code() == SqlState::UNIQUE_VIOLATION
            && let Some(column) = db
                .detail()
                .and_then(|d| d.strip_prefix("Key ("))
                .and_then(|d| d.split_once(")=("))
                .map(|(column, _)| column)
            && model.field(column).is_some()
        {
            return EngineError::duplicate_value(db.message(), column);
        }
        non_field(message(&e))
    }
}

/// A value the serializer made, bound as psycopg2 sends it and cast to the column's type, as
/// PostgreSQL assigns a literal to a column.
fn bind_value(field: &PgField, v: &Internal, params: &mut Binds) -> String {
    let text = match v {
        Internal::None => None,
        // psycopg2 writes a Python bool as `true`/`false`, a boolean literal: a `bit` column
        // refuses it (`column "..." is of type bit but expression is of type boolean`).
        Internal::Bool(b) => return cast(params, Some(b.to_string()), "boolean"),
        Internal::Int(i) => Some(i.clone()),
        Internal::Float(f) if f.is_nan() => Some("NaN".to_owned()),
        Internal::Float(f) if f.is_infinite() => {
            Some(if *f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned())
        }
        // psycopg2 writes a float as its `repr`, a numeric literal (` -0.0`), which PostgreSQL
        // reads as a `numeric` and then assigns to the column: the same number but for the sign
        // of zero, which a `numeric` has not (`-0.0` is stored as `0` in a `double precision`).
        Internal::Float(f) => {
            let literal = cast(
                params,
                Some(svc_engine::python::floats::py_float_repr(*f)),
                "numeric",
            );
            return format!("CAST({literal} AS {})", field.cast);
        }
        // SQLAlchemy's `UUID` binds `uuid.UUID(text)` (checked by [`not_iterable`]).
        Internal::Str(s) if is_uuid(field) => Some(py_uuid(s).unwrap_or_else(|_| s.clone())),
        Internal::Str(s) => Some(s.clone()),
        Internal::DateTime(dt) => {
            let (text, ty) = datetime_literal(dt);
            let value = cast(params, Some(text), ty);
            return format!("CAST({value} AS {})", field.cast);
        }
        // An array column given null is NULL (SQLAlchemy's `ARRAY` binds `None` as it is).
        Internal::Json(PyJson::None) if field.kind.is_array() => None,
        // SQLAlchemy's `ARRAY(JSON)` writes each item as its JSON text (`json.dumps`).
        Internal::Json(j) if field.kind.is_array() && holds_json(field) => {
            Some(array_text(j, &py_json_dumps))
        }
        Internal::Json(j) if field.kind.is_array() => match number_array(j) {
            // psycopg2 writes a list of numbers as `ARRAY[1.5, 2]`, whose numbers PostgreSQL
            // casts to the element type (an `integer[]` rounds 1.5 to 2); the numbers are the
            // engine's own texts of parsed numbers, never the caller's text.
            Some(array) => return format!("CAST({array} AS {})", field.cast),
            None => Some(array_text(j, &item_text)),
        },
        Internal::Json(j) => Some(py_json_dumps(j)),
    };
    cast(params, text, &field.cast)
}

/// Values the engine cannot write. An array column's value that SQLAlchemy's `ARRAY` cannot
/// make a list of: it calls `list(value)`, which fails for a number or a boolean (`400`, the
/// engine's message). Any value but `null` for a `bytea` column: the serializer hands
/// psycopg2 text, which it cannot send as bytes (the engine fails, `500`;
/// `[decision: stricter]`, a `400` naming the field, in both modes, as the other writes the
/// engine fails on).
fn not_iterable(values: &[(&PgField, Internal)]) -> Result<(), EngineError> {
    for (f, v) in values {
        // The engine fails (500) on both: SQLAlchemy's bytea binding of the API's values, and
        // psycopg2's refusal of a string literal holding NUL, before anything is sent.
        let why = match v {
            _ if f.kind == PgKind::Bytea && *v != Internal::None => {
                Some("(bytea) through the API: it fails (500) on any value but null")
            }
            Internal::Str(text) if text.contains('\0') => Some(
                "on PostgreSQL with a NUL character (\\u0000): its driver fails (500) on such \
                 text. Leave the character out",
            ),
            _ => None,
        };
        if let Some(why) = why {
            return Err(EngineError::stricter(
                &f.name,
                format!("The data engine cannot write field {:?} {why}.", f.name),
            ));
        }
        // `uuid.UUID(text)` raises on text it cannot read: the engine's `400`, Python's words.
        if let Internal::Str(text) = v
            && is_uuid(f)
            && let Err(why) = py_uuid(text)
        {
            return Err(non_field(why));
        }
        let type_name = match v {
            Internal::Json(PyJson::Int(_)) => "int",
            Internal::Json(PyJson::Float(_)) => "float",
            Internal::Json(PyJson::Bool(_)) => "bool",
            _ => continue,
        };
        if f.kind.is_array() {
            return Err(non_field(format!("'{type_name}' object is not iterable")));
        }
    }
    Ok(())
}

/// A `uuid` column (or a domain over `uuid`): SQLAlchemy's `UUID`, which reads the text it is
/// given with Python's `uuid.UUID` before psycopg2 sends it.
fn is_uuid(field: &PgField) -> bool {
    field.kind == PgKind::Other && field.cast == "pg_catalog.uuid"
}

/// `ARRAY[...]` of a non-empty (nested) list whose items are all finite numbers or `None`, as
/// psycopg2 writes it; `None` for any other value (written as array text instead).
fn number_array(v: &PyJson) -> Option<String> {
    let PyJson::List(items) = v else {
        return None;
    };
    if items.is_empty() {
        return None;
    }
    let parts = items
        .iter()
        .map(|item| match item {
            PyJson::Int(i) => Some(i.clone()),
            PyJson::Float(f) if f.is_finite() => Some(py_float_repr(*f)),
            PyJson::None => Some("NULL".to_owned()),
            PyJson::List(_) => number_array(item),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    Some(format!("ARRAY[{}]", parts.join(",")))
}

/// An array of `json` or `jsonb` items (`jsonb[]`).
fn holds_json(field: &PgField) -> bool {
    field.cast.starts_with("json")
}

/// The text psycopg2 sends for an item of an array of other items than JSON: Python's `str()`,
/// a boolean as PostgreSQL's `true`/`false`.
fn item_text(item: &PyJson) -> String {
    match item {
        PyJson::Bool(b) => b.to_string(),
        other => py_text(other),
    }
}

/// psycopg2's array literal of a Python list, as PostgreSQL's array text (`{1,"a b",NULL}`),
/// each item that is no list nor `None` written by `text`. SQLAlchemy's `ARRAY` makes a list
/// of any other value first (`list(value)`): a string is its characters (`"{1,2}"` is
/// `{"{","1",",","2","}"}`, which an `integer[]` refuses), a dict its keys.
fn array_text(v: &PyJson, text: &dyn Fn(&PyJson) -> String) -> String {
    match v {
        PyJson::Str(s) => array_text(
            &PyJson::List(s.chars().map(|c| PyJson::Str(c.to_string())).collect()),
            text,
        ),
        PyJson::Dict(items) => array_text(
            &PyJson::List(items.iter().map(|(k, _)| PyJson::Str(k.clone())).collect()),
            text,
        ),
        PyJson::List(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|item| match item {
                    PyJson::None => "NULL".to_owned(),
                    PyJson::List(_) => array_text(item, text),
                    other => {
                        let text = text(other);
                        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
                    }
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        other => py_text(other),
    }
}

/// A sort key's value as its text: its columns are read as text (`sort_key_columns`), each
/// cell a `Bind::Text` (`driver::cell`); NULL is `None`.
fn key_text(key: &Option<Bind>) -> Option<String> {
    match key {
        Some(Bind::Text(text)) => Some(text.clone()),
        Some(Bind::Int(n)) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_become_array_literals() {
        let array_text = |v: &PyJson| array_text(v, &item_text);
        let list = PyJson::List(vec![
            PyJson::Int("1".to_owned()),
            PyJson::Str("a \"b\"".to_owned()),
            PyJson::None,
        ]);
        assert_eq!(array_text(&list), r#"{"1","a \"b\"",NULL}"#);
        // What the running engine stored: `{"tarr": "ab"}` is `["a", "b"]`, `"{1,2}"` five
        // one-character items (which an `integer[]` refuses: the engine's `400`).
        assert_eq!(array_text(&PyJson::Str("ab".to_owned())), r#"{"a","b"}"#);
        assert_eq!(
            array_text(&PyJson::Str("{1,2}".to_owned())),
            r#"{"{","1",",","2","}"}"#
        );
        assert_eq!(array_text(&PyJson::Str(String::new())), "{}");
    }

    /// As the engine stored them in a `jsonb[]`: `"abc"` is `["a", "b", "c"]`, each item its
    /// JSON text.
    #[test]
    fn json_items_are_their_json_text() {
        let json_text = |v: &PyJson| array_text(v, &py_json_dumps);
        assert_eq!(
            json_text(&PyJson::Str("ab".to_owned())),
            r#"{"\"a\"","\"b\""}"#
        );
        let list = PyJson::List(vec![
            PyJson::Int("1".to_owned()),
            PyJson::None,
            PyJson::Bool(true),
        ]);
        assert_eq!(json_text(&list), r#"{"1",NULL,"true"}"#);
    }
}

/// The expression that reads the snapshot of the statement it is in, once per statement.
pub(crate) const SNAPSHOT: &str = "(SELECT txid_current_snapshot()::text)";

/// Whether a value of the kind reads back exactly from its text (`CAST(text AS type)` is the
/// value again, and compares as the value does), so that it can be a sort key to seek past.
fn round_trips(kind: PgKind) -> bool {
    matches!(
        kind,
        PgKind::Integer
            | PgKind::Real
            | PgKind::Double
            | PgKind::Numeric
            | PgKind::Boolean
            | PgKind::Date
            | PgKind::Timestamp
            | PgKind::TimestampTz
            | PgKind::String
            | PgKind::Char
            | PgKind::Enum
            | PgKind::Time
            | PgKind::TimeTz
            | PgKind::Interval
            | PgKind::Inet
    )
}

/// The terms of `terms` (field index, descending) up to the first that is the model's key,
/// when the order is total there (the key is one column that is its primary key: unique and
/// never NULL) and every one can be sought past; `None` otherwise.
pub(crate) fn seek_terms(model: &PgModel, terms: &[(usize, bool)]) -> Option<Vec<(usize, bool)>> {
    shared::seek_terms(model.unique_key(), model.pk, terms, |i| {
        model.fields.get(i).is_some_and(|f| round_trips(f.kind))
    })
}

/// A page's statements.
impl PgResource {
    /// The rows of one page: those of `LIMIT per_page OFFSET offset`, read from the nearest
    /// anchor of the same walk when one is valid, else with `OFFSET` over the keys alone; the
    /// end of a full page is kept as an anchor. Without a total order that can be sought
    /// (see [`walks::seek_terms`]), the engine's statement as it is.
    async fn page_rows(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        page: &Page<'_, Self>,
    ) -> Result<Vec<Row>, EngineError> {
        let (model, filter, offset, lenient) = (page.model, page.filter, page.offset, page.lenient);
        let Some(seek) = seek_terms(model, page.terms) else {
            let sql = page.offset_select();
            return self.read_rows(client, &sql, &filter.params, lenient).await;
        };
        let walk_key = page.walk_key();
        let extra = format!(", {}{}", SNAPSHOT, Self::sort_key_columns(model, &seek));
        let snapshot_at = model.fields.len();
        if offset > 0
            && let Some(anchor) = page.walks.anchor(&walk_key, offset)
        {
            let (sql, params) = from_anchor(page, &seek, &extra, &anchor);
            let rows = self.read_rows(client, &sql, &params, lenient).await?;
            let same = rows.first().is_some_and(|r| {
                r.get::<_, Option<&str>>(snapshot_at) == Some(anchor.1.token.as_str())
            });
            if same {
                self.keep_anchor(&walk_key, &rows, page, seek.len());
                return Ok(rows);
            }
        }
        let sql = page_select(page, &extra, &filter.sql, offset);
        let rows = self
            .read_rows(client, &sql, &filter.params, lenient)
            .await?;
        self.keep_anchor(&walk_key, &rows, page, seek.len());
        Ok(rows)
    }

    /// Keeps the end of a full page as an anchor of its walk, under the snapshot read beside
    /// its last row (its sort key follows).
    fn keep_anchor(&self, walk_key: &[u8], rows: &[Row], page: &Page<'_, Self>, terms: usize) {
        let at = page.model.fields.len();
        let Some(last) = rows.last().filter(|_| rows.len() as u64 == page.per_page) else {
            return;
        };
        if let Some(snapshot) = last.get::<_, Option<String>>(at) {
            let cells: Vec<usize> = (at + 1..at + 1 + terms).collect();
            let sort_key = sort_key_of::<Self>(last, &cells);
            keep_anchor(walk_key, page, sort_key, snapshot);
        }
    }

    /// The engine's count: the catalog estimate of an unfiltered table when it is at least
    /// 10 000 (`SELECT reltuples FROM pg_class WHERE relname = ...`, the first such table of
    /// any schema), else `COUNT(*)`. Unfiltered, one statement does both: `COALESCE` runs the
    /// count only when the estimate is not taken (never remembered: `VACUUM` may change the
    /// estimate without a transaction). Filtered, the count is remembered per snapshot.
    async fn count_rows(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        model: &PgModel,
        filter: &PgWhere,
        lenient: bool,
        walks: &Walks<Bind>,
    ) -> Result<u64, EngineError> {
        let rows = if filter.sql.is_empty() {
            let sql = format!(
                "SELECT COALESCE((SELECT e FROM (SELECT trunc(reltuples)::int8 AS e FROM pg_class \
                 WHERE relname = $1::text LIMIT 1) s WHERE e >= {ESTIMATE_FROM}), \
                 (SELECT count(*) FROM {}))",
                model.table_sql
            );
            let params = Binds(vec![Bind::Text(model.name.clone())]);
            self.read_rows(client, &sql, &params, lenient).await?
        } else {
            // A filtered count is remembered with the snapshot it was made in, and the
            // statement counts again only when its own snapshot differs (see `walks`).
            let count = format!("(SELECT count(*) FROM {}{})", model.table_sql, filter.sql);
            let key = filter.params.memo_key(&count);
            let kept = walks.count(&key);
            let mut params = filter.params.clone();
            let (snapshot, n) = kept.map_or((None, None), |(s, n)| (Some(s), Some(n.to_string())));
            let kept_snapshot = cast(&mut params, snapshot, "text");
            let kept_count = cast(&mut params, n, "bigint");
            let sql = format!(
                "SELECT CASE WHEN now.snapshot = {kept_snapshot} THEN {kept_count} ELSE {count} \
                 END, now.snapshot FROM (SELECT txid_current_snapshot()::text AS snapshot) now"
            );
            let rows = self.read_rows(client, &sql, &params, lenient).await?;
            if let Some(row) = rows.first()
                && let (Some(n), Some(snapshot)) = (
                    row.get::<_, Option<i64>>(0),
                    row.get::<_, Option<String>>(1),
                )
            {
                walks.keep_count(key, snapshot, n.max(0) as u64);
            }
            rows
        };
        Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)) as u64)
    }
}

#[cfg(test)]
mod pages_tests {
    use super::*;
    use svc_engine::table::Reflected;

    fn field(name: &str, kind: PgKind, cast: &str) -> PgField {
        crate::schema::test_field(name, kind, cast)
    }

    #[test]
    fn seeks_follow_postgresqls_null_order() {
        let age = field("age", PgKind::Integer, "integer");
        let id = field("id", PgKind::Integer, "integer");
        let select = |f: &PgField| f.sql.clone();
        let model = PgModel::new(
            "t".to_owned(),
            vec![age, id],
            &[],
            Reflected {
                sql: "t".to_owned(),
                holds_rows: true,
                related: false,
                extra: (),
            },
            select,
        );
        let model = model.unwrap();
        let seek = |terms: &[(usize, bool)], key: &[Option<&str>]| {
            let key: Vec<Option<Bind>> = key
                .iter()
                .map(|k| k.map(|k| Bind::Text(k.to_owned())))
                .collect();
            let mut params = Binds::default();
            let sql = <PgResource as Database>::seek_condition(&model, terms, &key, &mut params);
            (sql, params.0)
        };
        let (sql, params) = seek(&[(0, false), (1, true)], &[Some("30"), Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" > CAST($1::text AS integer) OR \"age\" IS NULL OR (\"age\" = \
             CAST($1::text AS integer) AND ((\"id\" < CAST($2::text AS integer)))))"
        );
        let text = |t: &str| Bind::Text(t.to_owned());
        assert_eq!(params, [text("30"), text("7")]);
        let (sql, _) = seek(&[(0, false), (1, true)], &[None, Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" IS NULL AND ((\"id\" < CAST($1::text AS integer))))"
        );
        let (sql, _) = seek(&[(0, true), (1, true)], &[None, Some("7")]);
        assert_eq!(
            sql,
            "((\"age\" IS NULL AND ((\"id\" < CAST($1::text AS integer)))) OR \"age\" IS NOT NULL)"
        );
        let (sql, _) = seek(&[(0, true), (1, false)], &[Some("30"), Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" < CAST($1::text AS integer) OR (\"age\" = CAST($1::text AS integer) AND \
             ((\"id\" > CAST($2::text AS integer)))))"
        );
    }
}
