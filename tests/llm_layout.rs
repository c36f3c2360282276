//! The LLM modules (`src/core/llm/`) depend on each other in one direction: the codec table
//! picks each provider's encoder and decoder, the providers use the shared wire helpers, and
//! nothing below imports anything above it. A cycle (such as `decode.rs` dispatching to
//! `openai.rs` while `openai.rs` took its frame handler trait from `decode.rs`) means no module
//! can be read, or changed, without the others; this test names the first cycle it finds.
#![cfg(not(target_arch = "wasm32"))] // native ring: it reads the source tree

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sibling modules `text` refers to (`super::x`, `super::{x, y::z}`,
/// `crate::core::llm::x`), outside its tests.
fn references(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut out = BTreeSet::new();
    for prefix in ["super::", "crate::core::llm::"] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                group.split(',').collect()
            } else {
                vec![rest]
            };
            for name in names {
                let name = name.trim();
                let end = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                if modules.contains(&name[..end]) {
                    out.insert(name[..end].to_string());
                }
            }
        }
    }
    out
}

/// A cycle in `graph` as the list of modules along it, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut found = path[i..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(found) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(found);
        }
    }
    None
}

#[test]
fn llm_modules_import_each_other_in_one_direction() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/llm");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("src/core/llm is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            files.insert(
                name,
                std::fs::read_to_string(&path).expect("a readable module"),
            );
        }
    }
    assert!(
        files.contains_key("openai") && files.contains_key("decode"),
        "{files:?}"
    );
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let graph: BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .map(|(name, text)| {
            let mut refs = references(text, &modules);
            refs.remove(name);
            (name.clone(), refs)
        })
        .collect();
    assert_eq!(
        cycle(&graph),
        None,
        "the LLM modules import each other in a circle"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", "use super::{b, c::X};"),
        ("b", "use crate::core::llm::c::Y;"),
        ("c", "fn f() { super::a::g() }\n#[cfg(test)]\nuse super::b;"),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), references(t, &modules)))
    .collect();
    assert_eq!(
        cycle(&graph),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    let mut acyclic = graph.clone();
    acyclic.insert("c".into(), BTreeSet::new());
    assert_eq!(cycle(&acyclic), None);
}
