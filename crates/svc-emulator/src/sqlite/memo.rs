//! What lists remember between requests, so that a page costs what its records cost, not what
//! the table holds.
//!
//! Two things are remembered, both for one state of the database only:
//!
//! - **Counts.** Every paged list answers the number of matching records, which SQLite can
//!   only find by visiting every one of them: at a million rows that is most of a page's cost,
//!   on every page. The memo keeps the count of each selection (the `WHERE` clause and its
//!   bound values).
//! - **Anchors.** A page at `OFFSET n` makes SQLite step over `n` rows first, so walking a
//!   whole table page by page costs the square of its size. After each page the memo keeps the
//!   sort key of the page's last record (its *anchor*); a later page of the same selection and
//!   order starts from the nearest anchor at or before it, with a `WHERE` that seeks past that
//!   key, and steps over only the rows between. The rows are the ones `OFFSET` gives, in the
//!   same order: the order is total (it always ends with the primary key), and the seek
//!   compares with SQLite's own `ORDER BY` rules (NULLs first ascending, last descending; the
//!   column's collation and affinity on both sides).
//!
//! # Validity
//!
//! Both are answers about one snapshot of the database. A generation counter names the state
//! they were computed in, and nothing is used or kept across a change:
//!
//! - writes through the resource's writer bump the generation ([`ListMemo::bump`]);
//! - every list first reads `PRAGMA data_version` on its connection, inside its read
//!   transaction: a value that moved since the connection last looked means some other
//!   connection committed (the emulator's writer, or another process writing the file), so
//!   the list bumps the generation and neither reads nor keeps anything.
//!
//! A list reads the generation *before* its snapshot begins and tags what it keeps with that
//! value. A snapshot that saw a commit either noticed it itself (and kept nothing), or its
//! connection noticed it earlier and bumped the generation before this list read it; either
//! way nothing computed before the commit can carry the generation this list reads.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::types::{Value, ValueRef};

use crate::dialect::seek::{self, Nulls};

/// Selections whose count is kept; past this the memo starts afresh.
const MAX_COUNTS: usize = 256;
/// Selections and orders whose anchors are kept; past this the memo starts afresh.
const MAX_WALKS: usize = 64;
/// Anchors kept per walk; past this the one least recently kept or used goes.
const MAX_ANCHORS: usize = 32;

/// Counts and anchors of one resource's lists, valid for one database state.
#[derive(Debug, Default)]
pub(crate) struct ListMemo {
    generation: AtomicU64,
    state: Mutex<State>,
    /// Counts answered from the memo, and pages started from an anchor (for tests).
    count_hits: AtomicU64,
    anchor_hits: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// The generation the entries belong to.
    generation: u64,
    counts: HashMap<Vec<u8>, u64>,
    /// Walk key → (offset of the row after the anchor → the anchor).
    walks: HashMap<Vec<u8>, BTreeMap<u64, Anchor>>,
    /// Ticks on every anchor kept or used: the recency of each.
    clock: u64,
}

#[derive(Debug)]
struct Anchor {
    sort_key: Vec<Value>,
    /// When it was last kept or used (`State::clock`).
    used: u64,
}

/// The generation a list read before its snapshot began, and whether the memo may serve it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    generation: u64,
    usable: bool,
}

impl Ticket {
    /// Whether the memo may serve this list: no other connection committed since its
    /// connection last looked.
    pub(crate) fn usable(&self) -> bool {
        self.usable
    }

    /// A ticket that neither reads nor keeps anything.
    pub(crate) fn unusable() -> Self {
        Ticket {
            generation: 0,
            usable: false,
        }
    }
}

impl ListMemo {
    /// The current generation: read before the list's snapshot begins.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Marks every count and anchor stale: the database changed, or may have.
    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The ticket of a list that read `generation` before its snapshot and then checked its
    /// connection's data version: `seen` is the version the connection saw last time (updated
    /// here), `now` the one inside the snapshot.
    pub(crate) fn ticket(&self, generation: u64, seen: &mut Option<i64>, now: i64) -> Ticket {
        if *seen == Some(now) {
            return Ticket {
                generation,
                usable: true,
            };
        }
        *seen = Some(now);
        self.bump();
        Ticket::unusable()
    }

    /// Runs `f` on the state when `ticket` belongs to its generation (a newer ticket clears
    /// the state first); an older or unusable ticket gets `None`.
    fn with_state<R>(&self, ticket: Ticket, f: impl FnOnce(&mut State) -> R) -> Option<R> {
        if !ticket.usable {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if ticket.generation > state.generation {
            state.counts.clear();
            state.walks.clear();
            state.generation = ticket.generation;
        }
        (ticket.generation == state.generation).then(|| f(&mut state))
    }

    /// The count kept for `key`, if any.
    pub(crate) fn count(&self, ticket: Ticket, key: &[u8]) -> Option<u64> {
        let n = self
            .with_state(ticket, |s| s.counts.get(key).copied())
            .flatten();
        if n.is_some() {
            self.count_hits.fetch_add(1, Ordering::Relaxed);
        }
        n
    }

    /// How many counts the memo answered and how many pages started from an anchor.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> (u64, u64) {
        (
            self.count_hits.load(Ordering::Relaxed),
            self.anchor_hits.load(Ordering::Relaxed),
        )
    }

    /// Keeps the count of `key`.
    pub(crate) fn keep_count(&self, ticket: Ticket, key: Vec<u8>, count: u64) {
        self.with_state(ticket, |s| {
            if s.counts.len() >= MAX_COUNTS && !s.counts.contains_key(&key) {
                s.counts.clear();
            }
            s.counts.insert(key, count);
        });
    }

    /// The anchor of walk `key` nearest at or before `offset`: the offset of the row after it,
    /// and the sort key of the row it is.
    pub(crate) fn anchor(
        &self,
        ticket: Ticket,
        key: &[u8],
        offset: u64,
    ) -> Option<(u64, Vec<Value>)> {
        self.with_state(ticket, |s| {
            s.clock += 1;
            let walk = s.walks.get_mut(key)?;
            let (&at, anchor) = walk.range_mut(..=offset).next_back()?;
            anchor.used = s.clock;
            Some((at, anchor.sort_key.clone()))
        })
        .flatten()
        .inspect(|_| {
            self.anchor_hits.fetch_add(1, Ordering::Relaxed);
        })
    }

    /// Keeps an anchor of walk `key`: the row before `offset` has sort key `sort_key`.
    pub(crate) fn keep_anchor(
        &self,
        ticket: Ticket,
        key: &[u8],
        offset: u64,
        sort_key: Vec<Value>,
    ) {
        self.with_state(ticket, |s| {
            if !s.walks.contains_key(key) {
                if s.walks.len() >= MAX_WALKS {
                    s.walks.clear();
                }
                s.walks.insert(key.to_vec(), BTreeMap::new());
            }
            s.clock += 1;
            let used = s.clock;
            let Some(walk) = s.walks.get_mut(key) else {
                return;
            };
            walk.insert(offset, Anchor { sort_key, used });
            if walk.len() > MAX_ANCHORS {
                // Walks go forwards: what a walk left behind is what it will not ask again.
                let oldest = walk.iter().min_by_key(|(_, a)| a.used).map(|(&at, _)| at);
                if let Some(at) = oldest {
                    walk.remove(&at);
                }
            }
        });
    }
}

/// A memo key: the SQL text that identifies a selection (and order), then its bound values,
/// each tagged with its type so that `1`, `1.0` and `'1'` stay apart.
pub(crate) fn key(sql: &str, params: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(sql.len() + 1 + params.len() * 9);
    k.extend_from_slice(sql.as_bytes());
    k.push(0);
    for p in params {
        match p {
            Value::Null => k.push(b'n'),
            Value::Integer(i) => {
                k.push(b'i');
                k.extend_from_slice(&i.to_le_bytes());
            }
            Value::Real(f) => {
                k.push(b'r');
                k.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Text(t) => {
                k.push(b't');
                k.extend_from_slice(&(t.len() as u64).to_le_bytes());
                k.extend_from_slice(t.as_bytes());
            }
            Value::Blob(b) => {
                k.push(b'b');
                k.extend_from_slice(&(b.len() as u64).to_le_bytes());
                k.extend_from_slice(b);
            }
        }
    }
    k
}

/// The sort key of one row as SQLite stored it, or `None` when a text value is not UTF-8
/// (binding it back as text would not be the same value, so no anchor is kept).
pub(crate) fn sort_key_of(
    row: &rusqlite::Row<'_>,
    columns: &[usize],
) -> rusqlite::Result<Option<Vec<Value>>> {
    let mut key = Vec::with_capacity(columns.len());
    for &c in columns {
        key.push(match row.get_ref(c)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => match std::str::from_utf8(t) {
                Ok(s) => Value::Text(s.to_owned()),
                Err(_) => return Ok(None),
            },
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        });
    }
    Ok(Some(key))
}

/// The condition that selects the rows after a row whose sort key is `key`, in the order of
/// `terms` (`(column SQL, descending)`; the last term is unique and never NULL), with its
/// bound values appended to `params`: the seek every database writes (`dialect::seek`), in
/// SQLite's NULL order (NULL before every other value: first ascending, last descending).
pub(crate) fn seek_condition(
    terms: &[(&str, bool)],
    key: &[Value],
    params: &mut Vec<Value>,
) -> String {
    let values: Vec<Option<&Value>> = key
        .iter()
        .map(|v| (!matches!(v, Value::Null)).then_some(v))
        .collect();
    let mut bind = |i: usize| {
        params.push(key[i].clone());
        "?".to_owned()
    };
    seek::seek_condition(terms, &values, Nulls::Smallest, &mut bind)
}
