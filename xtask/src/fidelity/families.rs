//! Families of tables joined by foreign keys, on every database: a parent, a child that refers
//! to it through a nullable key, one that refers through a NOT NULL key, and a grandchild of
//! that one. Each key's `ON DELETE` clause is drawn from the seed (none, `CASCADE`, or, for the
//! nullable key, `SET NULL`), so a run sees the rules of the engine's ORM on a delete (nullable
//! references set to NULL, NOT NULL ones deleted first, deepest first, `passive_deletes` keys
//! left to the database) and a later list of each child shows what the delete did. The parent
//! has a column with a server default and a generated one, which creates and updates write to
//! (given a value, `null`, or left out). Beside them, `fam_guarded` has a trigger that refuses a
//! negative amount (PostgreSQL's with a `HINT`, MySQL's `SIGNAL`, SQLite's `RAISE`), so a run
//! sees a database's own error on a create and an update.

use super::dataset::{Backend, Column, Kind, Table, Val};
use super::requests::{Op, Request, Rng, Wire};

/// Parents; each child table has [`CHILDREN`] rows.
const PARENTS: usize = 12;
const CHILDREN: usize = 24;

const fn col(name: &'static str) -> Column {
    Column {
        name,
        decl: "",
        pg: "",
        kind: Kind::Integer,
        make: |_| Val::Null,
    }
}

/// `fam_parent (id, name, size DEFAULT 7, name_len GENERATED (the length of name),
/// twice DEFAULT (1 + 2), tag DEFAULT (lower('ABC')))`: a literal default, a generated column,
/// and two expression defaults (MySQL's reflection reads the first and not the second, so the
/// engine's ORM sends NULL for it).
pub static PARENT: Table = Table {
    name: "fam_parent",
    columns: &[
        col("id"),
        col("name"),
        col("size"),
        col("name_len"),
        col("twice"),
        col("tag"),
    ],
    rows: PARENTS,
    text_pk: false,
};

/// `fam_nullable (id, parent_id NULL REFERENCES fam_parent, note)`.
pub static NULLABLE: Table = Table {
    name: "fam_nullable",
    columns: &[col("id"), col("parent_id"), col("note")],
    rows: CHILDREN,
    text_pk: false,
};

/// `fam_strict (id, parent_id NOT NULL REFERENCES fam_parent, note)`.
pub static STRICT: Table = Table {
    name: "fam_strict",
    columns: &[col("id"), col("parent_id"), col("note")],
    rows: CHILDREN,
    text_pk: false,
};

/// `fam_grand (id, strict_id NOT NULL REFERENCES fam_strict, note)`.
pub static GRAND: Table = Table {
    name: "fam_grand",
    columns: &[col("id"), col("strict_id"), col("note")],
    rows: CHILDREN,
    text_pk: false,
};

/// `fam_guarded (id, amount)`, whose trigger refuses a negative amount.
pub static GUARDED: Table = Table {
    name: "fam_guarded",
    columns: &[col("id"), col("amount")],
    rows: GUARDED_ROWS,
    text_pk: false,
};

/// Rows of `fam_guarded`.
const GUARDED_ROWS: usize = 8;

/// The tables, parents first (the order a copy inserts them in).
pub static TABLES: [&Table; 5] = [&PARENT, &NULLABLE, &STRICT, &GRAND, &GUARDED];

/// The tables' names, parents first.
pub const TABLE_NAMES: &[&str] = &[
    "fam_parent",
    "fam_nullable",
    "fam_strict",
    "fam_grand",
    "fam_guarded",
];

/// The message of `fam_guarded`'s trigger.
const REFUSED: &str = "amount is negative";

/// `fam_guarded` and its trigger, in `backend`'s words.
fn guarded_sql(backend: Backend) -> String {
    let table = "CREATE TABLE fam_guarded (id integer PRIMARY KEY, amount integer);\n";
    let trigger = match backend {
        Backend::Postgres => format!(
            "CREATE FUNCTION fam_guard() RETURNS trigger LANGUAGE plpgsql AS $$\n\
             BEGIN\n  IF NEW.amount < 0 THEN\n    RAISE EXCEPTION '{REFUSED}: %', NEW.amount \
             USING HINT = 'Send zero or more.';\n  END IF;\n  RETURN NEW;\nEND $$;\n\
             CREATE TRIGGER fam_guard BEFORE INSERT OR UPDATE ON fam_guarded \
             FOR EACH ROW EXECUTE FUNCTION fam_guard();\n"
        ),
        // The client's `DELIMITER`: the trigger's body holds a `;`.
        Backend::Mysql => ["INSERT", "UPDATE"]
            .map(|event| {
                format!(
                    "DELIMITER //\nCREATE TRIGGER fam_guard_{event} BEFORE {event} ON fam_guarded \
                     FOR EACH ROW IF NEW.amount < 0 THEN SIGNAL SQLSTATE '45000' \
                     SET MESSAGE_TEXT = '{REFUSED}'; END IF//\nDELIMITER ;\n"
                )
            })
            .concat(),
        Backend::Sqlite => ["INSERT", "UPDATE"]
            .map(|event| {
                format!(
                    "CREATE TRIGGER fam_guard_{event} BEFORE {event} ON fam_guarded \
                     WHEN NEW.amount < 0 BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END;\n"
                )
            })
            .concat(),
    };
    let rows: Vec<String> = (1..=GUARDED_ROWS)
        .map(|id| format!("INSERT INTO fam_guarded VALUES ({id}, {});\n", id * 3))
        .collect();
    format!("{table}{trigger}{}", rows.concat())
}

/// The `ON DELETE` clauses of the three keys for `seed` (nullable, strict, grand).
fn clauses(seed: u64) -> [&'static str; 3] {
    let mut r = Rng::new(seed ^ 0x00FA_3141);
    [
        *r.pick(&["", " ON DELETE CASCADE", " ON DELETE SET NULL"]),
        *r.pick(&["", " ON DELETE CASCADE"]),
        *r.pick(&["", " ON DELETE CASCADE"]),
    ]
}

/// The script that creates and fills the family for `seed`, in `backend`'s words.
pub fn sql(seed: u64, backend: Backend) -> String {
    let [nullable, strict, grand] = clauses(seed);
    let (int, text, generated) = match backend {
        Backend::Mysql => ("INT", "VARCHAR(40)", "AS (CHAR_LENGTH(name)) STORED"),
        _ => (
            "integer",
            "text",
            "GENERATED ALWAYS AS (length(name)) STORED",
        ),
    };
    let key = format!("{int} PRIMARY KEY");
    // Keys declared apart from their columns: MySQL ignores a column's own `REFERENCES`.
    let mut out = format!(
        "CREATE TABLE fam_parent (id {key}, name {text}, size {int} DEFAULT 7, \
         name_len {int} {generated}, twice {int} DEFAULT (1 + 2), \
         tag {text} DEFAULT (lower('ABC')));\n\
         CREATE TABLE fam_nullable (id {key}, parent_id {int}, note {text}, \
         FOREIGN KEY (parent_id) REFERENCES fam_parent (id){nullable});\n\
         CREATE TABLE fam_strict (id {key}, parent_id {int} NOT NULL, note {text}, \
         FOREIGN KEY (parent_id) REFERENCES fam_parent (id){strict});\n\
         CREATE TABLE fam_grand (id {key}, strict_id {int} NOT NULL, note {text}, \
         FOREIGN KEY (strict_id) REFERENCES fam_strict (id){grand});\n"
    );
    let mut r = Rng::new(seed ^ 0x00FA_2718);
    let words = ["ash", "birch", "cedar", "elm", "fir", "oak"];
    for id in 1..=PARENTS {
        out.push_str(&format!(
            "INSERT INTO fam_parent (id, name) VALUES ({id}, '{}{id}');\n",
            r.pick(&words)
        ));
    }
    // A parent of its own to every child now and then, so some parents have no children.
    let parent = |r: &mut Rng| r.below(PARENTS as u64 * 3 / 4) + 1;
    for id in 1..=CHILDREN {
        let of = if r.chance(20) {
            "NULL".to_owned()
        } else {
            parent(&mut r).to_string()
        };
        out.push_str(&format!(
            "INSERT INTO fam_nullable VALUES ({id}, {of}, 'n{id}');\n"
        ));
    }
    for id in 1..=CHILDREN {
        out.push_str(&format!(
            "INSERT INTO fam_strict VALUES ({id}, {}, 's{id}');\n",
            parent(&mut r)
        ));
    }
    for id in 1..=CHILDREN {
        out.push_str(&format!(
            "INSERT INTO fam_grand VALUES ({id}, {}, 'g{id}');\n",
            r.below(CHILDREN as u64) + 1
        ));
    }
    out.push_str(&guarded_sql(backend));
    out
}

/// A body for the parent: some of its columns, the generated one given a value, `null`, or
/// left out; the defaulted one given or left out.
fn parent_body(r: &mut Rng, id: Option<u64>) -> serde_json::Value {
    let mut body = serde_json::Map::new();
    if let Some(id) = id {
        body.insert("id".to_owned(), id.into());
    }
    if r.chance(70) {
        let name = *r.pick(&["ash", "rowan", "", "lime tree"]);
        body.insert("name".to_owned(), name.into());
    }
    match r.below(4) {
        0 => {
            body.insert("name_len".to_owned(), serde_json::Value::Null);
        }
        1 => {
            body.insert("name_len".to_owned(), r.below(6).into());
        }
        _ => {}
    }
    if r.chance(30) {
        body.insert("size".to_owned(), r.below(20).into());
    }
    serde_json::Value::Object(body)
}

/// One request over the family: a delete of a parent or of a strict child, a create or an
/// update of a parent, or a list of any of the tables (whole, in key order, so that it shows
/// what the writes before it did).
pub fn request(r: &mut Rng) -> Request {
    let parent = |r: &mut Rng| Some(r.below(PARENTS as u64) + 1);
    let (op, table, pk) = match r.below(100) {
        0..25 => (Op::Delete, &PARENT, parent(r)),
        25..33 => (Op::Delete, &STRICT, Some(r.below(CHILDREN as u64) + 1)),
        33..38 => (Op::Retrieve, &PARENT, parent(r)),
        38..46 => (Op::Create, &PARENT, None),
        46..54 => (Op::Patch, &PARENT, parent(r)),
        54..60 => (Op::Create, &GUARDED, None),
        60..66 => (Op::Patch, &GUARDED, Some(r.below(GUARDED_ROWS as u64) + 1)),
        _ => (Op::List, *r.pick(&TABLES), None),
    };
    let body = match op {
        // An amount the trigger refuses now and then; new keys past the rows (a repeat is the
        // database's refusal on both).
        Op::Create | Op::Patch if table == &GUARDED => {
            let mut body = serde_json::Map::new();
            if op == Op::Create {
                let id = GUARDED_ROWS as u64 + 1 + r.below(30);
                body.insert("id".to_owned(), id.into());
            }
            body.insert("amount".to_owned(), r.range(-3, 9).into());
            Some(serde_json::Value::Object(body))
        }
        // New keys past the parents' (a repeat is the database's refusal on both).
        Op::Create => {
            let id = PARENTS as u64 + 1 + r.below(30);
            Some(parent_body(r, Some(id)))
        }
        Op::Patch => Some(parent_body(r, None)),
        _ => None,
    };
    let query = match op {
        Op::List => vec![
            ("_order_by".to_owned(), "id".to_owned()),
            ("_per_page".to_owned(), "50".to_owned()),
        ],
        _ => Vec::new(),
    };
    Request {
        wire: Wire::default(),
        op,
        table,
        pk: pk.map(|k| k.to_string()),
        query,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_refers_to_a_row_and_the_clauses_follow_the_seed() {
        let sql = sql(3, Backend::Postgres);
        assert_eq!(sql, super::sql(3, Backend::Postgres));
        assert!(sql.contains("parent_id integer NOT NULL, note text, FOREIGN KEY (parent_id)"));
        assert!(super::sql(3, Backend::Mysql).contains("id INT PRIMARY KEY"));
        let seen: std::collections::BTreeSet<[&str; 3]> = (0..40).map(clauses).collect();
        assert!(
            seen.len() > 3,
            "the seeds should vary the ON DELETE clauses"
        );
        let mut r = Rng::new(5);
        let requests: Vec<Request> = (0..200).map(|_| request(&mut r)).collect();
        assert!(
            requests
                .iter()
                .any(|q| q.op == Op::Delete && q.table == &PARENT)
        );
        assert!(
            requests
                .iter()
                .any(|q| q.op == Op::List && q.table == &GRAND)
        );
        assert!(
            requests
                .iter()
                .any(|q| q.op == Op::Create && q.table == &GUARDED)
        );
        for backend in [Backend::Sqlite, Backend::Postgres, Backend::Mysql] {
            assert!(super::sql(3, backend).contains("TRIGGER fam_guard"));
        }
    }
}
