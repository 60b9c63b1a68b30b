//! The iteration order of a Python set of strings, as CPython 3.11 (the engine's Python) holds
//! it.
//!
//! A set's members are in the slots of its hash table, where each lands by its string hash,
//! which CPython keys with a secret drawn at each start of the process (`PYTHONHASHSEED`
//! randomization): the order of the same members changes from one start to the next, and stays
//! through one run. [`set_order`] places the members as CPython does: SipHash-1-3 of the
//! string's bytes in CPython's compact form ([`str_hash`]), then the set's open addressing
//! (`Objects/setobject.c`: `set_add_entry`, `set_table_resize`, `set_insert_clean`), under a
//! key drawn once a process ([`HashKey::of_process`]). `PYTHONHASHSEED`, when set, is read as
//! CPython reads it: `0` turns randomization off, another number seeds the key; under the same
//! value the order is CPython's.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// The secret CPython keys its string hashes with (`_Py_HashSecret.siphash`: `k0`, `k1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashKey {
    k0: u64,
    k1: u64,
}

impl HashKey {
    /// The key of `PYTHONHASHSEED=seed` (`Python/bootstrap_hash.c`): all zero for `0`, else
    /// the bytes of CPython's linear congruential generator (`lcg_urandom`) seeded with it.
    pub fn from_seed(seed: u32) -> HashKey {
        if seed == 0 {
            return HashKey { k0: 0, k1: 0 };
        }
        let mut x = seed;
        let mut bytes = [0u8; 16];
        for b in &mut bytes {
            x = x.wrapping_mul(214_013).wrapping_add(2_531_011);
            *b = ((x >> 16) & 0xff) as u8;
        }
        let (k0, k1) = bytes.split_at(8);
        HashKey {
            k0: u64::from_le_bytes(k0.try_into().unwrap_or_default()),
            k1: u64::from_le_bytes(k1.try_into().unwrap_or_default()),
        }
    }

    /// A key drawn at random, as CPython draws one at start from the system's randomness.
    /// (`RandomState` is seeded from the system's randomness once a process, then stepped.)
    fn random() -> HashKey {
        let draw = || {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u8(0);
            hasher.finish()
        };
        HashKey {
            k0: draw(),
            k1: draw(),
        }
    }

    /// This process's key, drawn once at its first use: `PYTHONHASHSEED`'s when it is set to
    /// a number CPython takes (0 to 4294967295), a random one otherwise (unset, `random`, or
    /// a value CPython would refuse to start with).
    pub fn of_process() -> HashKey {
        static KEY: OnceLock<HashKey> = OnceLock::new();
        *KEY.get_or_init(|| {
            std::env::var("PYTHONHASHSEED")
                .ok()
                .and_then(|seed| seed.trim().parse::<u32>().ok())
                .map_or_else(HashKey::random, HashKey::from_seed)
        })
    }
}

/// SipHash-1-3 of `bytes` under `key`, as CPython 3.11 computes it (`Python/pyhash.c`,
/// `siphash13`).
fn siphash13(key: HashKey, bytes: &[u8]) -> u64 {
    let mut v0 = key.k0 ^ 0x736f_6d65_7073_6575;
    let mut v1 = key.k1 ^ 0x646f_7261_6e64_6f6d;
    let mut v2 = key.k0 ^ 0x6c79_6765_6e65_7261;
    let mut v3 = key.k1 ^ 0x7465_6462_7974_6573;
    let round = |v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64| {
        *v0 = v0.wrapping_add(*v1);
        *v2 = v2.wrapping_add(*v3);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v1);
        *v0 = v0.wrapping_add(*v3);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.rotate_left(32);
    };
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let m = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        v3 ^= m;
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= m;
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    let b = ((bytes.len() as u64) << 56) | u64::from_le_bytes(tail);
    v3 ^= b;
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    v0 ^= b;
    v2 ^= 0xff;
    for _ in 0..3 {
        round(&mut v0, &mut v1, &mut v2, &mut v3);
    }
    v0 ^ v1 ^ v2 ^ v3
}

/// CPython's `hash()` of a `str` under `key`: SipHash-1-3 of the string as CPython stores it
/// (one byte a character when all are below U+0100, two below U+10000, else four; little
/// endian), `0` for the empty string, `-1` made `-2`.
pub fn str_hash(key: HashKey, s: &str) -> i64 {
    if s.is_empty() {
        return 0;
    }
    let widest = s.chars().map(u32::from).max().unwrap_or(0);
    let width = match widest {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        _ => 4,
    };
    let bytes: Vec<u8> = s
        .chars()
        .flat_map(|c| u32::from(c).to_le_bytes().into_iter().take(width))
        .collect();
    match siphash13(key, &bytes) as i64 {
        -1 => -2,
        hash => hash,
    }
}

/// CPython's `LINEAR_PROBES`: the slots after the first a probe looks at before it jumps.
const LINEAR_PROBES: usize = 9;

/// CPython's `PERTURB_SHIFT`.
const PERTURB_SHIFT: u32 = 5;

/// A set's hash table: its slots, each a member's index and hash.
struct Table {
    slots: Vec<Option<(usize, i64)>>,
}

impl Table {
    fn new(size: usize) -> Table {
        Table {
            slots: vec![None; size],
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The free slot a new member of `hash` lands in: its hash's slot, the slots after it
    /// (when they are in the table), then CPython's perturbed jump (`set_add_entry` and
    /// `set_insert_clean` probe alike in a table without deleted entries).
    fn free_slot(&self, hash: i64) -> usize {
        let mask = self.mask();
        let mut perturb = hash as u64 as usize;
        let mut i = (hash as u64 as usize) & mask;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for at in i..=i + probes {
                if self.slots[at].is_none() {
                    return at;
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb)) & mask;
        }
    }
}

/// The members of `set(items)` in CPython's iteration order under `key`: each item added in
/// turn (a duplicate once), the table of 8 slots (`PySet_MINSIZE`) grown when three fifths are
/// used to the smallest power of two above four times the members, the old slots moved in
/// their order; then the slots read in order.
pub fn set_order(key: HashKey, items: Vec<String>) -> Vec<String> {
    let mut table = Table::new(8);
    let mut used = 0usize;
    let mut kept: Vec<Option<String>> = Vec::with_capacity(items.len());
    for item in items {
        let hash = str_hash(key, &item);
        let duplicate = table
            .slots
            .iter()
            .flatten()
            .any(|&(at, h)| h == hash && kept[at].as_deref() == Some(item.as_str()));
        if duplicate {
            continue;
        }
        let slot = table.free_slot(hash);
        table.slots[slot] = Some((kept.len(), hash));
        kept.push(Some(item));
        used += 1;
        // `set_add_entry`: `fill * 5 < mask * 3` keeps the table (no entry is ever deleted
        // here, so the fill is the count of members).
        if used * 5 >= table.mask() * 3 {
            let minused = if used > 50_000 { used * 2 } else { used * 4 };
            let mut size = 8;
            while size <= minused {
                size <<= 1;
            }
            let mut grown = Table::new(size);
            for &(at, hash) in table.slots.iter().flatten() {
                let slot = grown.free_slot(hash);
                grown.slots[slot] = Some((at, hash));
            }
            table = grown;
        }
    }
    table
        .slots
        .iter()
        .flatten()
        .filter_map(|&(at, _)| kept.get_mut(at).and_then(Option::take))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    /// `hash()` of these strings in CPython 3.11.7 under `PYTHONHASHSEED=0` and `=1`.
    #[test]
    fn string_hashes_are_cpythons() {
        let zero = HashKey::from_seed(0);
        let one = HashKey::from_seed(1);
        assert_eq!(str_hash(zero, ""), 0);
        for (s, h0, h1) in HASHES {
            assert_eq!(str_hash(zero, s), *h0, "{s:?} under 0");
            assert_eq!(str_hash(one, s), *h1, "{s:?} under 1");
        }
    }

    /// `str(set(items))` in CPython 3.11.7 under `PYTHONHASHSEED=0`, `=1` and `=12345`.
    #[test]
    fn set_orders_are_cpythons() {
        for (seed, orders) in ORDERS {
            assert_eq!(orders.len(), SETS.len(), "under {seed}");
            for (items, order) in SETS.iter().zip(orders.iter()) {
                assert_eq!(
                    set_order(HashKey::from_seed(*seed), strings(items)),
                    strings(order),
                    "set({items:?}) under {seed}"
                );
            }
        }
    }

    /// The order is a function of the key alone: the same key gives the same order, another
    /// key another order for some value, and every order holds the same members.
    #[test]
    fn the_order_follows_the_key() {
        let items = strings(&["a", "b", "c", "dd", "e", "f"]);
        let mut orders = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let key = HashKey::from_seed(seed);
            let order = set_order(key, items.clone());
            assert_eq!(order, set_order(key, items.clone()));
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, items);
            orders.insert(order);
        }
        assert!(orders.len() > 1, "{orders:?}");
        assert_eq!(
            set_order(HashKey::from_seed(3), Vec::new()),
            Vec::<String>::new()
        );
        assert_eq!(
            set_order(HashKey::from_seed(3), strings(&["x", "x"])),
            strings(&["x"])
        );
    }

    /// `(string, hash under PYTHONHASHSEED=0, hash under PYTHONHASHSEED=1)`, from CPython 3.11.7.
    const HASHES: &[(&str, i64, i64)] = &[
        ("a", 4644417185603328019, -3012895188637184397),
        ("b", -8420940591063670578, 8280038809915344019),
        ("dd", -1536097282418655777, 1374857177290626007),
        ("hello world", -5642461784034726774, 4697380503286254714),
        ("12345678", 3785724242978802311, 500036314421443289),
        ("123456789", 1133797698992234447, -208597201830176158),
        ("é", 6047309291227476195, 8133168473585362875),
        ("naïve", 7682306841811832039, 2609374546601413833),
        ("€uro", 7542247858446192590, -8458760685275807288),
        ("𝄞 clef", 4780799435758234772, -215505328020395514),
        ("ÿ", 3476900567878811119, -911257459897288558),
        ("Ā", 75343234424780393, -4668527339490748059),
        ("日本語テキスト", 5570022306295089571, -8653291864130687599),
        ("x,y", 3304418168946807198, -8291862555299787995),
    ];

    /// The sets' members, each set's `items` in the order given to `set(items)`.
    const SETS: &[&[&str]] = &[
        &["k2", "blue"],
        &["k7", "k23"],
        &["dd", "e"],
        &["k16", "gg", "k5"],
        &["k19", "dd", "k14"],
        &["é", "c", "f", "k9"],
        &["k8", "e", "𝄞", "f"],
        &["k17", "k9", "dd", "k18", "red"],
        &["€", "k22", "k19", "dd", "k18"],
        &["k19", "k7", "dd", "€", "c", "k17"],
        &["green", "k0", "k8", "blue", "k16", "red", "k18"],
        &["k1", "k17", "k25", "x2", "gg", "k19", "k18", "k22"],
        &["x3", "k5", "gg", "k17", "e", "k18", "dd", "k21", "é", "k13"],
        &[
            "k25", "k16", "k9", "k2", "k11", "k19", "k29", "k5", "k1", "𝄞", "x2", "k20",
        ],
        &[
            "f", "k18", "k1", "k15", "k13", "k3", "k10", "k0", "k20", "e", "red", "k14", "k8",
            "x1", "k24",
        ],
        &[
            "blue",
            "k13",
            "k8",
            "c",
            "k24",
            "e",
            "k17",
            "k18",
            "k2",
            "k3",
            "k4",
            "k28",
            "k11",
            "k25",
            "f",
            "moooooooooooooooooooo",
            "k12",
            "k19",
        ],
        &[
            "k24", "e", "dd", "k26", "k1", "k23", "k18", "k10", "k0", "k6", "k4", "b", "k11",
            "k19", "x1", "red", "k13", "k29", "gg",
        ],
        &[
            "k0",
            "green",
            "𝄞",
            "k7",
            "k26",
            "k13",
            "f",
            "x1",
            "k10",
            "k25",
            "k17",
            "moooooooooooooooooooo",
            "k28",
            "k9",
            "k18",
            "k8",
            "k4",
            "k3",
            "k21",
            "x3",
        ],
        &[
            "€",
            "blue",
            "f",
            "x2",
            "k28",
            "k29",
            "k24",
            "a",
            "k13",
            "k19",
            "k26",
            "long member name",
            "k0",
            "k22",
            "k25",
            "k8",
            "k5",
            "k1",
            "k17",
            "x1",
            "e",
            "k4",
            "k18",
            "k12",
            "k2",
        ],
    ];

    /// `(PYTHONHASHSEED, list(set(items)) for each of SETS)`, from CPython 3.11.7.
    const ORDERS: &[(u32, &[&[&str]])] = &[
        (
            0,
            &[
                &["k2", "blue"],
                &["k23", "k7"],
                &["e", "dd"],
                &["k16", "k5", "gg"],
                &["k14", "k19", "dd"],
                &["k9", "f", "c", "é"],
                &["e", "f", "k8", "𝄞"],
                &["k9", "k17", "red", "k18", "dd"],
                &["k19", "k22", "€", "k18", "dd"],
                &["k19", "k17", "c", "€", "k7", "dd"],
                &["k0", "green", "red", "k16", "k8", "k18", "blue"],
                &["k1", "k19", "k22", "gg", "k25", "k17", "k18", "x2"],
                &["k21", "é", "gg", "k17", "k13", "k5", "x3", "e", "k18", "dd"],
                &[
                    "k1", "k9", "k2", "k19", "k25", "x2", "𝄞", "k16", "k5", "k29", "k20", "k11",
                ],
                &[
                    "k1", "f", "k24", "k14", "k3", "k0", "red", "k13", "k10", "x1", "k8", "e",
                    "k18", "k20", "k15",
                ],
                &[
                    "moooooooooooooooooooo",
                    "k12",
                    "k24",
                    "k2",
                    "k28",
                    "f",
                    "k19",
                    "k3",
                    "k25",
                    "k17",
                    "k13",
                    "c",
                    "k8",
                    "k4",
                    "e",
                    "k18",
                    "blue",
                    "k11",
                ],
                &[
                    "k1", "k18", "k29", "k0", "red", "k10", "k24", "k19", "gg", "b", "k6", "k11",
                    "k23", "dd", "k26", "k13", "x1", "k4", "e",
                ],
                &[
                    "moooooooooooooooooooo",
                    "k28",
                    "k25",
                    "k8",
                    "x3",
                    "k18",
                    "k7",
                    "k9",
                    "f",
                    "k3",
                    "green",
                    "k0",
                    "𝄞",
                    "k10",
                    "k17",
                    "k21",
                    "k26",
                    "k13",
                    "x1",
                    "k4",
                ],
                &[
                    "k1",
                    "k28",
                    "k25",
                    "a",
                    "k8",
                    "k18",
                    "k29",
                    "f",
                    "k0",
                    "k5",
                    "€",
                    "k24",
                    "k19",
                    "k22",
                    "k17",
                    "x2",
                    "blue",
                    "k12",
                    "long member name",
                    "k26",
                    "k2",
                    "k13",
                    "x1",
                    "k4",
                    "e",
                ],
            ],
        ),
        (
            1,
            &[
                &["k2", "blue"],
                &["k7", "k23"],
                &["e", "dd"],
                &["gg", "k16", "k5"],
                &["k14", "k19", "dd"],
                &["f", "k9", "é", "c"],
                &["f", "e", "𝄞", "k8"],
                &["red", "k18", "k17", "dd", "k9"],
                &["€", "k19", "k18", "dd", "k22"],
                &["€", "k19", "dd", "k7", "k17", "c"],
                &["blue", "red", "k18", "k16", "k8", "green", "k0"],
                &["gg", "k19", "k18", "x2", "k17", "k22", "k25", "k1"],
                &["gg", "k21", "k5", "k18", "e", "k13", "x3", "k17", "dd", "é"],
                &[
                    "k29", "k11", "k5", "k19", "k16", "x2", "k20", "𝄞", "k9", "k2", "k25", "k1",
                ],
                &[
                    "k24", "k10", "red", "k8", "k3", "k18", "e", "k13", "k14", "x1", "k15", "k20",
                    "f", "k0", "k1",
                ],
                &[
                    "k11",
                    "k4",
                    "k24",
                    "blue",
                    "k3",
                    "k19",
                    "k18",
                    "e",
                    "k13",
                    "k28",
                    "k17",
                    "k8",
                    "f",
                    "moooooooooooooooooooo",
                    "k2",
                    "k12",
                    "k25",
                    "c",
                ],
                &[
                    "k10", "k19", "k18", "x1", "b", "k1", "k4", "k24", "k6", "e", "k0", "k29",
                    "red", "k13", "k23", "dd", "gg", "k11", "k26",
                ],
                &[
                    "k10",
                    "k18",
                    "x1",
                    "k28",
                    "k4",
                    "k17",
                    "green",
                    "k0",
                    "k13",
                    "k7",
                    "k8",
                    "k25",
                    "k21",
                    "k3",
                    "x3",
                    "k26",
                    "f",
                    "moooooooooooooooooooo",
                    "k9",
                    "𝄞",
                ],
                &[
                    "blue",
                    "k19",
                    "k18",
                    "x1",
                    "k28",
                    "k2",
                    "k1",
                    "€",
                    "k4",
                    "k24",
                    "e",
                    "k17",
                    "k0",
                    "k29",
                    "k5",
                    "k13",
                    "x2",
                    "k8",
                    "k22",
                    "k25",
                    "a",
                    "k26",
                    "f",
                    "long member name",
                    "k12",
                ],
            ],
        ),
        (
            12345,
            &[
                &["k2", "blue"],
                &["k23", "k7"],
                &["dd", "e"],
                &["k5", "gg", "k16"],
                &["k19", "dd", "k14"],
                &["k9", "é", "c", "f"],
                &["k8", "f", "𝄞", "e"],
                &["red", "k17", "k18", "k9", "dd"],
                &["k19", "€", "k18", "k22", "dd"],
                &["k19", "k7", "€", "k17", "dd", "c"],
                &["k8", "red", "green", "blue", "k18", "k16", "k0"],
                &["k19", "x2", "k17", "k18", "k22", "gg", "k25", "k1"],
                &["k13", "é", "k17", "k18", "e", "dd", "k21", "k5", "gg", "x3"],
                &[
                    "k11", "k19", "x2", "𝄞", "k29", "k16", "k9", "k2", "k20", "k5", "k25", "k1",
                ],
                &[
                    "k13", "k8", "k14", "red", "f", "k24", "k18", "k15", "x1", "e", "k10", "k20",
                    "k0", "k3", "k1",
                ],
                &[
                    "k11",
                    "k13",
                    "k8",
                    "k12",
                    "k19",
                    "k28",
                    "k24",
                    "f",
                    "k17",
                    "blue",
                    "k18",
                    "moooooooooooooooooooo",
                    "e",
                    "k2",
                    "k4",
                    "c",
                    "k3",
                    "k25",
                ],
                &[
                    "k13", "k26", "red", "k24", "k19", "k29", "dd", "k4", "k6", "k23", "k18", "x1",
                    "b", "k0", "gg", "k1", "k11", "e", "k10",
                ],
                &[
                    "k13",
                    "k26",
                    "k7",
                    "𝄞",
                    "x3",
                    "k25",
                    "k8",
                    "k28",
                    "green",
                    "k17",
                    "k4",
                    "f",
                    "k18",
                    "x1",
                    "k9",
                    "k21",
                    "k0",
                    "moooooooooooooooooooo",
                    "k10",
                    "k3",
                ],
                &[
                    "k13",
                    "long member name",
                    "k26",
                    "k24",
                    "a",
                    "k25",
                    "k19",
                    "k8",
                    "k28",
                    "k17",
                    "k29",
                    "k4",
                    "f",
                    "blue",
                    "k18",
                    "x1",
                    "k2",
                    "k0",
                    "k1",
                    "k12",
                    "x2",
                    "€",
                    "k22",
                    "e",
                    "k5",
                ],
            ],
        ),
        (
            4294967295,
            &[
                &["blue", "k2"],
                &["k7", "k23"],
                &["e", "dd"],
                &["k5", "k16", "gg"],
                &["k14", "k19", "dd"],
                &["f", "k9", "é", "c"],
                &["f", "e", "k8", "𝄞"],
                &["k18", "dd", "k17", "red", "k9"],
                &["k22", "k18", "€", "dd", "k19"],
                &["€", "dd", "c", "k17", "k7", "k19"],
                &["k18", "green", "k8", "k0", "red", "blue", "k16"],
                &["k22", "k18", "k1", "k25", "x2", "k17", "gg", "k19"],
                &["x3", "k18", "k13", "e", "k21", "k5", "dd", "k17", "é", "gg"],
                &[
                    "k29", "𝄞", "k20", "k1", "k11", "k5", "k25", "x2", "k9", "k16", "k19", "k2",
                ],
                &[
                    "k15", "k18", "k13", "k10", "e", "k20", "k1", "k24", "k8", "x1", "k0", "red",
                    "k3", "f", "k14",
                ],
                &[
                    "k18",
                    "k13",
                    "moooooooooooooooooooo",
                    "e",
                    "k24",
                    "k28",
                    "k25",
                    "k12",
                    "k8",
                    "k4",
                    "c",
                    "k17",
                    "blue",
                    "k3",
                    "f",
                    "k11",
                    "k19",
                    "k2",
                ],
                &[
                    "k18", "k13", "k29", "red", "gg", "k10", "k1", "k4", "k0", "k26", "k11", "k19",
                    "k24", "dd", "e", "k6", "x1", "b", "k23",
                ],
                &[
                    "k18",
                    "k13",
                    "𝄞",
                    "k28",
                    "k8",
                    "k17",
                    "k9",
                    "x3",
                    "k10",
                    "green",
                    "k25",
                    "k4",
                    "k0",
                    "k26",
                    "moooooooooooooooooooo",
                    "k21",
                    "k3",
                    "f",
                    "x1",
                    "k7",
                ],
                &[
                    "k18",
                    "k13",
                    "k29",
                    "a",
                    "k28",
                    "long member name",
                    "k8",
                    "k17",
                    "k22",
                    "€",
                    "k1",
                    "k25",
                    "k4",
                    "k0",
                    "k26",
                    "k19",
                    "k24",
                    "k12",
                    "blue",
                    "f",
                    "k5",
                    "k2",
                    "e",
                    "x2",
                    "x1",
                ],
            ],
        ),
    ];
}
