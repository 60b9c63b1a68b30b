//! PostgreSQL's words (`svc_emulator_core::dialect`): `false`, `ILIKE`, a JSON value's text, and how its
//! statements' text reads (dollar quotes, `E'...'` strings, nested comments, `::` casts).
//!
//! A list's selection and order as the engine builds them on PostgreSQL; an aggregate's and a
//! group's statements (`flow::aggregate`); how every statement binds its values (as text,
//! [`cast`] to their type).
//!
//! The engine's SQLAlchemy writes the same expressions as on SQLite, in PostgreSQL's dialect,
//! and psycopg2 sends each value as a literal typed by its Python type: a float as a numeric
//! literal (`34.0`), a bool as `true`, a naive date-time as `'...'::timestamp` and an aware one
//! as `'...'::timestamptz`, a string as an untyped literal, which takes the type of the column
//! it is compared with. Here every value is bound as text and cast to that same type, so
//! PostgreSQL compares, matches (`ILIKE`, with its Unicode case folding) and fails exactly as
//! it does for the engine.

use crate::PgResource;
use crate::schema::{PgField, PgModel, compared_as};
use crate::types::{Offset, PgKind};
use serde_json::Value as Json;
use svc_emulator_core::dialect::Dialect;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::clause::Where;
use svc_emulator_core::dialect::lookup::{Cmp, Filter, lookup_condition};
use svc_emulator_core::dialect::relation::RelationSql;
use svc_emulator_core::dialect::user_statement::{EngineDriver, ListItem, psycopg2_list};

use svc_engine::AggregateFunc;
use svc_engine::EngineError;
use svc_engine::Lookup;
use svc_engine::Selection;
use svc_engine::aggregate::{date_unit, fails};
use svc_engine::field_input::InputDateTime;
use svc_engine::filter::{Arg, PyNumber, ValueReader};
use svc_engine::python::Py;
use svc_engine::python::floats::py_float_repr;
use svc_engine::python::json::{PyJson, parse_py_json, py_json_dumps};
use svc_engine::python::numbers::{py_float, py_strip};
use svc_engine::python::text::py_text;
use svc_engine::relation::Use;
use svc_engine::sql_answer::query_error;
use svc_engine::sql_params::{line_end, skip_quoted};
use svc_engine::time_zone::{TZ_PARAM, tz_given, tz_offset, tz_on_write, unreadable_tz};
use svc_engine::types::FilterFamily;

/// Binds `value` (NULL for `None`) as text and returns `CAST($n::text AS ty)`: PostgreSQL reads
/// the text as it reads a literal of `ty`.
pub(crate) fn cast(params: &mut Binds, value: Option<String>, ty: &str) -> String {
    let value = params.bind::<PgResource>(text_or_null(value));
    format!("CAST({value} AS {ty})")
}

/// A text, or NULL for `None`: a cell read as text, a value bound as text.
pub(crate) fn text_or_null(value: Option<String>) -> Bind {
    value.map_or(Bind::Null, Bind::Text)
}

/// The PostgreSQL type a value is sent as, which its placeholder names (`$n::type`): text (and
/// NULL) as `text`, which the statements cast further; bytes as `bytea`; the arrays as the
/// catalog statements declare them. `driver` sends each value as this type.
pub(crate) fn sent_as(value: &Bind) -> &'static str {
    match value {
        Bind::Null | Bind::Text(_) => "text",
        Bind::Bytes(_) => "bytea",
        Bind::Bool(_) => "bool",
        Bind::Int(_) => "int8",
        Bind::UInt(_) => "numeric",
        Bind::Float(_) => "float8",
        Bind::DateTime(..) => "timestamp",
        Bind::Time(..) => "interval",
        Bind::Texts(_) => "text[]",
        Bind::Ints(_) => "int8[]",
        Bind::Bools(_) => "bool[]",
    }
}

/// A Python value as psycopg2 writes it into SQL, with the type PostgreSQL gives the literal.
#[derive(Debug, Clone)]
pub(crate) enum Literal {
    /// A float: a numeric literal (`34.0`); NaN and infinities `'NaN'::float`.
    Float(f64),
    /// An int: an integer literal.
    Int(String),
    /// `true` / `false`.
    Bool(bool),
    /// A date-time: `::timestamp` when naive, `::timestamptz` when aware.
    DateTime(InputDateTime),
    /// A string: untyped, so it takes `cast` (the column's type).
    Str(String),
}

/// The exact decimal value of a finite float's `repr` (the numeric literal psycopg2 writes),
/// as the integers just at or below and at or above it, when both fit an `i64`.
fn decimal_floor_ceil(repr: &str) -> Option<(i64, i64)> {
    let (negative, text) = match repr.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, repr),
    };
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: i128 = 0;
    for c in int_digits.bytes().chain(frac_digits.bytes()) {
        if !c.is_ascii_digit() {
            return None;
        }
        digits = digits.checked_mul(10)?.checked_add(i128::from(c - b'0'))?;
    }
    // value = digits * 10^scale
    let scale = exp - i32::try_from(frac_digits.len()).ok()?;
    let (whole, exact) = if scale >= 0 {
        let factor = 10i128.checked_pow(u32::try_from(scale).ok()?)?;
        (digits.checked_mul(factor)?, true)
    } else {
        match 10i128.checked_pow(scale.unsigned_abs()) {
            Some(factor) => (digits / factor, digits % factor == 0),
            // Below 10^-38: digits (at most 17 of them) are all fraction.
            None => (0, digits == 0),
        }
    };
    let (floor, ceil) = match (negative, exact) {
        (_, true) if negative => (-whole, -whole),
        (_, true) => (whole, whole),
        (true, false) => (-whole - 1, -whole),
        (false, false) => (whole, whole + 1),
    };
    Some((i64::try_from(floor).ok()?, i64::try_from(ceil).ok()?))
}

impl Literal {
    /// `col op value` for an integer column and a finite float, written as an integer
    /// comparison with the same answer for every row (NULLs included: a comparison with NULL
    /// is NULL either way), so that PostgreSQL can use the column's index: psycopg2's numeric
    /// literal would make PostgreSQL cast the column to `numeric` instead. `col > 5.5` is
    /// `col > 5`, `col >= 5.5` is `col >= 6`; `=` with a value that is not a whole number, or
    /// a value beyond `bigint`, keeps the numeric comparison.
    fn integer_comparison(&self, op: Cmp, field: &PgField) -> Option<(Cmp, i64)> {
        if field.kind != PgKind::Integer {
            return None;
        }
        let (floor, ceil) = match self {
            Literal::Float(f) if f.is_finite() => decimal_floor_ceil(&py_float_repr(*f))?,
            Literal::Int(i) => {
                let i = i.parse().ok()?;
                (i, i)
            }
            _ => return None,
        };
        Some(match op {
            Cmp::Eq if floor == ceil => (Cmp::Eq, floor),
            Cmp::Eq => return None,
            Cmp::Gt => (Cmp::Gt, floor),
            Cmp::Lte => (Cmp::Lte, floor),
            Cmp::Gte => (Cmp::Gte, ceil),
            Cmp::Lt => (Cmp::Lt, ceil),
        })
    }

    /// `col op value`, with the value bound as the column `field` would receive it; against
    /// an integer column in the column's own type where that gives the same answer.
    pub(crate) fn compare(&self, op: Cmp, params: &mut Binds, field: &PgField) -> String {
        match self.integer_comparison(op, field) {
            Some((op, i)) => {
                let value = cast(params, Some(i.to_string()), "bigint");
                format!("{} {} {value}", field.sql, op.sql())
            }
            None => {
                let value = match self {
                    // `col = 'x'` reads the literal as the operator's type, `col IN ('x')` as
                    // the column's.
                    Literal::Str(s) => cast(params, Some(s.clone()), compared_as(field)),
                    _ => self.bind(params, field),
                };
                format!("{} {} {value}", field.sql, op.sql())
            }
        }
    }

    /// Binds the literal as the column `field` would receive it (an `in` item: against an
    /// integer column, a whole number as a `bigint`).
    pub(crate) fn bind(&self, params: &mut Binds, field: &PgField) -> String {
        if let Some((Cmp::Eq, i)) = self.integer_comparison(Cmp::Eq, field) {
            return cast(params, Some(i.to_string()), "bigint");
        }
        match self {
            Literal::Float(f) if f.is_finite() => cast(params, Some(py_float_repr(*f)), "numeric"),
            Literal::Float(f) => {
                let text = if f.is_nan() {
                    "NaN"
                } else if *f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                };
                cast(params, Some(text.to_owned()), "double precision")
            }
            Literal::Int(i) => cast(params, Some(i.clone()), "numeric"),
            Literal::Bool(b) => cast(params, Some(b.to_string()), "boolean"),
            Literal::DateTime(dt) => {
                let (text, ty) = datetime_literal(dt);
                cast(params, Some(text), ty)
            }
            Literal::Str(s) => cast(params, Some(s.clone()), &field.cast),
        }
    }
}

/// psycopg2's literal of a Python date-time: ISO text, `timestamptz` when it has an offset.
pub(crate) fn datetime_literal(dt: &InputDateTime) -> (String, &'static str) {
    let stored = dt.naive_text();
    match dt.offset {
        Some((sign, h, m)) => (
            format!("{stored}{sign}{h:02}:{m:02}"),
            "timestamp with time zone",
        ),
        None => (stored, "timestamp without time zone"),
    }
}

/// One filter on PostgreSQL.
type Ctx<'a> = Filter<'a, PgField>;

/// A filter's values as the engine's filter fields read them, as psycopg2's literals.
trait Literals {
    /// A number.
    fn number(&self, raw: &str) -> Result<Literal, EngineError>;
    /// A value of `exact`, `gt`, `gte`, `lt`, `lte` and each `in` item.
    fn literal(&self, raw: &str, in_list: bool) -> Result<Literal, EngineError>;
    /// A `money` column's value.
    fn money(&self, raw: &str) -> Result<Literal, EngineError>;
}

impl Literals for Ctx<'_> {
    fn number(&self, raw: &str) -> Result<Literal, EngineError> {
        Ok(match self.reader().number(raw)? {
            PyNumber::Int(i) => Literal::Int(i.to_string()),
            PyNumber::Float(f) => Literal::Float(f),
        })
    }

    /// A value of `exact`, `gt`, `gte`, `lt`, `lte` and each `in` item, as the engine's
    /// filter field reads it.
    fn literal(&self, raw: &str, in_list: bool) -> Result<Literal, EngineError> {
        if self.field.kind == PgKind::Money {
            return self.money(raw);
        }
        Ok(match self.field.kind.family() {
            FilterFamily::Number => self.number(raw)?,
            FilterFamily::Boolean => Literal::Bool(self.boolean(raw)?),
            // `safe_date` passes a date column's value on as the text of its date, which
            // PostgreSQL reads as a date. An `in` item is not `safe_date`'s: the column's
            // field, a `CharField` (`DATE` is not in the engine's type table), passes the text
            // on as given, an untyped literal PostgreSQL reads as a date
            // (`2024-01-05T10:00:00` is 2024-01-05), as MySQL and SQLite read theirs.
            FilterFamily::Date if in_list => Literal::Str(raw.to_owned()),
            FilterFamily::Date => Literal::Str(self.reader().date_text(raw)?),
            FilterFamily::DateTime => Literal::DateTime(self.datetime(raw)?),
            FilterFamily::Text | FilterFamily::Json => Literal::Str(raw.to_owned()),
        })
    }

    /// A `money` column's value: its serializer field is a `FloatField` (`MONEY` in the
    /// engine's type table), so the value is a float, which PostgreSQL then cannot compare
    /// with `money` (the engine fails).
    fn money(&self, raw: &str) -> Result<Literal, EngineError> {
        let reader = ValueReader {
            family: FilterFamily::Number,
            ..self.reader()
        };
        Ok(Literal::Float(match reader.number(raw)? {
            PyNumber::Float(f) => f,
            PyNumber::Int(i) => i as f64,
        }))
    }
}

/// psycopg2's literal of a Python list (its `list_quote`), so that PostgreSQL types and casts
/// the items as it does for the engine (`ARRAY[1]::integer[]` matches, `ARRAY['a']::integer[]`
/// fails): `ARRAY[...]` of the items as psycopg2 writes them; an empty list is `'{}'`, and an
/// empty list inside another is `ARRAY[]`; a list of nothing but NULLs (or of such lists) is
/// the text `'{NULL,...}'`, which the `ARRAY` constructor could not type. A `dict` cannot be
/// written (the engine fails).
fn array_literal(ctx: &Ctx<'_>, items: &[PyJson]) -> Result<String, EngineError> {
    psycopg2_list(
        items,
        py_item,
        &mut (),
        &mut |item, _| py_literal(ctx, item),
        &mut |text, _| format!("'{text}'"),
    )
}

/// A Python value as [`psycopg2_list`] sees it.
fn py_item(item: &PyJson) -> ListItem<'_, PyJson> {
    match item {
        PyJson::None => ListItem::Null,
        PyJson::List(inner) => ListItem::List(inner),
        _ => ListItem::Value,
    }
}

/// One Python value as psycopg2 writes it into SQL (a value it cannot write fails when the
/// statement runs: [`Filter::fails_when_run`](svc_emulator_core::dialect::lookup::Filter::fails_when_run)).
fn py_literal(ctx: &Ctx<'_>, value: &PyJson) -> Result<String, EngineError> {
    let fails = |why: &str| {
        ctx.fails_when_run(format!(
            "Filter {:?}: {why}, which the data engine cannot send to PostgreSQL (it fails \
             with a 500).",
            ctx.key
        ))
    };
    Ok(match value {
        PyJson::None => "NULL".to_owned(),
        PyJson::Bool(b) => b.to_string(),
        // Parenthesised so that a sign never joins the text before it.
        PyJson::Int(i) => format!("({i})"),
        PyJson::Float(f) if f.is_nan() => "'NaN'::float".to_owned(),
        PyJson::Float(f) if f.is_infinite() => if *f > 0.0 {
            "'Infinity'::float"
        } else {
            "'-Infinity'::float"
        }
        .to_owned(),
        PyJson::Float(f) => format!("({})", py_float_repr(*f)),
        PyJson::Str(s) if s.contains('\0') => fails("a NUL character in a value"),
        // `E'...'` reads the same whatever `standard_conforming_strings` says.
        PyJson::Str(s) => format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
        PyJson::List(items) => array_literal(ctx, items)?,
        PyJson::Dict(_) => fails("a JSON object as an array item"),
    })
}

/// A `WHERE` clause and its values, as tokio-postgres binds them.
pub(crate) type PgWhere = Where<Binds>;

/// PostgreSQL's always-false condition.
pub(crate) const NEVER: &str = "false";

/// PostgreSQL's SQL of a selection's parts (`flow::filter`).
impl Dialect for PgResource {
    type Model = PgModel;
    type Field = PgField;

    const NEVER: &'static str = NEVER;

    const RESERVED_WORDS: &'static str = include_str!("reserved_words.txt");
    const ENGINE_DRIVER: EngineDriver = EngineDriver::Psycopg2;

    fn like_any_case(text: &str, pattern: &str) -> String {
        format!("{text} ILIKE {pattern}")
    }

    /// The column read as text: `col::text` (PostgreSQL compares a JSON column with nothing).
    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR {col}::text = 'null')")
    }

    /// Strings (backslash escapes in `E'...'`), quoted names, comments, dollar quotes and `::`
    /// casts.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            b'\'' => skip_quoted(
                b,
                i,
                b'\'',
                b[..i].last().is_some_and(|c| *c == b'E' || *c == b'e'),
            ),
            b'"' => skip_quoted(b, i, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => skip_block_comment(b, i),
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                return Some(Err(query_error(
                    "Positional parameters ($1) are not supported: name them (:name) and give \
                     their values in params_obj.",
                )));
            }
            b'$' => skip_dollar_quote(b, i),
            b':' if b.get(i + 1) == Some(&b':') => i + 2,
            _ => return None,
        }))
    }

    const RELATED: RelationSql<PgModel> = RelationSql {
        table_sql: |m| m.table_sql.clone(),
        column_sql: |f| f.sql.clone(),
        outer_sql: |f| f.sql.clone(),
    };

    /// `$n::` the type the value is sent as (`sent_as`): every bound text is `$n::text`.
    fn placeholder(n: usize, value: &Bind) -> String {
        format!("${n}::{}", sent_as(value))
    }

    /// Read as text, found again by the text cast to the column's type.
    fn identity_sql(col: &str, ty: &str, n: usize) -> (String, String) {
        (format!("{col}::text"), format!("{col} = ${n}::text::{ty}"))
    }

    /// Enums and types SQLAlchemy does not know (`NullType`) are cast to text before `ILIKE`,
    /// as the engine does.
    fn likes_as_text(field: &PgField) -> bool {
        matches!(field.kind, PgKind::Enum | PgKind::Unknown)
    }

    /// The text inside `%...%` of `icontains`: `'%{}%'.format(value)` of the field's value.
    fn contained(ctx: &Ctx<'_>, raw: &str) -> Result<String, EngineError> {
        if ctx.field.kind == PgKind::Money
            && let Literal::Float(f) = ctx.money(raw)?
        {
            return Ok(py_float_repr(f));
        }
        Ok(match ctx.field.kind.family() {
            FilterFamily::Number => match ctx.number(raw)? {
                Literal::Float(f) => py_float_repr(f),
                Literal::Int(i) => i,
                _ => raw.to_owned(),
            },
            FilterFamily::Date | FilterFamily::DateTime => ctx.datetime(raw)?.python_str(),
            FilterFamily::Boolean | FilterFamily::Text | FilterFamily::Json => raw.to_owned(),
        })
    }

    fn compared(
        ctx: &Ctx<'_>,
        raw: &str,
        in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Ok(ctx.literal(raw, in_list)?.bind(params, ctx.field))
    }

    /// An integer column compared with a number beyond its type keeps the comparison's truth,
    /// and text is read as the operator's type (`Literal::compare`).
    fn compare(
        ctx: &Ctx<'_>,
        op: Cmp,
        raw: &str,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Ok(ctx.literal(raw, false)?.compare(op, params, ctx.field))
    }

    /// The engine's JSON `exact` and `in` on PostgreSQL (its `JSONField` reads the value with
    /// `json.loads` when it can): containment of a JSON text, `col @> '...'`. For `exact` the
    /// text is `json.dumps(str(value))`, a JSON string, so only string values ever match; for an
    /// `in` item it is `json.dumps(item)`. A value Python reads as a float adds containment of
    /// that number, which PostgreSQL refuses for a JSON number or a boolean (`jsonb @> integer`:
    /// the engine fails, `500`). Arrays: `col @> ARRAY[value]`.
    fn json_match(
        ctx: &Ctx<'_>,
        raw: &str,
        in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let field = ctx.field;
        if field.kind.is_array() {
            // `column.contains([value])`, the value read by the `JSONField`.
            let item = parse_py_json(raw).unwrap_or_else(|_| PyJson::Str(raw.to_owned()));
            let array = array_literal(ctx, std::slice::from_ref(&item))?;
            return Ok(format!("{} @> {array}::{}", field.sql, field.cast));
        }
        let value = parse_py_json(raw).unwrap_or_else(|_| PyJson::Str(raw.to_owned()));
        let col = format!("CAST({} AS JSONB)", field.sql);
        let text = if in_list {
            py_json_dumps(&value)
        } else {
            py_json_dumps(&PyJson::Str(py_text(&value)))
        };
        let mut parts = vec![format!("{col} @> {}", cast(params, Some(text), "jsonb"))];
        match &value {
            PyJson::Int(_) | PyJson::Float(_) | PyJson::Bool(_) => {
                // PostgreSQL refuses the statement when it runs.
                return Ok(ctx.fails_when_run(format!(
                    "Filter {:?} compares a JSON field with a number or a boolean, which the \
                     data engine cannot do on PostgreSQL (jsonb @> integer: it fails with a 500); \
                     JSON filters match strings.",
                    ctx.key
                )));
            }
            PyJson::Str(s) if py_float(py_strip(s)).is_some() => {
                parts.push(format!(
                    "{col} @> {}",
                    cast(params, Some(s.clone()), "jsonb")
                ));
            }
            _ => {}
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            format!("({})", parts.join(" OR "))
        })
    }

    fn time_zone(selection: &Selection, use_: Use) -> Result<(), EngineError> {
        match tz_given(selection) {
            Some(tz) => time_zone(tz, use_, selection.lenient),
            None => Ok(()),
        }
    }

    /// One filter's SQL condition (before `exclude__` negation).
    fn condition(
        ctx: &Ctx<'_>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let field = ctx.field;
        let col = &field.sql;
        // SQLAlchemy's `LargeBinary` hands psycopg2 the text, which cannot be bytes (`can't escape
        // str to binary`), and `bytea` has no `ILIKE`; a `bit` is compared with the Python bool
        // the engine's boolean field makes of the value (`bit = boolean` does not exist).
        let unusable = match field.kind {
            PgKind::Bytea => Some("bytea"),
            PgKind::Bit => Some("bit"),
            _ => None,
        };
        if let Some(ty) = unusable.filter(|_| !matches!(lookup, Lookup::IsNull | Lookup::IsEmpty)) {
            // PostgreSQL refuses the statement (or psycopg2 the value) when it runs.
            return Ok(ctx.fails_when_run(format!(
                "Filter {:?} compares a {ty} field with a value, which the data engine cannot \
                 do on PostgreSQL (it fails with a 500); only isnull and isempty work.",
                ctx.key
            )));
        }
        if lookup == Lookup::In && field.kind.is_array() {
            // `column.overlap(values)`, each value read by the `JSONField`.
            let values: Vec<PyJson> = arg
                .items()
                .iter()
                .map(|v| parse_py_json(v).unwrap_or_else(|_| PyJson::Str((*v).to_owned())))
                .collect();
            let array = array_literal(ctx, &values)?;
            return Ok(format!("{col} && {array}::{}", field.cast));
        }
        lookup_condition::<Self>(ctx, lookup, arg, params)
    }

    /// Number columns' text equals the search text; text and JSON columns' text contains it
    /// (`ILIKE`).
    fn binary(field: &PgField) -> bool {
        field.kind == PgKind::Bytea
    }

    fn relation_value(field: &PgField, raw: &str, params: &mut Binds) -> String {
        cast(params, Some(raw.to_owned()), compared_as(field))
    }
}

/// `tz` as the engine reads it on PostgreSQL (svc-engine/src/time_zone.rs): a UTC offset it sets as the
/// session's time zone, which the read then runs in (`PgResource::client_in`).
/// [decision: stricter] An update or a delete with `tz` is refused: the engine commits the
/// session's zone with it, and its pooled connection answers later requests in that zone. A
/// zone name is refused too: the engine reads some abbreviations (`EST`) from dateparser's table
/// and fails on the rest; the emulator takes offsets.
fn time_zone(tz: &str, use_: Use, lenient: bool) -> Result<(), EngineError> {
    if use_ == Use::Write {
        return Err(tz_on_write());
    }
    if tz_offset(tz).is_some() {
        return Ok(());
    }
    if !tz.is_empty()
        && tz
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '/' || c == '_')
    {
        return Err(EngineError::stricter(
            TZ_PARAM,
            format!(
                "tz={tz:?} is a zone name: the emulator reads UTC offsets only (+HH:MM, -HH:MM, \
                 UTC); the data engine reads some abbreviations and fails on other names."
            ),
        ));
    }
    Err(unreadable_tz(tz, lenient))
}

/// The end of a (nested) block comment starting at `at`.
fn skip_block_comment(b: &[u8], at: usize) -> usize {
    let mut depth = 0;
    let mut i = at;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// The end of a dollar-quoted string `$tag$...$tag$` starting at `at`, or `at + 1` when the
/// `$` starts none.
fn skip_dollar_quote(b: &[u8], at: usize) -> usize {
    let mut end = at + 1;
    while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
        end += 1;
    }
    if b.get(end) != Some(&b'$') {
        return at + 1;
    }
    let tag = &b[at..=end];
    let body = end + 1;
    b[body..]
        .windows(tag.len())
        .position(|w| w == tag)
        .map_or(b.len(), |p| body + p + tag.len())
}

// Aggregates and groups (`flow::aggregate`): PostgreSQL's own `count`, `sum`, `min`, `max` and
// `avg` (so `sum` of a `bigint` is a `numeric`, `avg` of integers a `numeric`), and a group's
// date lookups as `date_trunc` with the engine's units (`date_second` truncates to the minute,
// as the engine's table says; `week` and `quarter` work). Each value is read as text beside its
// type, and written as the engine writes the value psycopg2 reads (`types::read_held`): an
// aggregate by the y column's serializer field, group rows by the engine's JSON encoder (a
// `Decimal` as a float, an aware date-time in UTC ending in `Z`).

/// The aggregate's value written by the y column's serializer field (an integer field for
/// `count`).
pub(crate) fn serialized(func: AggregateFunc, field: &PgField, v: &Py, tz: Offset) -> Json {
    if func == AggregateFunc::Count {
        return v.encoded();
    }
    v.serialized(field.kind.serializer(), tz)
}

/// Group values the engine's JSON encoder cannot write whatever they are (it fails, `500`):
/// aware times (`JSON can't represent timezone-aware times`) and ranges (`Object of type
/// NumericRange is not JSON serializable`); the `min` or `max` of a `bytea`. `bytea` keys are
/// written when they are UTF-8 ([`Py::encodable`]). `y`: the value's column where the encoder
/// writes the value (a group's), not a serializer.
pub(crate) fn unencodable(
    xs: &[&PgField],
    y: Option<&PgField>,
    func: AggregateFunc,
) -> Result<(), EngineError> {
    let y_kept = y.filter(|_| matches!(func, AggregateFunc::Min | AggregateFunc::Max));
    for (param, field) in xs
        .iter()
        .map(|x| ("_x_column", *x))
        .chain(y_kept.map(|y| ("_y_column", y)))
    {
        let what = match field.kind {
            PgKind::Bytea if param == "_y_column" => "bytea",
            PgKind::TimeTz => "time with time zone",
            PgKind::Range => "range",
            _ => continue,
        };
        return Err(fails(
            param,
            format!(
                "Cannot group by or show the {what} field {:?}: the data engine's JSON encoder \
                 fails on its values (500).",
                field.name
            ),
        ));
    }
    Ok(())
}

/// `date_trunc`'s unit for the engine's `date_<unit>` lookups.
fn trunc_unit(param: &str) -> Option<&'static str> {
    Some(match param {
        "microsecond" => "microseconds",
        "millisecond" => "milliseconds",
        "second" | "minute" => "minute",
        "hour" => "hour",
        "day" => "day",
        "week" => "week",
        "month" => "month",
        "quarter" => "quarter",
        "year" => "year",
        _ => return None,
    })
}

fn is_date_column(field: &PgField) -> bool {
    field.kind.holds_dates()
}

/// The SQL of a group key: `date_trunc('unit', col)` or the column.
pub(crate) fn group_key(field: &PgField, raw: Option<&str>) -> Result<String, EngineError> {
    Ok(
        match date_unit(&field.name, is_date_column(field), raw)?.and_then(trunc_unit) {
            Some(unit) => format!("date_trunc('{unit}', {})", field.sql),
            None => field.sql.clone(),
        },
    )
}

/// The name of the type of `expr` as psycopg2 reads it (`pg_typeof`'s text): a domain's base
/// type, since PostgreSQL describes a domain's values by their base type.
pub(crate) fn type_of(expr: &str) -> String {
    format!(
        "(SELECT (CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END)::regtype::text \
         FROM pg_catalog.pg_type t WHERE t.oid = pg_typeof({expr}))"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_emulator_core::dialect::group::{Quoting, query_text};

    fn literal(items: &[PyJson]) -> String {
        let field = PgField {
            name: "arr".to_owned(),
            kind: PgKind::Array,
            engine: PgKind::Array.engine_type(),
            extra: crate::schema::PgCast {
                cast: "integer[]".to_owned(),
            },
            not_null: false,
            has_default: false,
            primary_key: false,
            autoincrement: false,
            generated: false,
            sql: "\"arr\"".to_owned(),
        };
        let ctx = Ctx {
            key: "arr",
            field: &field,
            lenient: false,
            fails_when_run: &std::cell::RefCell::new(None),
        };
        array_literal(&ctx, items).unwrap()
    }

    /// `isempty` matches `''` on SQLAlchemy's `String` columns (`Enum` is one), not on JSON,
    /// arrays or types it does not know.
    #[test]
    fn the_string_columns_are_text() {
        let is_text = |kind| <PgResource as Dialect>::is_text(&field(kind, "text"));
        for kind in [PgKind::String, PgKind::Char, PgKind::Enum] {
            assert!(is_text(kind), "{kind:?}");
        }
        for kind in [
            PgKind::Json,
            PgKind::Array,
            PgKind::Unknown,
            PgKind::Integer,
        ] {
            assert!(!is_text(kind), "{kind:?}");
        }
    }

    fn field(kind: PgKind, cast: &str) -> PgField {
        crate::schema::test_field("cat", kind, cast)
    }

    #[test]
    fn float_literals_are_read_as_their_exact_decimal() {
        assert_eq!(decimal_floor_ceil("5.0"), Some((5, 5)));
        assert_eq!(decimal_floor_ceil("5.5"), Some((5, 6)));
        assert_eq!(decimal_floor_ceil("-5.5"), Some((-6, -5)));
        assert_eq!(decimal_floor_ceil("-0.0"), Some((0, 0)));
        assert_eq!(decimal_floor_ceil("1.5e-05"), Some((0, 1)));
        assert_eq!(decimal_floor_ceil("-1.5e-05"), Some((-1, 0)));
        assert_eq!(decimal_floor_ceil("5e-324"), Some((0, 1)));
        assert_eq!(
            decimal_floor_ceil("1e+16"),
            Some((10_000_000_000_000_000, 10_000_000_000_000_000))
        );
        // psycopg2 writes repr(2.0**60): its decimal, not the float's binary value.
        assert_eq!(
            decimal_floor_ceil("1.152921504606847e+18"),
            Some((1_152_921_504_606_847_000, 1_152_921_504_606_847_000))
        );
        assert_eq!(decimal_floor_ceil("1e+19"), None, "beyond bigint");
        assert_eq!(decimal_floor_ceil("1.5e+300"), None);
    }

    #[test]
    fn integer_columns_are_compared_as_integers() {
        let int = field(PgKind::Integer, "integer");
        let cmp = |value: f64, op: Cmp| {
            let mut params = Binds::default();
            let sql = Literal::Float(value).compare(op, &mut params, &int);
            (sql, params.0)
        };
        let text = |s: &str| vec![Bind::Text(s.to_owned())];
        assert_eq!(
            cmp(5.0, Cmp::Eq),
            ("\"cat\" = CAST($1::text AS bigint)".to_owned(), text("5"))
        );
        assert_eq!(
            cmp(5.5, Cmp::Gt),
            ("\"cat\" > CAST($1::text AS bigint)".to_owned(), text("5"))
        );
        assert_eq!(
            cmp(5.5, Cmp::Gte),
            ("\"cat\" >= CAST($1::text AS bigint)".to_owned(), text("6"))
        );
        assert_eq!(
            cmp(-5.5, Cmp::Lt),
            ("\"cat\" < CAST($1::text AS bigint)".to_owned(), text("-5"))
        );
        assert_eq!(
            cmp(-5.5, Cmp::Lte),
            ("\"cat\" <= CAST($1::text AS bigint)".to_owned(), text("-6"))
        );
        // No whole number equals 5.5, and 1e30 is beyond bigint: numeric, as the engine has it.
        assert_eq!(
            cmp(5.5, Cmp::Eq),
            (
                "\"cat\" = CAST($1::text AS numeric)".to_owned(),
                text("5.5")
            )
        );
        assert_eq!(
            cmp(1e30, Cmp::Gt),
            (
                "\"cat\" > CAST($1::text AS numeric)".to_owned(),
                text("1e+30")
            )
        );
        // Other number columns keep the engine's numeric literal.
        let mut params = Binds::default();
        let sql = Literal::Float(5.0).compare(
            Cmp::Eq,
            &mut params,
            &field(PgKind::Double, "double precision"),
        );
        assert_eq!(sql, "\"cat\" = CAST($1::text AS numeric)");
    }

    /// The literals psycopg2 2.9 wrote for the same lists (`cursor.mogrify`).
    #[test]
    fn lists_are_written_as_psycopg2_writes_them() {
        let int = |i: &str| PyJson::Int(i.to_owned());
        assert_eq!(literal(&[int("1")]), "ARRAY[(1)]");
        assert_eq!(literal(&[PyJson::List(vec![])]), "ARRAY[ARRAY[]]");
        assert_eq!(
            literal(&[PyJson::List(vec![
                PyJson::List(vec![int("1")]),
                PyJson::List(vec![])
            ])]),
            "ARRAY[ARRAY[ARRAY[(1)],ARRAY[]]]"
        );
        assert_eq!(literal(&[PyJson::None]), "'{NULL}'");
        assert_eq!(literal(&[PyJson::List(vec![PyJson::None])]), "'{{NULL}}'");
        assert_eq!(
            literal(&[PyJson::List(vec![]), int("1")]),
            "ARRAY[ARRAY[],(1)]"
        );
        assert_eq!(
            literal(&[PyJson::Str("it's \\".to_owned())]),
            "ARRAY[E'it''s \\\\']"
        );
        assert_eq!(literal(&[]), "'{}'");
    }

    /// As the engine answered an unknown function on PostgreSQL: `user`, `analyse` and
    /// `verbose` are reserved there (not on SQLite), `abort` is not.
    #[test]
    fn the_query_text_quotes_postgresqls_reserved_words() {
        let columns = ["id", "order", "user", "Mixed", "analyse", "abort"];
        let quoting = Quoting {
            quote: '"',
            reserved: <PgResource as Dialect>::RESERVED_WORDS,
        };
        let never = <PgResource as Dialect>::QUERY_NEVER;
        let text = query_text("t2", &columns, None, never, quoting);
        assert_eq!(
            text,
            "SELECT t2.id AS t2_id, t2.\"order\" AS t2_order, t2.\"user\" AS t2_user, \
             t2.\"Mixed\" AS \"t2_Mixed\", t2.\"analyse\" AS t2_analyse, t2.abort AS t2_abort \
             \nFROM t2 \nWHERE false"
        );
    }

    /// Every bound text is `$n::text`, cast as the crate casts it; bytes are `bytea`, the
    /// arrays as the catalog statements declare them.
    #[test]
    fn placeholders_name_the_type_a_value_is_sent_as() {
        let mut params = Binds::default();
        assert_eq!(
            <PgResource as Dialect>::bind_text("a".to_owned(), &mut params),
            "$1::text"
        );
        assert_eq!(
            cast(&mut params, None, "bigint"),
            "CAST($2::text AS bigint)"
        );
        assert_eq!(
            cast(&mut params, Some("b".to_owned()), "jsonb"),
            "CAST($3::text AS jsonb)"
        );
        assert_eq!(params.bind::<PgResource>(Bind::Bytes(vec![1])), "$4::bytea");
        assert_eq!(
            params.bind::<PgResource>(Bind::Texts(Vec::new())),
            "$5::text[]"
        );
        assert_eq!(
            params.bind::<PgResource>(Bind::Ints(Vec::new())),
            "$6::int8[]"
        );
        assert_eq!(
            params.bind::<PgResource>(Bind::Bools(Vec::new())),
            "$7::bool[]"
        );
        let text = |t: &str| Bind::Text(t.to_owned());
        assert_eq!(params.values()[..3], [text("a"), Bind::Null, text("b")]);
    }

    #[test]
    fn date_units_follow_the_engine() {
        assert_eq!(trunc_unit("second"), Some("minute"));
        assert_eq!(trunc_unit("quarter"), Some("quarter"));
        assert_eq!(trunc_unit("microseconds"), None);
    }
}
