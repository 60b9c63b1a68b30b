//! A table of three text columns (`a`, `id` its key, `b`) for the tests of the rules written
//! over [`Table`], here and in the emulator's SQL: feature `testing`, never in a build users get.

use std::collections::BTreeMap;

use crate::records::RecordKeys;
use crate::table::{Column, Table, index_by_name};
use crate::types::{FilterFamily, Search};

/// A text column: its name is its SQL.
#[derive(Debug)]
pub struct Col(pub &'static str);

impl Column for Col {
    fn name(&self) -> &str {
        self.0
    }
    fn sql(&self) -> &str {
        self.0
    }
    fn family(&self) -> FilterFamily {
        FilterFamily::Text
    }
    fn search(&self) -> Search {
        Search::Contains
    }
}

/// The table of [`table`].
#[derive(Debug)]
pub struct Tab {
    columns: Vec<Col>,
    index: BTreeMap<String, usize>,
    keys: RecordKeys,
}

impl Table for Tab {
    type Column = Col;
    fn table_name(&self) -> &str {
        "t"
    }
    fn columns(&self) -> &[Col] {
        &self.columns
    }
    fn key_index(&self) -> usize {
        1
    }
    fn column_index(&self) -> &BTreeMap<String, usize> {
        &self.index
    }
    fn promoted_key(&self) -> bool {
        false
    }
    fn has_relationships(&self) -> bool {
        false
    }
    fn key_is_whole(&self) -> bool {
        true
    }
    fn identity(&self) -> &[usize] {
        &[1]
    }
    fn identity_unique(&self) -> bool {
        true
    }
    fn record_keys(&self) -> &RecordKeys {
        &self.keys
    }
}

/// The table `t` of columns `a`, `id` (its key) and `b`.
pub fn table() -> Tab {
    let columns = vec![Col("a"), Col("id"), Col("b")];
    let index = index_by_name(&columns);
    let keys = RecordKeys::of(columns.iter().map(|c| c.0));
    Tab {
        columns,
        index,
        keys,
    }
}
