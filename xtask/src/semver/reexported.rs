//! The part of svc-emulator's API that lives in its implementation crates, read from rustdoc
//! JSON: which of their items svc-emulator re-exports ([`reexported`]), and each crate's JSON
//! cut down to those items ([`prune`]), so that cargo-semver-checks holds exactly them.
//!
//! cargo-semver-checks reads one crate's JSON at a time and no item of another crate, not even
//! one re-exported (obi1kenobi/cargo-semver-checks#638): svc-emulator's own check does not see
//! `EmulatorConfig` (svc-emulator-state's) or `ModelInfo` (svc-engine's). Each implementation
//! crate is checked instead, on the items svc-emulator re-exports and nothing else: the rest of
//! it may change in any release. An item svc-emulator no longer re-exports reads as removed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

/// An item of another crate: its path where it is defined (`["svc_engine", "types", "model",
/// "ModelInfo"]`, private modules included, as rustdoc's `paths` names it) and its kind
/// (`struct`, `function`, `module`, ...).
pub type Item = (Vec<String>, String);

/// The items of other crates that `emulator` (svc-emulator's rustdoc JSON) re-exports, by the
/// crate that defines them (its library's name: `svc_engine`), from its root and every public
/// module; re-exports hidden from the docs are not its API and are left out.
pub fn reexported(emulator: &Value) -> Result<BTreeMap<String, BTreeSet<Item>>, String> {
    let index = &emulator["index"];
    let root = id_of(&emulator["root"])?;
    let (mut out, mut seen, mut modules) = (BTreeMap::new(), BTreeSet::new(), vec![root]);
    while let Some(module) = modules.pop() {
        if !seen.insert(module.clone()) {
            continue;
        }
        for child in module_items(index, &module) {
            let Some(item) = index.get(&child).filter(|item| !hidden(item)) else {
                continue;
            };
            if item["inner"].get("module").is_some() {
                modules.push(child);
                continue;
            }
            let Some(import) = item["inner"].get("use") else {
                continue;
            };
            let Ok(target) = id_of(&import["id"]) else {
                continue;
            };
            if index
                .get(&target)
                .is_some_and(|t| t["inner"].get("module").is_some())
            {
                modules.push(target);
                continue;
            }
            let Some(path) = emulator["paths"].get(&target) else {
                continue;
            };
            let crate_id = path["crate_id"].to_string();
            let Some(krate) = emulator["external_crates"][&crate_id]["name"].as_str() else {
                continue;
            };
            let items: &mut BTreeSet<Item> = out.entry(krate.to_owned()).or_default();
            items.insert(item_of(path));
        }
    }
    Ok(out)
}

/// The item a rustdoc JSON `paths` entry names: its path's segments and its kind.
fn item_of(path: &Value) -> Item {
    let segments = path["path"].as_array().into_iter().flatten();
    let segments = segments.filter_map(Value::as_str).map(str::to_owned);
    let kind = path["kind"].as_str().unwrap_or_default().to_owned();
    (segments.collect(), kind)
}

/// Cuts `doc` (a crate's rustdoc JSON) down to `wanted` and the modules and re-exports that
/// lead to them: every other item leaves the modules' item lists, so that cargo-semver-checks
/// finds no path to it (it stays in the index, where the kept items' impls and fields may
/// still name it). A wanted module is kept whole. Fails on an item the crate does not define.
pub fn prune(doc: &mut Value, wanted: &BTreeSet<Item>) -> Result<(), String> {
    let mut targets = BTreeSet::new();
    let mut missing = wanted.clone();
    for (id, path) in doc["paths"].as_object().into_iter().flatten() {
        if path["crate_id"] != 0 {
            continue;
        }
        let item = item_of(path);
        if missing.remove(&item) {
            targets.insert(id.clone());
        }
    }
    if let Some((path, kind)) = missing.first() {
        return Err(format!(
            "the rustdoc JSON has no {kind} {} ({} item(s) not found)",
            path.join("::"),
            missing.len()
        ));
    }
    let root = id_of(&doc["root"])?;
    let mut kept = HashMap::new();
    leads_to_target(&doc["index"], &root, &targets, &mut kept);
    let index = doc["index"]
        .as_object_mut()
        .ok_or("the rustdoc JSON has no index")?;
    for (module, items) in kept.into_iter().filter_map(|(m, items)| Some((m, items?))) {
        if let Some(list) = index
            .get_mut(&module)
            .and_then(|m| m["inner"].get_mut("module"))
        {
            list["items"] = items
                .into_iter()
                .map(|id| id.parse::<u64>().map_or(Value::String(id), Value::from))
                .collect();
        }
    }
    Ok(())
}

/// Whether module `module` holds a target, or a module or re-export that leads to one; its
/// items cut down to those, in `kept` (`None` for a wanted module, kept whole). A module met
/// again (a glob re-export's cycle) counts as leading nowhere the second time.
fn leads_to_target(
    index: &Value,
    module: &str,
    targets: &BTreeSet<String>,
    kept: &mut HashMap<String, Option<Vec<String>>>,
) -> bool {
    if targets.contains(module) {
        kept.insert(module.to_owned(), None);
        return true;
    }
    if let Some(items) = kept.get(module) {
        return items.as_ref().is_none_or(|items| !items.is_empty());
    }
    kept.insert(module.to_owned(), Some(Vec::new()));
    let mut leading = Vec::new();
    for child in module_items(index, module) {
        let Some(item) = index.get(&child) else {
            continue;
        };
        let through = match item["inner"].get("use") {
            Some(import) => id_of(&import["id"]).ok(),
            None => Some(child.clone()),
        };
        let Some(through) = through else {
            continue;
        };
        let is_module = index
            .get(&through)
            .is_some_and(|t| t["inner"].get("module").is_some());
        let leads = targets.contains(&through)
            || (is_module && leads_to_target(index, &through, targets, kept));
        if leads {
            leading.push(child);
        }
    }
    let found = !leading.is_empty();
    kept.insert(module.to_owned(), Some(leading));
    found
}

/// The ids of the items module `id` lists.
fn module_items(index: &Value, id: &str) -> Vec<String> {
    let items = index[id]["inner"]["module"]["items"].as_array();
    items
        .into_iter()
        .flatten()
        .filter_map(|i| id_of(i).ok())
        .collect()
}

/// An id of rustdoc JSON (a number in its format, a string in older ones) as the index's key.
fn id_of(id: &Value) -> Result<String, String> {
    match id {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("not an item id of rustdoc JSON: {other}")),
    }
}

/// Whether an item is `#[doc(hidden)]`: not API, cargo-semver-checks leaves it out too.
fn hidden(item: &Value) -> bool {
    let attrs = item["attrs"].as_array().into_iter().flatten();
    attrs
        .map(Value::to_string)
        .any(|a| a.contains("doc(hidden)"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A crate `lib` whose root holds `a` (a module, with `pub use inner::Kept;` and `Other`)
    /// and `unrelated`; `Kept` is defined in the private module `inner`.
    fn library() -> Value {
        let module = |items: Value| json!({"inner": {"module": {"items": items}}, "attrs": []});
        let plain = |kind: &str| json!({"inner": {kind: {}}, "attrs": []});
        let import = |id: u64| json!({"inner": {"use": {"id": id}}, "attrs": []});
        let path = |p: &[&str], kind: &str| json!({"crate_id": 0, "path": p, "kind": kind});
        json!({
            "root": 0,
            "index": {
                "0": module(json!([1, 5])),
                "1": module(json!([2, 4])),
                "2": import(3),
                "3": plain("struct"),
                "4": plain("struct"),
                "5": module(json!([6])),
                "6": plain("function"),
            },
            "paths": {
                "3": path(&["lib", "a", "inner", "Kept"], "struct"),
                "4": path(&["lib", "a", "Other"], "struct"),
                "6": path(&["lib", "unrelated", "f"], "function"),
            },
            "external_crates": {},
        })
    }

    fn wanted(path: &[&str], kind: &str) -> BTreeSet<Item> {
        let path = path.iter().map(|s| (*s).to_owned()).collect();
        BTreeSet::from([(path, kind.to_owned())])
    }

    #[test]
    fn a_pruned_crate_lists_only_the_paths_to_the_wanted_items() {
        let mut doc = library();
        prune(&mut doc, &wanted(&["lib", "a", "inner", "Kept"], "struct")).unwrap();
        assert_eq!(doc["index"]["0"]["inner"]["module"]["items"], json!([1]));
        assert_eq!(doc["index"]["1"]["inner"]["module"]["items"], json!([2]));
        // The items themselves stay in the index: kept items may name them.
        assert!(doc["index"].get("4").is_some());
    }

    #[test]
    fn a_wanted_item_the_crate_lacks_fails_the_cut() {
        let mut doc = library();
        let err = prune(&mut doc, &wanted(&["lib", "a", "Gone"], "struct")).unwrap_err();
        assert!(err.contains("struct lib::a::Gone"), "{err}");
    }

    #[test]
    fn the_items_of_other_crates_that_a_crate_re_exports_are_found_in_its_modules() {
        let emulator = json!({
            "root": 0,
            "index": {
                "0": {"inner": {"module": {"items": [1, 2, 3]}}, "attrs": []},
                "1": {"inner": {"use": {"id": 10}}, "attrs": []},
                "2": {"inner": {"use": {"id": 11}}, "attrs": [{"other": "#[doc(hidden)]"}]},
                "3": {"inner": {"struct": {}}, "attrs": []},
            },
            "paths": {
                "10": {"crate_id": 7, "path": ["lib", "a", "inner", "Kept"], "kind": "struct"},
                "11": {"crate_id": 7, "path": ["lib", "a", "Other"], "kind": "struct"},
            },
            "external_crates": {"7": {"name": "lib"}},
        });
        let found = reexported(&emulator).unwrap();
        let expected = wanted(&["lib", "a", "inner", "Kept"], "struct");
        assert_eq!(found, BTreeMap::from([("lib".to_owned(), expected)]));
    }
}
