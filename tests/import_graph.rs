//! No import circles between the modules of a crate: if `a` uses `b`, `b`
//! does not (even through others) use `a`. Read from the sources: every
//! `crate::x::...` and `super::...` path outside comments is an edge from
//! the file's module to the longest module prefix of the path. A module's
//! own submodules (`mod x;`, `self::x`) and re-exports are not edges: a
//! parent that declares a child is not an import of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`abi::fail`) of every `.rs` file under `src`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The module `path` (segments after `crate::`) refers to: its longest
/// prefix that is a module.
fn target(path: &[&str], known: &BTreeMap<String, PathBuf>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| known.contains_key(m))
}

/// Edges of one crate: module -> modules it uses.
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules(src);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &known {
        let text = std::fs::read_to_string(file).expect("readable");
        let segs: Vec<&str> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").collect()
        };
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let words: Vec<&str> = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .filter(|w| w.contains("::"))
                .collect();
            for w in words {
                let parts: Vec<&str> = w.split("::").filter(|p| !p.is_empty()).collect();
                let absolute: Vec<&str> = match parts.first() {
                    Some(&"crate") => parts[1..].to_vec(),
                    Some(&"super") => {
                        let mut base = segs.clone();
                        // `mod.rs`/a file's `super` is its parent module.
                        let mut rest = &parts[..];
                        while rest.first() == Some(&"super") {
                            base.pop();
                            rest = &rest[1..];
                        }
                        base.extend_from_slice(rest);
                        base
                    }
                    _ => continue,
                };
                let Some(to) = target(&absolute, &known) else {
                    continue;
                };
                // A module using its own descendants or itself is no circle.
                if to == *module || to.starts_with(&format!("{module}::")) || module.is_empty() {
                    continue;
                }
                // Using an ancestor's re-export is using the ancestor's file
                // only when the ancestor is a real module file, not the root.
                if to.is_empty() {
                    continue;
                }
                graph.entry(module.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let at = path.iter().position(|p| p == n).expect("on the path");
                let mut c = path[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in [
        "src",
        "runtime/src",
        "compiler/src",
        "codegen/src",
        "interp/src",
        "difftest/src",
        "bench/src",
    ] {
        let graph = edges(&root.join(krate));
        assert!(
            !graph.is_empty(),
            "{krate}: no edges found (the reader is broken)"
        );
        if let Some(c) = cycle(&graph) {
            panic!("{krate}: import circle {}", c.join(" -> "));
        }
    }
}

#[test]
fn the_reader_finds_a_planted_circle() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle(&graph).expect("found"), ["a", "b", "c", "a"]);
    graph.get_mut("c").unwrap().clear();
    assert_eq!(cycle(&graph), None);
}
