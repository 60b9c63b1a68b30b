//! The records list query builder: `validate` never panics, and a query it accepts turns into
//! `(key, value)` pairs that the emulator's parser (svc-emulator `records/filter.rs`, mirrored
//! below) reads back as exactly the filters, ordering, search and paging that were built.
#![no_main]

use std::collections::BTreeSet;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use svc_model::records::{ListQuery, Lookup};

const RESERVED: [&str; 5] = [
    "page",
    "_per_page",
    "_no_pagination",
    "_order_by",
    "_search",
];

/// Field names that stress the key syntax, and anything else.
const POOL: [&str; 14] = [
    "id",
    "name",
    "exclude",
    "exclude_",
    "exclude_me",
    "page",
    "_search",
    "a_",
    "_a",
    "_",
    "gt",
    "exact",
    "a__b",
    "-x",
];

#[derive(Debug, Arbitrary)]
enum Field {
    Pool(u8),
    Any(String),
}

impl Field {
    fn name(&self) -> String {
        match self {
            Field::Pool(i) => POOL[usize::from(*i) % POOL.len()].to_owned(),
            Field::Any(s) => s.clone(),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Op {
    Filter {
        field: Field,
        lookup: u8,
        value: String,
        exclude: bool,
    },
    In {
        field: Field,
        values: Vec<String>,
    },
    OrderBy {
        field: Field,
        desc: bool,
    },
    Search(String),
    Page(u32),
    PerPage(u32),
}

/// One filter as the server must read it back.
#[derive(Debug, PartialEq)]
struct Parsed {
    exclude: bool,
    field: String,
    lookup: Lookup,
    value: String,
}

/// The emulator's `parse_key`, against a model whose fields are `schema`.
fn parse_key(schema: &BTreeSet<String>, key: &str) -> Option<(bool, String, Lookup)> {
    if schema.contains(key) {
        return Some((false, key.to_owned(), Lookup::Exact));
    }
    let (negated, rest) = match key.strip_prefix("exclude__") {
        Some(rest) => (true, rest),
        None => (false, key),
    };
    if schema.contains(rest) {
        return Some((negated, rest.to_owned(), Lookup::Exact));
    }
    let (name, lookup) = rest.rsplit_once("__")?;
    schema
        .contains(name)
        .then(|| Lookup::parse(lookup).map(|l| (negated, name.to_owned(), l)))
        .flatten()
}

fuzz_target!(|ops: Vec<Op>| {
    let mut q = ListQuery::new();
    let mut filters = Vec::new();
    let mut order = Vec::new();
    let mut search = None;
    let mut page = None;
    let mut per_page = None;
    for op in &ops {
        match op {
            Op::Filter {
                field,
                lookup,
                value,
                exclude,
            } => {
                let lookup = Lookup::ALL[usize::from(*lookup) % Lookup::ALL.len()];
                let field = field.name();
                q = if *exclude {
                    q.exclude(field.clone(), lookup, value.as_str())
                } else {
                    q.filter(field.clone(), lookup, value.as_str())
                };
                let parsed = Parsed {
                    exclude: *exclude,
                    field,
                    lookup,
                    value: value.clone(),
                };
                filters.push((parsed, None));
            }
            Op::In { field, values } => {
                let field = field.name();
                q = q.is_in(field.clone(), values.iter().map(String::as_str));
                let value = values.join(",");
                let parsed = Parsed {
                    exclude: false,
                    field,
                    lookup: Lookup::In,
                    value,
                };
                filters.push((parsed, Some(values.clone())));
            }
            Op::OrderBy { field, desc } => {
                let field = field.name();
                q = if *desc {
                    q.order_by_desc(&field)
                } else {
                    q.order_by(field.clone())
                };
                order.push(if *desc { format!("-{field}") } else { field });
            }
            Op::Search(s) => {
                q = q.search(s.clone());
                search = Some(s.clone());
            }
            Op::Page(n) => {
                q = q.page(*n);
                page = Some(*n);
            }
            Op::PerPage(n) => {
                q = q.per_page(*n);
                per_page = Some(*n);
            }
        }
    }
    let pairs = q.to_pairs();
    let _ = q.filter_pairs();
    if q.validate().is_err() {
        return;
    }
    assert_eq!(q.page_number(), page);
    assert_eq!(q.page_size(), per_page);

    let schema: BTreeSet<String> = filters.iter().map(|(f, _)| f.field.clone()).collect();
    let mut rest = pairs.iter();
    for (want, list) in &filters {
        let (key, value) = rest.next().expect("a pair per filter");
        assert!(
            !RESERVED.contains(&key.as_str()),
            "filter key {key:?} is a paging parameter"
        );
        let (exclude, field, lookup) = parse_key(&schema, key)
            .unwrap_or_else(|| panic!("the server cannot read the key {key:?} of {want:?}"));
        let got = Parsed {
            exclude,
            field,
            lookup,
            value: value.clone(),
        };
        assert_eq!(&got, want, "key {key:?}");
        if let Some(values) = list {
            // An accepted `in` list splits back into its values.
            let split: Vec<&str> = value.split(',').collect();
            assert_eq!(split, values.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
    let mut expect_tail = Vec::new();
    if !order.is_empty() {
        expect_tail.push(("_order_by".to_owned(), order.join(",")));
        for item in order.join(",").split(',') {
            let field = item.strip_prefix('-').unwrap_or(item);
            assert!(
                !field.is_empty() && !field.starts_with('-'),
                "order item {item:?}"
            );
        }
        assert_eq!(order.join(",").split(',').count(), order.len());
    }
    if let Some(s) = search {
        expect_tail.push(("_search".to_owned(), s));
    }
    if let Some(p) = page {
        assert!(p >= 1);
        expect_tail.push(("page".to_owned(), p.to_string()));
    }
    if let Some(n) = per_page {
        assert!((1..=10_000).contains(&n));
        expect_tail.push(("_per_page".to_owned(), n.to_string()));
    }
    assert_eq!(rest.cloned().collect::<Vec<_>>(), expect_tail);
});
