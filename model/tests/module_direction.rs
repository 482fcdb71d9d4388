//! The fault gates (`faults/`) sit below the components and the injector (`injector/`)
//! above the world, so no import circle runs through them. The graph is read from the
//! source: every path a file's code names (inline paths in function bodies as well as
//! `use` lines; comments and `#[cfg(test)]` modules left out), as an edge between files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every `.rs` file under `dir`, as paths relative to the source root.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(SOURCE).expect("under src").to_path_buf());
        }
    }
}

/// The module path of a file: `replica/mod.rs` → `["replica"]`, `lib.rs` → `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// A file's code without comments and without its test module.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The module paths a file's code names: `crate::a::b`, `super::a`, `self::a` (with
/// `use` groups `crate::{a, b::c}` expanded), and `x::y` where `x` is a module the file
/// declared (`mod x;`) or imported by name (`use crate::faults;` then `faults::store::…`).
fn named_paths(code: &str, module: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Vec<Vec<String>> {
    let split = |s: &str| s.split("::").filter(|p| !p.is_empty()).map(String::from).collect::<Vec<_>>();
    let mut out = Vec::new();
    // Each token starts after a separator, however many bytes the separator takes.
    let mut tokens = code.match_indices(|c: char| !(c.is_alphanumeric() || c == '_')).map(|(i, sep)| i + sep.len());
    let mut starts = vec![0];
    starts.extend(&mut tokens);
    for &start in &starts {
        let rest = &code[start.min(code.len())..];
        let head = rest.split("::").next().unwrap_or("");
        let base: Vec<String> = match head {
            "crate" => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            "self" => module.to_vec(),
            _ => continue,
        };
        if start > 0 && code[..start].ends_with("::") || !rest[head.len()..].starts_with("::") {
            continue;
        }
        let after = &rest[head.len() + 2..];
        let path_len = after.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(after.len());
        let mut prefix = base.clone();
        prefix.extend(split(&after[..path_len]));
        if after[path_len..].starts_with('{') {
            let group = &after[path_len + 1..after[path_len..].find('}').map_or(after.len(), |e| path_len + e)];
            for item in group.split(',') {
                let item = item.split(" as ").next().unwrap_or("").trim();
                let mut p = prefix.clone();
                if item != "self" {
                    p.extend(split(item));
                }
                out.push(p);
            }
        } else {
            out.push(prefix);
        }
    }
    // Names bound to modules: `mod x;` declarations and `use` paths that end at a module.
    let mut bound: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for word in code.split("mod ").skip(1) {
        let name: String = word.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if word[name.len()..].trim_start().starts_with(';') {
            let mut p = module.to_vec();
            p.push(name.clone());
            bound.insert(name, p);
        }
    }
    for p in out.iter().filter(|p| !p.is_empty() && modules.contains_key(*p)) {
        bound.insert(p.last().expect("non-empty").clone(), p.clone());
    }
    for &start in &starts {
        let rest = &code[start.min(code.len())..];
        let head: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let preceded_by_path = start > 1 && code[..start].ends_with("::");
        if let (Some(target), false) = (bound.get(&head), preceded_by_path) {
            if let Some(tail) = rest[head.len()..].strip_prefix("::") {
                let mut p = target.clone();
                p.extend(split(&tail[..tail.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(tail.len())]));
                out.push(p);
            }
        }
    }
    out
}

/// The file a module path lands in: its longest prefix that is a module of the crate.
fn file_of(path: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]).cloned())
}

/// A path from `start` back to itself, if there is one (depth-first search).
fn cycle_through(start: &PathBuf, graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![start.clone()]];
    while let Some(path) = stack.pop() {
        for next in graph.get(path.last().expect("non-empty")).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            if next == start {
                return Some(longer);
            }
            if seen.insert(next.clone()) {
                stack.push(longer);
            }
        }
    }
    None
}

fn dependency_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut all = Vec::new();
    files(Path::new(SOURCE), &mut all);
    let modules: BTreeMap<Vec<String>, PathBuf> = all.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut graph = BTreeMap::new();
    for file in &all {
        let text = std::fs::read_to_string(Path::new(SOURCE).join(file)).expect("readable source");
        let module = module_of(file);
        let targets: BTreeSet<PathBuf> = named_paths(&code_of(&text), &module, &modules)
            .iter()
            .filter_map(|p| file_of(p, &modules))
            // The crate root re-exports and wires everything; a path through it names an
            // item defined elsewhere, so it is no edge.
            .filter(|t| t != file && t.as_os_str() != "lib.rs")
            .collect();
        graph.insert(file.clone(), targets);
    }
    graph
}

/// The files whose place in the layering this test pins: the gates, the injector, the world.
fn layered(file: &Path) -> bool {
    file.starts_with("faults") || file.starts_with("injector") || file == Path::new("world.rs")
}

#[test]
fn no_import_cycle_runs_through_the_faults_the_injector_or_the_world() {
    let graph = dependency_graph();
    assert!(graph.len() > 40, "found only {} files: is the source root right?", graph.len());
    for file in graph.keys().filter(|f| layered(f)) {
        if let Some(found) = cycle_through(file, &graph) {
            let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            panic!("an import cycle between the model's files: {}", names.join(" -> "));
        }
    }
}

#[test]
fn the_fault_gates_never_reach_up_to_the_world_or_the_injector() {
    let graph = dependency_graph();
    let upward = ["world.rs", "injector/", "replica/", "admin.rs", "workload.rs", "store.rs", "broker.rs"];
    for (file, targets) in graph.iter().filter(|(f, _)| f.starts_with("faults")) {
        for target in targets {
            let t = target.to_string_lossy();
            assert!(
                !upward.iter().any(|u| t == *u || (u.ends_with('/') && t.starts_with(u))),
                "{} (a gate) imports {t}, which sits above it",
                file.display()
            );
        }
    }
}
