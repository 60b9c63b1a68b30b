//! The records list query builder: `validate` never panics, and a query it accepts turns into
//! `(key, value)` pairs that svc-model's filter-key decoder (`records::wire::parse_filter_key`,
//! the one the emulator uses) reads back as exactly the filters that were built, with the
//! ordering, search and paging after them.
#![no_main]

use std::collections::BTreeSet;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use svc_model::records::wire::{ORDER_BY_PARAM, PAGE_PARAM, PER_PAGE_PARAM, SEARCH_PARAM};
use svc_model::records::{
    FilterKey, ListQuery, Lookup, MAX_PER_PAGE, RESERVED_PARAMS, is_filter_param,
    parse_filter_key,
};

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

    // A model whose fields are the filtered ones.
    let schema: BTreeSet<String> = filters.iter().map(|(f, _)| f.field.clone()).collect();
    let has_field = |name: &str| schema.contains(name);
    let mut rest = pairs.iter();
    for (want, list) in &filters {
        let (key, value) = rest.next().expect("a pair per filter");
        assert!(
            !RESERVED_PARAMS.contains(&key.as_str()),
            "filter key {key:?} is a reserved parameter"
        );
        assert!(
            is_filter_param(key, has_field),
            "the server does not read {key:?} of {want:?} as a filter"
        );
        let FilterKey {
            field,
            lookup,
            exclude,
        } = parse_filter_key(key, has_field).unwrap_or_else(|e| {
            panic!("the server cannot read the key {key:?} of {want:?}: {e}")
        });
        let got = Parsed {
            exclude,
            field: field.to_owned(),
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
        expect_tail.push((ORDER_BY_PARAM.to_owned(), order.join(",")));
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
        expect_tail.push((SEARCH_PARAM.to_owned(), s));
    }
    if let Some(p) = page {
        assert!(p >= 1);
        expect_tail.push((PAGE_PARAM.to_owned(), p.to_string()));
    }
    if let Some(n) = per_page {
        assert!((1..=MAX_PER_PAGE).contains(&n));
        expect_tail.push((PER_PAGE_PARAM.to_owned(), n.to_string()));
    }
    assert_eq!(rest.cloned().collect::<Vec<_>>(), expect_tail);
});
