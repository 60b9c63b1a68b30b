//! The engine's group statement, and SQLAlchemy's text of the engine's query object (which
//! the engine's error for an unknown aggregate function shows).

use svc_engine::aggregate::group_name;

/// The engine's statement of a summary ([`Summary`](svc_engine::table::Summary)), whatever
/// the database: `select` (each key `AS` its label, then `y_func`) from the table and its
/// `WHERE` clause, grouped and ordered by the keys' `labels`, and at most `limit` rows (a
/// group's; an aggregate's has one row and no `LIMIT`).
pub fn group_statement(
    select: &[String],
    labels: &[String],
    table_sql: &str,
    where_sql: &str,
    limit: Option<u64>,
) -> String {
    let grouping = if labels.is_empty() {
        String::new()
    } else {
        let labels = labels.join(", ");
        format!(" GROUP BY {labels} ORDER BY {labels}")
    };
    let limit = limit.map(|n| format!(" LIMIT {n}")).unwrap_or_default();
    format!(
        "SELECT {} FROM {table_sql}{where_sql}{grouping}{limit}",
        select.join(", ")
    )
}

/// How a dialect of SQLAlchemy writes an identifier in a statement's text: in its quotes when
/// the name is one of its reserved words, starts with a digit or `$`, has a character other
/// than ASCII letters, digits, `_` and `$`, or has upper case.
#[derive(Debug, Clone, Copy)]
pub struct Quoting {
    /// The quote (`"`, MySQL's `` ` ``), doubled inside.
    pub quote: char,
    /// The dialect's reserved words, lower-case, separated by white space (as SQLAlchemy 1.4
    /// lists them: each backend keeps its dialect's in a text file beside its code).
    pub reserved: &'static str,
}

impl Quoting {
    /// `name` as the dialect writes it.
    pub fn ident(&self, name: &str) -> String {
        let lower = name.to_lowercase();
        let quote = self.reserved.split_ascii_whitespace().any(|w| w == lower)
            || name.starts_with(|c: char| c.is_ascii_digit() || c == '$')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            || lower != name;
        if quote {
            let q = self.quote;
            format!("{q}{}{q}", name.replace(q, &format!("{q}{q}")))
        } else {
            name.to_owned()
        }
    }
}

/// The text of the engine's empty query over a table (`str(query)` of SQLAlchemy, in the
/// dialect of the engine's database, which quotes as `quoting` says): every column labelled
/// `{table}_{column}`, the condition SQLAlchemy folds an always-false filter into (`0 = 1` on
/// SQLite, `false` on PostgreSQL), and the `_order_by` fields.
pub fn query_text(
    table: &str,
    columns: &[&str],
    order: Option<&[(&str, bool)]>,
    never: &str,
    quoting: Quoting,
) -> String {
    let sa_ident = |name: &str| quoting.ident(name);
    let quoted_table = sa_ident(table);
    let taken = |label: &str| columns.contains(&label);
    let list: Vec<String> = columns
        .iter()
        .map(|name| {
            let base = format!("{table}_{name}");
            let mut label = base.clone();
            let mut counter = 1;
            while taken(&label) {
                label = format!("{base}_{counter}");
                counter += 1;
            }
            format!("{quoted_table}.{} AS {}", sa_ident(name), sa_ident(&label))
        })
        .collect();
    let mut text = format!(
        "SELECT {} \nFROM {quoted_table} \nWHERE {never}",
        list.join(", ")
    );
    if let Some(fields) = order {
        let terms: Vec<String> = fields
            .iter()
            .map(|(name, desc)| {
                let dir = if *desc { " DESC" } else { "" };
                format!("{quoted_table}.{}{dir}", sa_ident(name))
            })
            .collect();
        text.push_str(" ORDER BY ");
        text.push_str(&terms.join(", "));
    }
    text
}

/// The name as SQLAlchemy writes the label (`"group"` is reserved in every dialect).
pub fn group_label(i: usize) -> String {
    match i {
        0 => "\"group\"".to_owned(),
        _ => group_name(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_statement_groups_and_orders_by_every_key_within_its_limit() {
        let select = ["a AS \"group\"".to_owned(), "count(b) AS y_func".to_owned()];
        let labels = ["\"group\"".to_owned()];
        assert_eq!(
            group_statement(&select, &labels, "t", " WHERE x = 1", Some(10_000)),
            "SELECT a AS \"group\", count(b) AS y_func FROM t WHERE x = 1 GROUP BY \"group\" \
             ORDER BY \"group\" LIMIT 10000"
        );
        let none = group_statement(&select[1..], &[], "t", "", Some(1));
        assert_eq!(none, "SELECT count(b) AS y_func FROM t LIMIT 1");
        // An aggregate's: one row over every selected record, no `LIMIT`.
        let aggregate = group_statement(&select[1..], &[], "t", " WHERE x = 1", None);
        assert_eq!(aggregate, "SELECT count(b) AS y_func FROM t WHERE x = 1");
    }
}
