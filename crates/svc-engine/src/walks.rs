//! Page walks that never step over the rows before them, with the answers of
//! `LIMIT n OFFSET m`: the parts every database shares (see `svc-emulator-postgres/src/records.rs`,
//! `svc-emulator-mysql/src/records.rs` and `svc-emulator-sqlite/src/records.rs` for how each proves that nothing changed between two
//! pages).
//!
//! The engine pages with `OFFSET`: the database reads, and converts to text, every row before
//! the page, so a walk through a table page by page costs the square of its size. Where the
//! order is total (it reaches the model's key, one column, unique and never NULL), the rows of
//! a page are exactly those `OFFSET` gives when:
//!
//! - **Keys first.** A page at `OFFSET m` finds the keys of its rows with `OFFSET` over the
//!   keys alone, then reads and converts only those rows.
//! - **Anchors.** After each page the sort key of its last row is remembered (its *anchor*),
//!   with a *token* that names the state of the data it was read in. A later page of the same
//!   selection and order, read in a state of the same token, starts from the nearest anchor at
//!   or before it with a `WHERE` that seeks past that sort key in the database's own order
//!   (`dialect::seek::seek_condition`), and steps over only the rows between.
//! - **Counts.** A filtered count is kept with its token, and answered again in a state of the
//!   same token.
//!
//! What a token is, and why two equal tokens see the same committed rows, is each database's
//! own argument; this module only keeps and compares them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Selections whose count is kept; past this the memo starts afresh.
const MAX_COUNTS: usize = 256;
/// Selections and orders whose anchors are kept; past this the memo starts afresh.
const MAX_WALKS: usize = 64;
/// Anchors kept per walk; past this the one least recently kept or used goes.
const MAX_ANCHORS: usize = 32;

/// Sort keys of pages, per walk (a selection and its order), and counts of selections; `K` is
/// one value of a sort key as the backend reads and binds it again.
#[derive(Debug)]
pub struct Walks<K> {
    state: Mutex<State<K>>,
}

impl<K> Default for Walks<K> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                walks: HashMap::new(),
                counts: HashMap::new(),
                clock: 0,
            }),
        }
    }
}

#[derive(Debug)]
struct State<K> {
    /// Walk key → (offset of the row after the anchor → the anchor).
    walks: HashMap<Vec<u8>, BTreeMap<u64, Anchor<K>>>,
    /// Count key → the token it was counted in, and the count.
    counts: HashMap<Vec<u8>, (String, u64)>,
    /// Ticks on every anchor kept or used: the recency of each.
    clock: u64,
}

/// Where a page ended: the sort key of its last row (each term's value, `None` for NULL), in
/// the state of the data that `token` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor<K> {
    /// The token of the data's state the page was read in.
    pub token: String,
    /// The sort key of the page's last row, a value per term (`None` for NULL).
    pub sort_key: Vec<Option<K>>,
    used: u64,
}

impl<K: Clone> Walks<K> {
    /// The anchor of walk `key` nearest at or before `offset`: the offset of the row after it,
    /// and the anchor.
    pub fn anchor(&self, key: &[u8], offset: u64) -> Option<(u64, Anchor<K>)> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *state;
        s.clock += 1;
        let walk = s.walks.get_mut(key)?;
        let (&at, anchor) = walk.range_mut(..=offset).next_back()?;
        anchor.used = s.clock;
        Some((at, anchor.clone()))
    }

    /// Keeps an anchor of walk `key`: the row before `offset` has sort key `sort_key` in the
    /// state `token` names. Anchors of other tokens are dropped: they can no longer be used.
    pub fn keep(&self, key: &[u8], offset: u64, token: String, sort_key: Vec<Option<K>>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *state;
        if !s.walks.contains_key(key) && s.walks.len() >= MAX_WALKS {
            s.walks.clear();
        }
        s.clock += 1;
        let used = s.clock;
        let walk = s.walks.entry(key.to_vec()).or_default();
        walk.retain(|_, a| a.token == token);
        walk.insert(
            offset,
            Anchor {
                token,
                sort_key,
                used,
            },
        );
        if walk.len() > MAX_ANCHORS {
            // Walks go forwards: what a walk left behind is what it will not ask again.
            let oldest = walk.iter().min_by_key(|(_, a)| a.used).map(|(&at, _)| at);
            if let Some(at) = oldest {
                walk.remove(&at);
            }
        }
    }

    /// The count of selection `key` and the token of the state it was made in, if kept.
    pub fn count(&self, key: &[u8]) -> Option<(String, u64)> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.counts.get(key).cloned()
    }

    /// Keeps the count of selection `key`, made in the state `token` names.
    pub fn keep_count(&self, key: Vec<u8>, token: String, count: u64) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.counts.len() >= MAX_COUNTS && !state.counts.contains_key(&key) {
            state.counts.clear();
        }
        state.counts.insert(key, (token, count));
    }

    /// Forgets every anchor and count (the schema was read again).
    pub fn clear(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.walks.clear();
        state.counts.clear();
    }
}

/// A walk key: the SQL text that identifies a selection and its order, then its values (each
/// as bytes, `None` for NULL), so that two walks share a key only when both are the same.
pub fn key<'a>(sql: &str, values: impl IntoIterator<Item = Option<&'a [u8]>>) -> Vec<u8> {
    let mut k = Vec::with_capacity(sql.len() + 64);
    k.extend_from_slice(sql.as_bytes());
    k.push(0);
    for v in values {
        match v {
            None => k.push(b'n'),
            Some(t) => {
                k.push(b't');
                k.extend_from_slice(&(t.len() as u64).to_le_bytes());
                k.extend_from_slice(t);
            }
        }
    }
    k
}

/// The terms of `terms` (field index, descending) up to the first that is the key `pk`, when
/// the key is unique and never NULL (`unique_key`) and every term can be sought past
/// (`seekable`); `None` otherwise: the order is not total there, or a term's values do not
/// read back exactly.
pub fn seek_terms(
    unique_key: bool,
    pk: usize,
    terms: &[(usize, bool)],
    seekable: impl Fn(usize) -> bool,
) -> Option<Vec<(usize, bool)>> {
    if !unique_key {
        return None;
    }
    let end = terms.iter().position(|&(i, _)| i == pk)?;
    let terms = terms.get(..=end)?;
    terms
        .iter()
        .all(|&(i, _)| seekable(i))
        .then(|| terms.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_terms_end_at_a_unique_key() {
        let all = |_| true;
        assert_eq!(
            seek_terms(true, 0, &[(2, false), (0, true), (1, false)], all),
            Some(vec![(2, false), (0, true)])
        );
        assert_eq!(seek_terms(false, 0, &[(0, true)], all), None);
        assert_eq!(seek_terms(true, 0, &[(1, true)], all), None);
        assert_eq!(
            seek_terms(true, 0, &[(1, true), (0, true)], |i| i == 0),
            None
        );
    }

    #[test]
    fn anchors_of_another_token_are_dropped() {
        let walks = Walks::default();
        walks.keep(b"w", 25, "1:2:".to_owned(), vec![Some("a".to_owned())]);
        walks.keep(b"w", 50, "1:2:".to_owned(), vec![Some("b".to_owned())]);
        assert_eq!(walks.anchor(b"w", 49).map(|(at, _)| at), Some(25));
        assert_eq!(walks.anchor(b"w", 80).map(|(at, _)| at), Some(50));
        assert!(walks.anchor(b"w", 10).is_none());
        assert!(walks.anchor(b"other", 80).is_none());
        walks.keep(b"w", 75, "1:3:".to_owned(), vec![Some("c".to_owned())]);
        assert_eq!(walks.anchor(b"w", 60).map(|(at, _)| at), None);
        let (at, anchor) = walks.anchor(b"w", 80).unwrap();
        assert_eq!((at, anchor.token.as_str()), (75, "1:3:"));
    }

    #[test]
    fn walk_keys_tell_values_apart() {
        let a = key("q", [Some(&b"ab"[..]), None]);
        let b = key("q", [Some(&b"a"[..]), Some(&b"b"[..])]);
        let c = key("q", [None, Some(&b"ab"[..])]);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, key("q", [Some(&b"ab"[..]), None]));
    }
}
