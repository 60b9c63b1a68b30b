//! One database's side of every flow ([`Database`]): its models as SQL names them, its binds,
//! reads and writes, its pages and count, its exports' transactions and keys, its aggregates'
//! words. The flows hold the steps the engine takes and the SQL every database shares; a
//! database holds only what is its own (how it binds, casts and orders, how it pages and counts,
//! how its driver reads a row), in one trait beside its words ([`Dialect`]), its driver
//! ([`Driver`]) and its column types.

use std::future::Future;

use crate::dialect::Dialect;
use crate::dialect::bind::{Bind, Binds};
use crate::dialect::clause::Where;
use crate::dialect::group::Quoting;
use crate::dialect::seek::{self, Nulls};
use crate::flow::aggregate::SummaryRow;
use crate::flow::delete;
use crate::flow::driver::{Driver, Failure, Session};
use crate::flow::export::{Aside, SavedData, SavedTable, Store, Suspended, bind_imported};
use crate::flow::records::{BaseTable, ModelSql, Page, catalog_text, counted, identity_columns};
use crate::flow::references::{Columns, Locator, Reference, TableRef, catalog_references};
use crate::flow::snapshot;
use crate::flow::state::Served;
use crate::flow::write::{ReadBack, Values, insert_by_identity, update_by_identity};
use svc_engine::body::{non_field, query_failed};
use svc_engine::field_input::{Internal, to_internal};
use svc_engine::python::json::PyJson;
use svc_engine::records::{self, ModelMap, Records};
use svc_engine::table::{BodyColumn, Summary, Table};
use svc_engine::walks::Walks;
use svc_engine::{AggregateFunc, EngineError};

/// One database's side of the record flows. Every future is `Send`: the flows run on the
/// async workers, awaited where they are asked for. Its models, columns and bound values are
/// those of its [`Dialect`].
pub trait Database:
    Dialect<Model: ModelSql + BaseTable + Send + Sync, Field: BodyColumn + Sync> + Driver + Sized + Sync
{
    /// The statement that reads the engine's default time zone, the UTC offset in seconds of
    /// the database's `NOW()`, as an integer; `None` (by default) where the database keeps
    /// no time zone (SQLite's values are read as they are stored: offset 0).
    const TIME_ZONE: Option<&'static str> = None;

    /// A value the serializer made, bound for a comparison with (or a write to) `field`, and
    /// its placeholder (`tz`: the engine's default time zone, as the UTC offset in seconds an
    /// aware date-time is moved to where the database stores none); `Err` where the column's
    /// type refuses the value (SQLAlchemy's bind processor), as the engine answers it.
    fn bind(
        field: &Self::Field,
        value: &Internal,
        tz: i32,
        params: &mut Binds,
    ) -> Result<String, EngineError>;

    /// The column as a list's `ORDER BY` names it: by default as the conditions write it.
    fn sort_column(_model: &Self::Model, field: &Self::Field) -> String {
        Self::column(field).to_owned()
    }

    /// `key = value` for the key text of a record URL, read by the key column's serializer
    /// field (`abc` for an integer key is `400 not a valid integer`), its value bound in
    /// `params`.
    fn key_condition(
        model: &Self::Model,
        raw: &str,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let pk = model.pk_field();
        let raw = PyJson::Str(raw.to_owned());
        let internal = to_internal(pk.input(), &raw).map_err(non_field)?;
        let value = Self::bind_key(pk, &internal, params)?;
        Ok(format!("{} = {value}", Self::column(pk)))
    }

    /// A key compared with the key column `pk`: bound as a value written to it, unless the
    /// database's driver compares another type (PostgreSQL's `bigint` literal of an int).
    fn bind_key(
        pk: &Self::Field,
        key: &Internal,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Self::bind(pk, key, 0, params)
    }

    /// The ` ORDER BY ...` of a list's terms (`(column index, descending)`), in the database's
    /// own NULL order (the engine's).
    fn order_sql(model: &Self::Model, terms: &[(usize, bool)]) -> String {
        // Built by hand, not with `format!`: once per page (docs/performance.md, section 6).
        let mut sql = String::with_capacity(16 + 24 * terms.len());
        sql.push_str(" ORDER BY ");
        for (n, &(i, desc)) in terms.iter().enumerate() {
            if n > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&Self::sort_column(model, &model.columns()[i]));
            if desc {
                sql.push_str(" DESC");
            }
        }
        sql
    }

    /// A connection for a read, in the time zone a request's `tz` asks for (checked by the
    /// filters: a database that does not set it has refused it there). The flows connect
    /// through [`Served`] (`connect`, `reading`), which reads the engine's default time zone
    /// before a session sets its own.
    fn connect(
        &self,
        tz: Option<&str>,
    ) -> impl Future<Output = Result<Self::Conn, EngineError>> + Send;

    /// The models as the database's catalog describes them now, read on `conn`: each table
    /// and view the engine maps, by name (`flow::state::reload`).
    fn reflect(
        &self,
        conn: &mut Self::Conn,
    ) -> impl Future<Output = Result<ModelMap<Self::Model>, EngineError>> + Send;

    /// The driver's error of a statement that was doing what `failure` says, in the engine's
    /// terms.
    fn fault(&self, fault: Self::Fault, failure: Failure<'_, Self::Model>) -> EngineError;

    /// Runs the read `sql` with `params`, each row handed to `sink` as it is read (a database
    /// error as [`Failure::Read`] says).
    fn read_rows<S>(
        &self,
        conn: &mut Self::Conn,
        sql: &str,
        params: &Binds,
        lenient: bool,
        sink: &mut S,
    ) -> impl Future<Output = Result<(), EngineError>> + Send
    where
        S: FnMut(&Self::Row<'_>) + Send,
    {
        async move {
            let read = Self::each_row(conn, sql, params, sink).await;
            read.map_err(|f| self.fault(f, Failure::Read { lenient }))
        }
    }

    // The writes (`flow::write`, `flow::delete`).

    /// Whether the engine's serializer requires no column on this database (SQLite, whose
    /// SQLAlchemy reflects every column as autoincrement "auto"): a `PUT` is then partial, as
    /// a `PATCH` is (`backend::operation::Change`).
    const REQUIRES_NO_COLUMN: bool = false;

    /// What a lock reads of its row to find it again (its identity, or where it is stored):
    /// the locked row is these cells ([`Driver::cells`]) until the transaction ends. By default
    /// its identity (`Table::identity`: the key's columns, or the first column the engine
    /// promotes), as the conditions write the columns; PostgreSQL reads where the row is
    /// stored, SQLite the whole row (its ORM compares the loaded record).
    fn lock_select(model: &Self::Model) -> String {
        identity_columns::<Self>(model).join(", ")
    }

    /// The locked row's identity, its values as a statement binds them to find every row that
    /// shares it: by default the first cells, [`lock_select`](Self::lock_select)'s; SQLite's
    /// are picked from the whole row.
    fn identity_cells(model: &Self::Model, locked: &[Bind]) -> Vec<Bind> {
        locked[..model.identity().len().min(locked.len())].to_vec()
    }

    /// The locked row's identity ([`identity_cells`](Self::identity_cells)); `Err` where the
    /// ORM cannot name the row (a NULL in it: its flush fails, `400 Query failed`).
    fn identity_of(model: &Self::Model, locked: &[Bind]) -> Result<Vec<Bind>, EngineError> {
        let identity = Self::identity_cells(model, locked);
        if identity.contains(&Bind::Null) {
            return Err(query_failed());
        }
        Ok(identity)
    }

    /// The identity's condition (`a = ? AND b = ?`), bound from the first value: how the ORM
    /// finds a row again, and every row that shares a promoted key.
    fn identity_condition(model: &Self::Model) -> String {
        let columns = model.columns();
        let conditions: Vec<String> = model
            .identity()
            .iter()
            .enumerate()
            .map(|(n, &i)| Self::identity_sql(Self::column(&columns[i]), "", n + 1).1)
            .collect();
        conditions.join(" AND ")
    }

    /// `Err` where the engine's ORM fails loading the locked record (a value it cannot read:
    /// it loads the record before it writes or deletes it); by default it loads.
    fn loaded(
        &self,
        _model: &Self::Model,
        _locked: &[Bind],
        _lenient: bool,
    ) -> Result<(), EngineError> {
        Ok(())
    }

    /// Which of `values` the locked row holds already, compared as the ORM compares a loaded
    /// attribute with a given one, where the database read the row whole. `None` (by
    /// default): the database is asked, in SQL, for the values whose plain write would differ
    /// from the ORM's (`unchanged_candidates`).
    fn held(
        _model: &Self::Model,
        _locked: &[Bind],
        _values: &Values<'_, Self::Field>,
    ) -> Option<Vec<bool>> {
        None
    }

    /// Values the engine cannot write on this database, refused before anything is sent (by
    /// default none: a database whose types refuse a value when it is bound).
    fn writable(_values: &Values<'_, Self::Field>) -> Result<(), EngineError> {
        Ok(())
    }

    /// The condition that finds the locked row again, its values bound in `params`: by default
    /// its identity's ([`identity_cells`](Self::identity_cells); a flow may read more cells
    /// after those of the lock, `flow::extra`).
    fn at_locked(model: &Self::Model, locked: &[Bind], params: &mut Binds) -> String {
        let columns = model.columns();
        let conditions: Vec<String> = model
            .identity()
            .iter()
            .zip(Self::identity_cells(model, locked))
            .map(|(&i, value)| {
                let value = params.bind::<Self>(value);
                format!("{} = {value}", Self::column(&columns[i]))
            })
            .collect();
        conditions.join(" AND ")
    }

    /// Writes `values` to the locked row (by identity: a promoted key names every row that
    /// shares it) and reads the record back as the engine's ORM does: by its identity after
    /// the write (the values given for its columns, the locked row's for the others). By
    /// default the core's statements by identity ([`update_by_identity`]); PostgreSQL checks
    /// the key in its `UPDATE`'s own `RETURNING`.
    fn update_locked(
        &self,
        tx: &mut Session<Self>,
        model: &Self::Model,
        values: &Values<'_, Self::Field>,
        locked: Vec<Bind>,
        tz: i32,
    ) -> impl Future<Output = Result<ReadBack, EngineError>> + Send {
        update_by_identity(self, tx, model, values, locked, tz)
    }

    /// The statement that reads every foreign key that refers to a table, given the table's
    /// name (a [`TableRef`]'s) as its one value: one row per pair of columns, in the shape
    /// [`catalog_references`] reads.
    const REFERENCES: &'static str;

    /// Every foreign key, of every table the engine maps, that refers to `parent`, read on the
    /// write's connection, in its transaction (`flow::delete`, through
    /// [`Cascade`](crate::flow::references::Cascade)): by default as the database's
    /// [`REFERENCES`](Self::REFERENCES) reads them. SQLite reads each key's `ON DELETE` from
    /// its table's SQL, as SQLAlchemy does.
    fn references_to(
        &self,
        conn: &mut Self::Conn,
        parent: &TableRef,
    ) -> impl Future<Output = Result<Vec<Reference>, EngineError>> + Send {
        catalog_references(self, conn, Self::REFERENCES, parent)
    }

    /// The statement that reads a table's primary key's columns, in the key's order: given
    /// the table's name (a [`TableRef`]'s) as its one value, it answers each column's name
    /// and the type a value of it is bound as (`''` where the database binds a value as it is).
    const KEY_COLUMNS: &'static str;

    /// The statement that reads a table's first column, as [`KEY_COLUMNS`](Self::KEY_COLUMNS)
    /// reads the key's.
    const FIRST_COLUMN: &'static str;

    /// The columns of `table` that `which` names, quoted, each with the type it is bound as
    /// ([`Dialect::identity_sql`] reads it): none where it has none. The database's catalog
    /// statement ([`KEY_COLUMNS`](Self::KEY_COLUMNS), [`FIRST_COLUMN`](Self::FIRST_COLUMN)),
    /// run on `conn`; a failure is unexpected.
    fn columns(
        &self,
        conn: &mut Self::Conn,
        table: &TableRef,
        which: Columns,
    ) -> impl Future<Output = Result<Vec<(String, String)>, EngineError>> + Send {
        async move {
            let sql = match which {
                Columns::PrimaryKey => Self::KEY_COLUMNS,
                Columns::First => Self::FIRST_COLUMN,
            };
            let name = Binds(vec![Bind::Text(table.name.clone())]);
            let rows = Self::cell_rows(conn, sql, &name).await;
            let rows = rows.map_err(|f| self.fault(f, Failure::Unexpected))?;
            Ok(rows
                .into_iter()
                .map(|row| {
                    let mut cells = row.into_iter().map(catalog_text);
                    let name = cells.next().unwrap_or_default();
                    (Self::quote(&name), cells.next().unwrap_or_default())
                })
                .collect())
        }
    }

    /// Deletes the locked row, after what the engine's ORM does to the rows that refer to it
    /// (`flow::delete`): by default by its identity, as the ORM deletes (the one row of a
    /// declared key, every row that shares a promoted one).
    fn delete_locked(
        &self,
        tx: &mut Session<Self>,
        model: &Self::Model,
        locked: Vec<Bind>,
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        async move {
            let identity = Self::identity_of(model, &locked)?;
            let at = Locator {
                select: identity_columns::<Self>(model).join(", "),
                condition: Self::identity_condition(model),
                may_repeat: model.promoted_key(),
            };
            let table = TableRef {
                name: model.table_name().to_owned(),
                sql: model.table_sql().to_owned(),
            };
            delete::delete_locked(self, tx, model, &table, &at, identity, &at.condition).await
        }
    }

    /// Inserts the record in the write's transaction `tx` and reads it back as the engine's
    /// ORM does: by its identity (the key values given, else those the database made), as the
    /// ORM binds them. The flow commits, or ends the transaction as the engine would where
    /// nothing has that identity ([`ReadBack::Lost`]). By default the core's statements by
    /// identity ([`insert_by_identity`]); PostgreSQL checks the key in its `INSERT`'s own
    /// `RETURNING`, SQLite reads its last rowid.
    fn insert(
        &self,
        tx: &mut Session<Self>,
        model: &Self::Model,
        values: &Values<'_, Self::Field>,
        tz: i32,
    ) -> impl Future<Output = Result<ReadBack, EngineError>> + Send {
        insert_by_identity(self, tx, model, values, tz)
    }

    // A list's pages and its count (`flow::read`, `flow::walks`).

    /// The greatest `OFFSET` the engine's driver passes to this database: 2^63 - 1 by default
    /// (a signed 64-bit integer: SQLite's binding, PostgreSQL's `bigint`). A page further on
    /// makes the engine fail (500).
    const MAX_OFFSET: u64 = i64::MAX as u64;

    /// Writes the records of one page (`LIMIT per_page OFFSET offset` in the list's order) to
    /// `out`; its count when the database had it at hand (read with the page, or remembered).
    fn page(
        &self,
        conn: &mut Self::Conn,
        page: &Page<'_, Self>,
        out: &mut Records<'_, Self::Model>,
    ) -> impl Future<Output = Result<Option<u64>, EngineError>> + Send;

    /// The engine's count of the rows `filter` selects: by default `count(*)`, as the engine
    /// counts on every database but PostgreSQL and MySQL, whose unfiltered tables of 10 000 rows
    /// or more it shows the database's estimate of (they override this).
    /// `walks`: the counts the resource's walks kept, which a database that remembers its
    /// estimates reads.
    fn count(
        &self,
        conn: &mut Self::Conn,
        model: &Self::Model,
        filter: &Where<Binds>,
        lenient: bool,
        walks: &Walks<Bind>,
    ) -> impl Future<Output = Result<u64, EngineError>> + Send {
        let _ = walks;
        counted(self, conn, model, filter, lenient)
    }

    /// Whether a value the engine's serializer cannot write fails the read, as on the engine
    /// (else the stored value is shown: SQLite's `showing_stored_values`).
    fn checks_readable(&self) -> bool {
        true
    }

    /// The failure of a read whose record holds, in column `at`, a value the engine cannot
    /// write (see [`records::unreadable`]); `None` where a backend answers the read all the
    /// same.
    fn unreadable(model: &Self::Model, at: usize, lenient: bool) -> Option<EngineError> {
        Some(records::unreadable(model, at, lenient))
    }

    /// The `i`th cell of a row as a sort key's value, bound again as it is (`None`: NULL): by
    /// default the cell as [`Driver::cell`] reads it (once per page: of its last row).
    fn sort_key(row: &Self::Row<'_>, i: usize) -> Option<Bind> {
        let cell = Self::cell(row, i);
        (cell != Bind::Null).then_some(cell)
    }

    /// Whether the `i`th cell of a row can be bound again as the value it is (else the page's
    /// end is kept as no anchor).
    fn seekable(_row: &Self::Row<'_>, _i: usize) -> bool {
        true
    }

    /// The select expressions that read a row's sort key after its columns (each with a
    /// leading `, `): by default each term's column as it is (as the conditions write it).
    fn sort_key_columns(model: &Self::Model, terms: &[(usize, bool)]) -> String {
        let columns = model.columns();
        terms
            .iter()
            .map(|&(i, _)| format!(", {}", Self::column(&columns[i])))
            .collect()
    }

    /// The condition that selects the rows after a row whose sort key is `key`, in the order of
    /// `terms` (the last one unique), with its values bound in `params`: by default each value
    /// bound as the driver read it, compared with the column as the conditions write it, NULL
    /// before every other value (MySQL's and SQLite's order; PostgreSQL writes its own).
    fn seek_condition(
        model: &Self::Model,
        terms: &[(usize, bool)],
        key: &[Option<Bind>],
        params: &mut Binds,
    ) -> String {
        let columns = model.columns();
        let terms: Vec<(&str, bool)> = terms
            .iter()
            .map(|&(i, desc)| (Self::column(&columns[i]), desc))
            .collect();
        let mut bind = |i: usize| {
            let value = key[i].clone().unwrap_or(Bind::Null);
            params.bind::<Self>(value)
        };
        seek::seek_condition(&terms, key, Nulls::Smallest, &mut bind)
    }

    /// The page's rows where `where_sql` holds, after the first `skip` of them (at least one),
    /// each with `extra` read beside its columns (`page_select`); the rows skipped are skipped
    /// by their keys alone. By default the keys are a derived table the page's rows are joined
    /// to (MySQL takes no `LIMIT` in an `IN` subquery; the key is unique: the walk seeks only
    /// then).
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        let model = page.model;
        let key = Self::column(model.pk_field());
        // The derived table's name, never the table's own.
        let keys = if model.table_name().eq_ignore_ascii_case("svc_page_keys") {
            Self::quote("svc_page_keys_")
        } else {
            Self::quote("svc_page_keys")
        };
        let k = Self::quote("k");
        format!(
            "SELECT {list}{extra} FROM {table} JOIN (SELECT {key} AS {k} FROM {table}{where_sql}\
             {order} LIMIT {per_page} OFFSET {skip}) AS {keys} ON {key} = {keys}.{k}{order}",
            list = model.select_list(),
            table = model.table_sql(),
            order = page.order,
            per_page = page.per_page,
        )
    }

    // An export, an import and a database server's saved copy (`flow::export`,
    // `flow::snapshot`): its own statements take no bound values; every name in them comes
    // from the database's own catalog, quoted.

    /// What numbers the next generated keys of the saved tables, as saved (and as an export
    /// writes it in its files).
    type Keys: Send + Sync + 'static + serde::Serialize + serde::de::DeserializeOwned;

    /// The statement that begins a transaction whose reads all see the data as of one moment
    /// (MySQL: `START TRANSACTION WITH CONSISTENT SNAPSHOT`).
    const BEGIN_SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ";

    /// What follows the column list of the statements that put saved rows back: PostgreSQL's
    /// `OVERRIDING SYSTEM VALUE`, which writes a column `GENERATED ALWAYS AS IDENTITY`.
    const OVERRIDING: &'static str = "";

    /// The generated keys are put back after the commit: the database's statement that sets
    /// them commits (MySQL's `ALTER TABLE`).
    const KEYS_AFTER_COMMIT: bool = false;

    /// What to do when the saved tables refer to each other in a cycle of foreign keys that the
    /// restore cannot order (the keys [`suspend_checks`](Self::suspend_checks) left checked),
    /// ending the refusal's message.
    const CYCLE_HINT: &'static str = "make one of those foreign keys deferrable, or connect as \
        a user that may turn the foreign keys' checks off";

    /// Runs one statement without rows ([`Driver::execute_one`];
    /// a failure is unexpected).
    fn run(
        &self,
        conn: &mut Session<Self>,
        sql: &str,
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        async move {
            let done = conn.execute_one(sql).await;
            done.map_err(|f| self.fault(f, Failure::Unexpected))
        }
    }

    /// A copy of the data as it is now, which only this resource reads back
    /// ([`restore_copy`](Self::restore_copy)): by default [`snapshot::save`], in a store of the
    /// database's own. SQLite copies its whole database with its online backup instead.
    fn save_copy(
        db: &Served<'_, Self>,
    ) -> impl Future<Output = Result<SavedData, EngineError>> + Send {
        async move {
            let copy = snapshot::save(db).await?;
            Ok(std::sync::Arc::new(copy) as SavedData)
        }
    }

    /// Puts back a copy [`save_copy`](Self::save_copy) made: by default [`snapshot::restore`].
    /// The caller reads the schema again after it.
    fn restore_copy(
        db: &Served<'_, Self>,
        saved: &(dyn std::any::Any + Send + Sync),
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        snapshot::restore(db, saved)
    }

    /// Makes the store `name` (unquoted) of a saved copy (`flow::snapshot`: a database
    /// server's), or says which privilege the connection lacks for it. By default the
    /// database keeps its copies itself (SQLite's online backup, `Resource::save`):
    /// `flow::snapshot` never runs on it.
    fn make_store(
        &self,
        _conn: &mut Session<Self>,
        _name: &str,
    ) -> impl Future<Output = Result<Store, EngineError>> + Send {
        async {
            Err(EngineError::Internal(
                "this database keeps its saved copies itself, not in a store".to_owned(),
            ))
        }
    }

    /// What numbers the next generated keys of `tables` now.
    fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<Self::Keys, EngineError>> + Send;

    /// Refuses `keys` (an export's, read from its file) where they name a counter that is none
    /// of `tables`' ([`foreign_counter`](crate::flow::export::foreign_counter)), before the import writes anything: a database whose
    /// counters are its tables' (MySQL's, SQLite's) compares the names here; one whose
    /// counters must be looked up (PostgreSQL's sequences) does so in
    /// [`put_keys`](Self::put_keys), inside the import's transaction. By default nothing is
    /// refused here.
    fn check_keys(keys: &Self::Keys, tables: &[SavedTable]) -> Result<(), EngineError> {
        let _ = (keys, tables);
        Ok(())
    }

    /// Makes `keys` number the next generated keys of `tables` again: inside the restore's (or
    /// import's) transaction, once every row is back and before the `undo` statements run
    /// (after the commit where [`KEYS_AFTER_COMMIT`](Self::KEYS_AFTER_COMMIT)).
    fn put_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
        keys: &Self::Keys,
    ) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Turns off, for the restore's (or import's) transaction, what the database lets the
    /// session turn off of the foreign keys' checks and of the triggers of `tables`; says which
    /// foreign keys among them stay checked at each statement (not deferrable).
    fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<Suspended, EngineError>> + Send;

    /// Sets aside, before the restore's (or import's) transaction begins, what of `tables` the
    /// database can only change outside a transaction and that would otherwise act as the rows
    /// go back (MySQL's triggers). By default nothing: a database that can turn its triggers off
    /// for the transaction does so in [`suspend_checks`](Self::suspend_checks).
    fn set_aside(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<Aside, EngineError>> + Send {
        let _ = (conn, tables);
        async { Ok(Aside::put_back_by(std::future::ready(Ok(())))) }
    }

    /// Removes every row of `tables`, inside the restore's (or import's) transaction. By
    /// default each table's `DELETE`.
    fn empty(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        async move {
            for table in tables {
                self.run(conn, &format!("DELETE FROM {}", table.sql))
                    .await?;
            }
            Ok(())
        }
    }

    /// Binds an imported value for `field` (`given`: the record's JSON, which `value` was read
    /// from as a create reads it): by default [`bind_imported`], which binds a binary column's
    /// bytes and the rest as [`Database::bind`] does. A database whose engine cannot write more
    /// of its types (SQLite's `DATE` and `TIME`) binds what an export wrote there.
    fn bind_imported(
        &self,
        field: &Self::Field,
        value: &Internal,
        given: &PyJson,
        tz: i32,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        bind_imported::<Self>(field, value, given, tz, params)
    }

    /// Binds `bytes` for a binary column ([`Dialect::binary`]),
    /// an import's: the engine writes no text there.
    fn bind_bytes(bytes: Vec<u8>, params: &mut Binds) -> String {
        params.bind::<Self>(Bind::Bytes(bytes))
    }

    // An aggregate and a group (`flow::aggregate`): what a database's values are, and how
    // its statement reads them with their types.

    /// How the database's SQLAlchemy dialect writes a query's text: its quoting, and the
    /// condition it folds an always-false filter into. By default the dialect's reserved words
    /// in `"` ([`RESERVED_WORDS`](crate::dialect::Dialect::RESERVED_WORDS)), and its
    /// [`QUERY_NEVER`](crate::dialect::Dialect::QUERY_NEVER).
    fn query_dialect(&self) -> (Quoting, &'static str) {
        let quoting = Quoting {
            quote: '"',
            reserved: Self::RESERVED_WORDS,
        };
        (quoting, Self::QUERY_NEVER)
    }

    /// The statement of `summary` over the rows `where_sql` selects (after what the engine
    /// fails on is refused): each key `AS` its label, then the value `AS y_func`, as
    /// [`group_statement`](crate::dialect::group::group_statement) writes them.
    fn summary_statement(
        model: &Self::Model,
        summary: &Summary<'_, Self::Field>,
        where_sql: &str,
    ) -> Result<String, EngineError>;

    /// The values of a row of `summary`'s statement: each key's (none for an aggregate), as
    /// the engine's JSON encoder writes it, then the function's, as [`Summary::written`] says
    /// (in the time zone `tz`, a serializer's).
    fn summary_row(
        summary: &Summary<'_, Self::Field>,
        row: &Self::Row<'_>,
        tz: i32,
    ) -> Result<SummaryRow, EngineError>;

    /// The failure of a summary's statement that computes `func` of `field`, in the engine's
    /// terms (by default the database's own, as [`read_rows`](Database::read_rows) gave it).
    fn summary_error(
        error: EngineError,
        _func: AggregateFunc,
        _field: &Self::Field,
    ) -> EngineError {
        error
    }
}
