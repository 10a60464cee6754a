//! The server's modules form layers that only look down (issue 14): the import graph of
//! `server/src` has no cycle. A module is a top-level file or folder of `server/src`; an
//! import is any `crate::<module>` path in its non-test code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The module each `.rs` file under `dir` belongs to, with the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            // Test-only files may reach up (a room's test may start a hub).
            let file = path.file_stem().unwrap().to_string_lossy();
            if file == "tests" || file.ends_with("_tests") {
                continue;
            }
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if ["lib", "main", "bin"].contains(&module.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests may reach up (a room's test may start a hub).
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let deps = graph.entry(module.clone()).or_default();
            for (i, _) in code.match_indices("crate::") {
                let name: String = code[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

/// A cycle through `graph`, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the path, 2: done.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|n| n == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 if graph.contains_key(next) => {
                    if let Some(c) = visit(next, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_modules_of_the_server_import_each_other_in_no_circle() {
    let graph = graph();
    assert!(graph.len() > 20, "modules found: {graph:?}");
    if let Some(c) = cycle(&graph) {
        panic!("an import cycle: {}", c.join(" -> "));
    }
}

#[test]
fn the_game_rooms_know_nothing_above_them() {
    let graph = graph();
    for low in ["game", "rooms", "peer", "codec", "history", "lobby", "bot"] {
        let deps = &graph[low];
        for high in ["hub", "connection", "http", "api", "web"] {
            assert!(!deps.contains(high), "{low} imports {high}");
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(cycle(&g), None);
}
