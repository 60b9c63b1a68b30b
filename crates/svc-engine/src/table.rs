//! What the engine's rules ask of a table, whatever database holds it: its name, its columns
//! in order, which one is the key, and each column's name and filter family. Each backend's
//! model implements [`Table`]; the rules that read only these (finding a column the way the
//! engine's `getattr` does, reading `_order_by`, the filter grammar's view of the columns) are
//! written once here, over the trait.

use std::collections::BTreeMap;

use crate::EngineError;
use crate::aggregate::{AggregateFunc, AggregateRequest, GroupRequest, fails, known};
use crate::field_input::InputField;
use crate::filter::FilterField;
use crate::records::RecordKeys;
use crate::types::{FieldInfo, FilterFamily, ModelInfo, Search, Serializer};

/// A column of a [`Table`].
pub trait Column {
    /// The column's name: the record's JSON key.
    fn name(&self) -> &str;
    /// The name as the database's SQL writes it: quoted, unqualified.
    fn sql(&self) -> &str;
    /// The lookups its filters take.
    fn family(&self) -> FilterFamily;
    /// How `_search` reaches it.
    fn search(&self) -> Search;
}

/// What a request generator needs of `table` ([`ModelInfo`]).
pub fn describe<T: Table>(table: &T) -> ModelInfo {
    let columns = table.columns();
    ModelInfo {
        name: table.table_name().to_owned(),
        key: columns[table.key_index()].name().to_owned(),
        promoted_key: table.promoted_key(),
        fields: columns
            .iter()
            .map(|c| FieldInfo {
                name: c.name().to_owned(),
                family: c.family(),
            })
            .collect(),
    }
}

/// A table (or view) as the engine's SQLAlchemy maps it.
pub trait Table {
    /// Its columns' type.
    type Column: Column;

    /// The table's name.
    fn table_name(&self) -> &str;
    /// The columns, in table order.
    fn columns(&self) -> &[Self::Column];
    /// The index in [`columns`](Self::columns) of the key column (declared or promoted).
    fn key_index(&self) -> usize;
    /// Each column's index, by name.
    fn column_index(&self) -> &BTreeMap<String, usize>;
    /// No key was declared (a view, a table without a primary key): the engine promoted the
    /// first column, and rows that share its value are one record.
    fn promoted_key(&self) -> bool;
    /// The ORM maps a relationship of the table: a foreign key from it to a model, or from a
    /// model to it (itself included).
    fn has_relationships(&self) -> bool;
    /// The key column is the whole primary key (not one column of a composite key).
    fn key_is_whole(&self) -> bool;
    /// The columns the engine's ORM tells records apart by (its identity map), in key order.
    fn identity(&self) -> &[usize];
    /// Every row has an identity of its own, so that no two rows are one record (a declared
    /// key that cannot be NULL). Otherwise a list shows one record per identity.
    fn identity_unique(&self) -> bool;
    /// Each column's key in a record as JSON writes it, in column order (made once, when the
    /// model is read: a page writes one per value).
    fn record_keys(&self) -> &RecordKeys;

    /// The column named `name`.
    fn field(&self, name: &str) -> Option<&Self::Column> {
        self.column_index()
            .get(name)
            .and_then(|&i| self.columns().get(i))
    }

    /// The index of the column named `name`.
    fn field_index(&self, name: &str) -> Option<usize> {
        self.column_index().get(name).copied()
    }

    /// The key column.
    fn pk_field(&self) -> &Self::Column {
        &self.columns()[self.key_index()]
    }

    /// The terms of a list's `_order_by`, `(column index, descending)`, as the engine reads
    /// them ([`order_terms`](crate::filter::order_terms)): the named columns, then the
    /// key descending unless named.
    fn order_terms(
        &self,
        raw: &[String],
        lenient: bool,
    ) -> Result<Vec<(usize, bool)>, EngineError> {
        crate::filter::order_terms(raw, lenient, self.key_index(), |name| {
            self.field_index(name)
        })
    }

    /// The columns as the filter grammar sees them.
    fn filter_fields(&self) -> Vec<FilterField<'_>> {
        self.columns()
            .iter()
            .map(|c| FilterField {
                name: c.name(),
                family: c.family(),
                // Each database's dialect marks its binary columns (`flow/filter.rs`).
                binary: false,
            })
            .collect()
    }
}

/// A shared model (the backends keep theirs in an `Arc`) is the table it holds.
impl<T: Table> Table for std::sync::Arc<T> {
    type Column = T::Column;

    fn table_name(&self) -> &str {
        (**self).table_name()
    }

    fn columns(&self) -> &[T::Column] {
        (**self).columns()
    }

    fn key_index(&self) -> usize {
        (**self).key_index()
    }

    fn column_index(&self) -> &BTreeMap<String, usize> {
        (**self).column_index()
    }

    fn promoted_key(&self) -> bool {
        (**self).promoted_key()
    }

    fn has_relationships(&self) -> bool {
        (**self).has_relationships()
    }

    fn key_is_whole(&self) -> bool {
        (**self).key_is_whole()
    }

    fn identity(&self) -> &[usize] {
        (**self).identity()
    }

    fn identity_unique(&self) -> bool {
        (**self).identity_unique()
    }

    fn record_keys(&self) -> &RecordKeys {
        (**self).record_keys()
    }
}

/// A column of a table on a database server, as the engine's reading of a write's body sees
/// it.
pub trait BodyColumn: Column {
    /// The serializer field that reads a value given for it.
    fn input(&self) -> InputField;
    /// Whether the engine's serializer requires it in a create (each database's SQLAlchemy
    /// reflection decides).
    fn required(&self) -> bool;
    /// A generated column: SQLAlchemy writes it like any other when given a value (and the
    /// database refuses), leaves it out when given `null` on a create, or its current value on
    /// an update (`engine::body::unchanged_candidates`).
    fn generated(&self) -> bool;
    /// A column of the primary key.
    fn primary_key(&self) -> bool;
    /// The database numbers it (`serial`, identity, `AUTO_INCREMENT`): SQLAlchemy's
    /// autoincrement column, whose value sent as 0, `""` or `null` counts as not sent.
    fn autoincrement(&self) -> bool;
    /// The database fills it in when a create leaves it out, as the database's SQLAlchemy
    /// reflection reads it (a default, a sequence, an identity): the ORM then leaves it out
    /// too, where it would send NULL (`flow::write::insert_values`).
    fn has_default(&self) -> bool;
    /// SQLAlchemy's type of the column evaluates `None` (`should_evaluate_none`: JSON, whose
    /// `None` is JSON's `null`): the ORM writes a `None` given for it, and sends no NULL for
    /// it when it is not given.
    fn evaluates_none(&self) -> bool;
    /// How its serializer field writes the engine's query object ([`EngineType::query_object`]).
    fn query_object(&self) -> Serializer;
}

/// What the engine makes of a column's type on one database server, read once with the
/// catalog: each database's reflection maps its own kind of type to it (`PgKind`, `MyKind`,
/// SQLite's declared type), so that the rules written over [`Column`] and [`BodyColumn`] read
/// data, not a callback into the database's crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineType {
    /// The lookups its filters take.
    pub family: FilterFamily,
    /// The serializer field that reads a value given for it.
    pub input: InputField,
    /// Whether the database's SQLAlchemy reflection lets the serializer require a `NOT NULL`
    /// column of this type that has no default: every type on PostgreSQL (its reflection marks
    /// only the key's column autoincrement); on MySQL, only integer columns; on SQLite none.
    pub may_be_required: bool,
    /// SQLAlchemy's type of the dialect evaluates `None` ([`BodyColumn::evaluates_none`]): the
    /// JSON types of PostgreSQL and SQLite, none of MySQL's as the engine reads them.
    pub evaluates_none: bool,
    /// How the column's serializer field writes an object that is none of its values: the
    /// engine's query object, which an aggregate of a function the engine does not know
    /// answers (`{}` by a value field, a failure of a date-time field, the query's text by a
    /// text field, and by a PostgreSQL array's).
    pub query_object: Serializer,
    /// How `_search` reaches a column of the type: its text equals the search text (numbers),
    /// contains it (the types SQLAlchemy reads as text or JSON), or it is skipped
    /// ([`Search::of`]).
    pub search: Search,
}

impl EngineType {
    /// A type of filter `family`, read by the serializer field `input`, whose field writes a
    /// query object as `query_object` says, searched as `search` says; required where a column
    /// of it is `NOT NULL` without a default, and evaluating no `None` (override those where
    /// the database's SQLAlchemy does otherwise).
    pub fn new(
        family: FilterFamily,
        input: InputField,
        query_object: Serializer,
        search: Search,
    ) -> Self {
        EngineType {
            family,
            input,
            may_be_required: true,
            evaluates_none: false,
            query_object,
            search,
        }
    }
}

/// A column as the engine's ORM maps it on a database server, whichever; `extra` is what one
/// database keeps beside (PostgreSQL's cast, MySQL's members and qualified name), reached
/// through the column itself.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedColumn<K, E = ()> {
    /// The column name, the record's JSON key.
    pub name: String,
    /// The database's own kind of type: how its SQL casts, binds and reads the column.
    pub kind: K,
    /// What the engine makes of the type: [`EngineType`], read with `kind`.
    pub engine: EngineType,
    /// The quoted name.
    pub sql: String,
    /// `NOT NULL`.
    pub not_null: bool,
    /// The database fills it in when it is not given (a default, a sequence, an identity).
    pub has_default: bool,
    /// The key of the model (declared or promoted).
    pub primary_key: bool,
    /// SQLAlchemy's autoincrement column (`serial`, identity, `AUTO_INCREMENT`): the key's only.
    pub autoincrement: bool,
    /// A generated column (read-only).
    pub generated: bool,
    /// What the database keeps beside.
    pub extra: E,
}

impl<K, E> std::ops::Deref for MappedColumn<K, E> {
    type Target = E;

    fn deref(&self) -> &E {
        &self.extra
    }
}

impl<K, E> Column for MappedColumn<K, E> {
    fn name(&self) -> &str {
        &self.name
    }

    fn sql(&self) -> &str {
        &self.sql
    }

    fn family(&self) -> FilterFamily {
        self.engine.family
    }

    fn search(&self) -> Search {
        self.engine.search
    }
}

impl<K, E> KeyColumn for MappedColumn<K, E> {
    fn set_key(&mut self, key: bool) {
        self.primary_key = key;
        self.autoincrement &= key;
    }
}

impl<K, E> BodyColumn for MappedColumn<K, E> {
    fn input(&self) -> InputField {
        self.engine.input
    }

    /// SQLAlchemy's reflection makes a `NOT NULL` column without a default (nor sequence, nor
    /// generation) a required one, where the type allows.
    fn required(&self) -> bool {
        self.not_null
            && !self.has_default
            && !self.autoincrement
            && !self.generated
            && self.engine.may_be_required
    }

    fn generated(&self) -> bool {
        self.generated
    }

    fn primary_key(&self) -> bool {
        self.primary_key
    }

    fn autoincrement(&self) -> bool {
        self.autoincrement
    }

    fn has_default(&self) -> bool {
        self.has_default
    }

    fn evaluates_none(&self) -> bool {
        self.engine.evaluates_none
    }

    fn query_object(&self) -> Serializer {
        self.engine.query_object
    }
}

/// A column a [`MappedTable`] can make its key.
pub trait KeyColumn: Column {
    /// Makes the column the table's key (declared or promoted by the engine), or not; only
    /// the key keeps an autoincrement (SQLAlchemy's `autoincrement` is the key's alone).
    fn set_key(&mut self, key: bool);
}

/// What a database's reflection reads of a table, beside its columns and its key.
#[derive(Debug, Clone, PartialEq)]
pub struct Reflected<E> {
    /// The table in SQL, quoted (and qualified where the database qualifies it).
    pub sql: String,
    /// A base table ([`MappedTable::holds_rows`]).
    pub holds_rows: bool,
    /// A foreign key refers to it from a model, or from it to one ([`MappedTable::related`]).
    pub related: bool,
    /// What the database keeps beside.
    pub extra: E,
}

/// A table as the engine's ORM maps it on a database server, whichever: its columns, the key
/// it reads a record URL by (the first column of the primary key, else the first column,
/// which the engine promotes), the columns that tell rows apart, and how its database writes
/// it in SQL. `extra` is what one database keeps beside (MySQL's storage engine).
#[derive(Debug, Clone, PartialEq)]
pub struct MappedTable<F, E = ()> {
    /// The table name.
    pub name: String,
    /// The columns, in table order.
    pub fields: Vec<F>,
    /// Index of the key column.
    pub pk: usize,
    /// The columns the engine's ORM names a row by (its identity), in key order: every column
    /// of the primary key, or the promoted first column.
    pub identity: Vec<usize>,
    /// No key was declared (a view, a table without a primary key): the engine promoted the
    /// first column. Its queries then select only rows where it is not NULL, and rows that
    /// share its value are one record (the first the ORM reads).
    pub promoted_key: bool,
    /// The table in SQL, quoted (and qualified where the database qualifies it).
    pub table_sql: String,
    /// Every column as a record's read takes it, in table order, comma-separated.
    pub select_list: String,
    /// A base table, which holds rows of its own: not a view, a foreign table or a partition
    /// (whose rows are its parent table's).
    pub holds_rows: bool,
    /// The ORM maps a relationship of it ([`Table::has_relationships`]).
    pub related: bool,
    /// What the database keeps beside.
    pub extra: E,
    index: BTreeMap<String, usize>,
    record_keys: RecordKeys,
    identity_unique: bool,
}

impl<F: KeyColumn, E> MappedTable<F, E> {
    /// The table `name` (described by `table`) of `fields` (in table order), whose declared
    /// primary key is `key` (column names in key order, none for a view or a table without
    /// one): the key column made, promoted where none is declared, and the select list written
    /// by `select`. `None` for a table without columns, which the engine does not map.
    pub fn new(
        name: String,
        mut fields: Vec<F>,
        key: &[String],
        table: Reflected<E>,
        select: impl Fn(&F) -> String,
    ) -> Option<Self> {
        let position = |k: &String| fields.iter().position(|f| f.name() == k);
        let declared: Vec<usize> = key.iter().filter_map(position).collect();
        let promoted_key = declared.is_empty();
        let identity = if promoted_key { vec![0] } else { declared };
        let pk = *identity.first().filter(|_| !fields.is_empty())?;
        for (i, f) in fields.iter_mut().enumerate() {
            f.set_key(i == pk);
        }
        Some(MappedTable {
            select_list: fields.iter().map(select).collect::<Vec<_>>().join(", "),
            index: index_by_name(&fields),
            record_keys: RecordKeys::of(fields.iter().map(|f| f.name())),
            name,
            fields,
            pk,
            identity,
            promoted_key,
            // A declared key on a database server is never NULL (its columns are `NOT NULL`):
            // only a promoted key repeats.
            identity_unique: !promoted_key,
            table_sql: table.sql,
            holds_rows: table.holds_rows,
            related: table.related,
            extra: table.extra,
        })
    }

    /// Each table of `tables` (by name: its columns in table order, and the table as
    /// reflected) made a model ([`new`](Self::new)) with its declared key from `keys` (by table
    /// name), related where one of `foreign_keys` (`(referring, referred)` table names) joins it
    /// to a model; a table without columns is left out, as the engine leaves it.
    pub fn models(
        mut tables: BTreeMap<String, (Vec<F>, Reflected<E>)>,
        keys: &BTreeMap<String, Vec<String>>,
        foreign_keys: &[(String, String)],
        select: impl Fn(&F) -> String,
    ) -> BTreeMap<String, std::sync::Arc<Self>> {
        for (from, to) in foreign_keys {
            if tables.contains_key(from) && tables.contains_key(to) {
                for name in [from, to] {
                    if let Some((_, table)) = tables.get_mut(name) {
                        table.related = true;
                    }
                }
            }
        }
        let mut models = BTreeMap::new();
        for (name, (fields, table)) in tables {
            let key = keys.get(&name).map_or(&[][..], Vec::as_slice);
            if let Some(model) = Self::new(name.clone(), fields, key, table, &select) {
                models.insert(name, std::sync::Arc::new(model));
            }
        }
        models
    }

    /// The key is one declared column (the whole primary key): unique and never NULL, so an
    /// order that reaches it is total.
    pub fn unique_key(&self) -> bool {
        !self.promoted_key && self.identity.len() == 1
    }

    /// Says whether every row has an identity of its own ([`Table::identity_unique`]) where
    /// the database's rule is not a server's: SQLite lets a declared key's column hold NULL
    /// and a composite key repeat through them, so there only a single `NOT NULL` key is.
    pub fn set_identity_unique(&mut self, unique: bool) {
        self.identity_unique = unique;
    }
}

impl<F: Column, E> Table for MappedTable<F, E> {
    type Column = F;

    fn table_name(&self) -> &str {
        &self.name
    }

    fn columns(&self) -> &[F] {
        &self.fields
    }

    fn key_index(&self) -> usize {
        self.pk
    }

    fn column_index(&self) -> &BTreeMap<String, usize> {
        &self.index
    }

    fn promoted_key(&self) -> bool {
        self.promoted_key
    }

    fn has_relationships(&self) -> bool {
        self.related
    }

    fn key_is_whole(&self) -> bool {
        self.identity.len() == 1
    }

    fn identity(&self) -> &[usize] {
        &self.identity
    }

    /// Only a promoted key repeats, unless the database said otherwise
    /// ([`set_identity_unique`](MappedTable::set_identity_unique)).
    fn identity_unique(&self) -> bool {
        self.identity_unique
    }

    fn record_keys(&self) -> &RecordKeys {
        &self.record_keys
    }
}

/// Each column's index by name, for [`Table::column_index`].
pub fn index_by_name<C: Column>(columns: &[C]) -> BTreeMap<String, usize> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name().to_owned(), i))
        .collect()
}

/// An aggregate's or a group's column (`_x_column`, `_y_column`) by name, the key when `None`;
/// the engine's `getattr` fails on an unknown one.
fn column<'m, T: Table>(
    model: &'m T,
    param: &str,
    name: Option<&str>,
) -> Result<&'m T::Column, EngineError> {
    match name {
        None => Ok(model.pk_field()),
        Some(n) => model.field(n).ok_or_else(|| {
            fails(
                param,
                format!("Table {:?} does not have column {n:?}.", model.table_name()),
            )
        }),
    }
}

/// An aggregate's column (`_y_column`, the key when absent). The engine's aggregate view looks
/// it up among its serializer's fields first (an unknown one is a `400`) unless the function
/// is `count`, which goes straight to `getattr` (a `500`, refused in strict mode).
pub fn aggregate_column<'m, T: Table>(
    model: &'m T,
    req: &AggregateRequest,
) -> Result<&'m T::Column, EngineError> {
    column(model, "_y_column", req.column.as_deref())
        .map_err(|e| if req.func == "count" { e } else { e.strict() })
}

/// What a group request names, read in the engine's order.
#[derive(Debug)]
pub struct GroupColumns<'m, C> {
    /// The key columns (`_x_column`).
    pub xs: Vec<&'m C>,
    /// The value column (`_y_column`, the key when absent).
    pub y: &'m C,
    /// The function.
    pub func: AggregateFunc,
}

/// A group's columns and function ([`GroupColumns`]); `None` for a function the engine does not
/// know (it filters the records with `false`: the answer is an empty list).
pub fn group_columns<'m, T: Table>(
    model: &'m T,
    req: &GroupRequest,
) -> Result<Option<GroupColumns<'m, T::Column>>, EngineError> {
    let xs = req
        .x_columns
        .iter()
        .map(|x| column(model, "_x_column", Some(x)))
        .collect::<Result<Vec<_>, _>>()?;
    let y = column(model, "_y_column", req.y_column.as_deref())?;
    Ok(known(&req.y_func)?.map(|func| GroupColumns { xs, y, func }))
}

/// How a summary's value is written ([`Summary::written`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// By the value column's serializer field (an integer field for `count`), in the engine's
    /// time zone: an aggregate's value, which a field may fail to write.
    Serialized,
    /// By the engine's JSON encoder, as the database's driver read it: a group's keys and
    /// values.
    Encoded,
}

/// What the engine computes of the selected records in one statement: an aggregate (no key,
/// one row, its value written by the column's serializer) or a group (a row per key, at most
/// [`limit`](Self::limit), written as read). A database renders its statement and reads its
/// rows; the flow does the rest (`flow::aggregate`).
#[derive(Debug)]
pub struct Summary<'m, C> {
    /// The key columns (none for an aggregate), the value column and the function.
    pub columns: GroupColumns<'m, C>,
    /// Each key's lookup (`_x_lookup`), by position; a key without one is the column itself.
    pub lookups: Vec<String>,
    /// The most rows answered (`None`: an aggregate, whose statement has one row).
    pub limit: Option<u64>,
    /// How the value is written.
    pub written: Written,
}

impl<'m, C> Summary<'m, C> {
    /// An aggregate's: `func` of `y` over every selected record.
    pub fn aggregate(y: &'m C, func: AggregateFunc) -> Self {
        Self {
            columns: GroupColumns {
                xs: Vec::new(),
                y,
                func,
            },
            lookups: Vec::new(),
            limit: None,
            written: Written::Serialized,
        }
    }

    /// A group's, as `req` asks for it (`_per_page` within 1 and [`GroupRequest::MAX_LIMIT`]).
    pub fn group(columns: GroupColumns<'m, C>, req: &GroupRequest) -> Self {
        Self {
            columns,
            lookups: req.x_lookups.clone(),
            limit: Some(req.limit.clamp(1, GroupRequest::MAX_LIMIT)),
            written: Written::Encoded,
        }
    }

    /// The lookup of the `i`th key, if the request gave one.
    pub fn lookup(&self, i: usize) -> Option<&str> {
        self.lookups.get(i).map(String::as_str)
    }

    /// Whether the value is written as the engine's encoder writes it (a group's).
    pub fn encoded(&self) -> bool {
        self.written == Written::Encoded
    }
}

/// What an aggregate's or a group's `_order_by` does to the selection.
#[derive(Debug)]
pub enum OrderBy<'m, C> {
    /// Absent or empty.
    None,
    /// One character: the engine filters with `false`, so nothing is selected.
    Nothing,
    /// Columns, descending when `true`.
    By(Vec<(&'m C, bool)>),
}

impl<C: Column> OrderBy<'_, C> {
    /// The columns' names, descending when `true`; `None` unless columns are given.
    pub fn names(&self) -> Option<Vec<(&str, bool)>> {
        match self {
            OrderBy::By(columns) => Some(columns.iter().map(|(c, d)| (c.name(), *d)).collect()),
            OrderBy::None | OrderBy::Nothing => None,
        }
    }
}

/// Reads an aggregate's or a group's `_order_by` as the engine does: given at most once, one
/// character empties the selection, and every other name must be a column (the engine fails
/// on an unknown one).
pub fn order_by<'m, T: Table>(
    model: &'m T,
    values: &[String],
) -> Result<OrderBy<'m, T::Column>, EngineError> {
    let value = match values {
        [] => return Ok(OrderBy::None),
        [v] => v,
        _ => {
            return Err(fails(
                "_order_by",
                "Give _order_by at most once (the data engine fails on a repeated one).",
            ));
        }
    };
    if value.is_empty() {
        return Ok(OrderBy::None);
    }
    if value.chars().count() < 2 {
        return Ok(OrderBy::Nothing);
    }
    let mut columns = Vec::new();
    for part in value.split(',') {
        let (desc, name) = match part.strip_prefix('-') {
            Some(name) => (true, name),
            None => (false, part),
        };
        let column = model.field(name).ok_or_else(|| {
            fails(
                "_order_by",
                format!("Unknown field {name:?} in _order_by {value:?}."),
            )
        })?;
        columns.push((column, desc));
    }
    Ok(OrderBy::By(columns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Col, table};

    fn names<'m>(order: &OrderBy<'m, Col>) -> Vec<(&'m str, bool)> {
        match order {
            OrderBy::By(cols) => cols.iter().map(|(c, d)| (c.0, *d)).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn columns_are_found_by_name_and_the_key_stands_for_none() {
        let t = table();
        assert_eq!(column(&t, "_y_column", None).unwrap().0, "id");
        assert_eq!(column(&t, "_x_column", Some("b")).unwrap().0, "b");
        assert_eq!(t.field_index("b"), Some(2));
        let e = column(&t, "_x_column", Some("c")).unwrap_err().to_string();
        assert!(e.contains(r#"Table "t" does not have column "c""#), "{e}");
    }

    #[test]
    fn an_unknown_aggregate_column_fails_as_the_engine_does() {
        let t = table();
        let req = |func: AggregateFunc| AggregateRequest::new(func).column("x");
        // `count` reaches `getattr` (500), the others the serializer's fields (400).
        let count = aggregate_column(&t, &req(AggregateFunc::Count)).unwrap_err();
        assert!(
            matches!(count, EngineError::EngineFails { .. }),
            "{count:?}"
        );
        let sum = aggregate_column(&t, &req(AggregateFunc::Sum)).unwrap_err();
        assert!(matches!(sum, EngineError::Invalid { .. }), "{sum:?}");
        let key = aggregate_column(&t, &AggregateRequest::new(AggregateFunc::Max)).unwrap();
        assert_eq!(key.0, "id");
    }

    #[test]
    fn a_group_reads_its_columns_before_its_function() {
        let t = table();
        let mut req = GroupRequest::new("b", AggregateFunc::Sum);
        let g = group_columns(&t, &req).unwrap().unwrap();
        assert_eq!((g.xs.len(), g.xs[0].0, g.y.0), (1, "b", "id"));
        assert_eq!(g.func, AggregateFunc::Sum);
        req.y_func = "median".to_owned();
        assert!(group_columns(&t, &req).unwrap().is_none());
        // An unknown column fails even with an unknown function.
        req.x_columns = vec!["nope".to_owned()];
        assert!(group_columns(&t, &req).is_err());
    }

    #[test]
    fn a_summary_says_how_many_rows_and_how_its_value_is_written() {
        let t = table();
        let mut req = GroupRequest::new("b", AggregateFunc::Sum);
        req.x_lookups = vec!["date_day".to_owned()];
        let group =
            |req: &GroupRequest| Summary::group(group_columns(&t, req).unwrap().unwrap(), req);
        let g = group(&req);
        assert_eq!(
            (g.limit, g.lookup(0), g.lookup(1)),
            (Some(10_000), Some("date_day"), None)
        );
        assert!(g.encoded());
        // `_per_page` is kept within 1 and the engine's most.
        req.limit = 0;
        assert_eq!(group(&req).limit, Some(1));
        req.limit = u64::MAX;
        assert_eq!(group(&req).limit, Some(GroupRequest::MAX_LIMIT));
        let a = Summary::aggregate(t.pk_field(), AggregateFunc::Max);
        assert_eq!(
            (a.columns.xs.len(), a.columns.y.0, a.limit),
            (0, "id", None)
        );
        assert_eq!(a.written, Written::Serialized);
        assert!(!a.encoded());
    }

    #[test]
    fn order_by_reads_as_the_engine_does() {
        let t = table();
        let one = |v: &str| order_by(&t, &[v.to_owned()]);
        assert!(matches!(order_by(&t, &[]).unwrap(), OrderBy::None));
        assert!(matches!(one("").unwrap(), OrderBy::None));
        assert!(matches!(one("a").unwrap(), OrderBy::Nothing));
        assert!(matches!(one("é").unwrap(), OrderBy::Nothing));
        assert_eq!(names(&one("-b,id").unwrap()), [("b", true), ("id", false)]);
        let e = one("b,x").unwrap_err().to_string();
        assert!(e.contains(r#"Unknown field "x""#), "{e}");
        let twice = order_by(&t, &["a".to_owned(), "b".to_owned()]).unwrap_err();
        assert!(twice.to_string().contains("at most once"), "{twice}");
    }

    #[test]
    fn the_filter_grammar_sees_every_column_in_order() {
        let t = table();
        let names: Vec<&str> = t.filter_fields().iter().map(|f| f.name).collect();
        assert_eq!(names, ["a", "id", "b"]);
    }
}
