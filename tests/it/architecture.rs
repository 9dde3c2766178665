//! The layer picture of docs/architecture.md holds in the code (issue 19):
//! every `crate::…` path in `src/` names a module of a lower layer (or its
//! own), and no two sibling files of one module refer to each other both
//! ways. The picture is read from the document's `layers` block, so the page
//! and the check cannot drift apart.
//!
//! Pure file reading: no services needed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::rust_source::{lex, root, sources};

/// `module -> layer index` (0 = bottom) from the ```layers block: one line per
/// layer, top first, `name: module module …`.
fn layers() -> BTreeMap<String, usize> {
    let doc =
        fs::read_to_string(root().join("docs/architecture.md")).expect("docs/architecture.md");
    let block = doc
        .split("```layers")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```layers block in docs/architecture.md");
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let (_, modules) = line.split_once(':').expect("`layer: modules` line");
        for m in modules.split_whitespace() {
            let previous = out.insert(m.to_string(), lines.len() - 1 - i);
            assert!(previous.is_none(), "module {m} is in two layers");
        }
    }
    out
}

/// The code of a file without comments and with string literals emptied,
/// so a doc link to an upper module or a path in a message does not count.
fn code(text: &str) -> String {
    lex(text).code
}

/// The first path segments after every `prefix` (`crate::`, `super::`) in
/// `code`, expanding `prefix{a::x, b}` groups to `a`, `b`.
fn targets(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices(prefix) {
        // `super::super::` and `crate::` inside a longer identifier don't count.
        if at > 0 {
            let before = code[..at].chars().last().unwrap_or(' ');
            if before.is_ascii_alphanumeric() || before == '_' || before == ':' {
                continue;
            }
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || c != '{' {
                    item.push(c);
                }
            }
            out.insert(ident(item.trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// `src/a/b.rs` → `a`; `src/a.rs` → `a`.
fn top_module(rel: &Path) -> String {
    let first = rel.components().next().expect("component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

#[test]
fn every_crate_path_points_down_the_layers() {
    let layers = layers();
    let src = root().join("src");
    let files = sources(&src);
    let mut violations = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let from = top_module(rel);
        if from == "main" || from == "lib" {
            continue;
        }
        let Some(&from_layer) = layers.get(&from) else {
            violations.push(format!("{}: module {from} is in no layer", rel.display()));
            continue;
        };
        let text = fs::read_to_string(file).expect("read");
        for to in targets(&code(&text), "crate::") {
            if to == from {
                continue;
            }
            match layers.get(&to) {
                None => violations.push(format!("{}: crate::{to} is in no layer", rel.display())),
                Some(&l) if l >= from_layer => violations.push(format!(
                    "{}: {from} (layer {from_layer}) uses crate::{to} (layer {l})",
                    rel.display()
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against docs/architecture.md:\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_two_sibling_files_use_each_other() {
    let src = root().join("src");
    let files = sources(&src);
    // (dir, file stem) -> siblings it names through `super::` or `crate::<path>::`.
    let mut uses: BTreeMap<(PathBuf, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        if stem == "mod" || stem == "lib" || stem == "main" {
            continue;
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let text = code(&fs::read_to_string(file).expect("read"));
        let mut named = targets(&text, "super::");
        // `crate::codec::time::…` from `src/codec/fields.rs` names a sibling too.
        if let Ok(rel) = dir.strip_prefix(&src) {
            let module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if !module.is_empty() {
                named.extend(targets(&text, &format!("crate::{}::", module.join("::"))));
            }
        }
        uses.insert((dir, stem), named);
    }
    let mut cycles = Vec::new();
    for ((dir, a), named) in &uses {
        for b in named {
            if a < b
                && uses
                    .get(&(dir.clone(), b.clone()))
                    .is_some_and(|back| back.contains(a))
            {
                cycles.push(format!("{}: {a}.rs <-> {b}.rs", dir.display()));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "sibling import cycles:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_path_reader_sees_groups_and_skips_comments_and_strings() {
    let text = code(
        "use crate::{codec::X, domain::{a, b}, store};\n// crate::cli\n/* crate::http */\n\
         let s = \"crate::jobs\"; crate::pipeline::run();",
    );
    let got: Vec<String> = targets(&text, "crate::").into_iter().collect();
    assert_eq!(got, ["codec", "domain", "pipeline", "store"]);
}

/// The stored texts of every state machine (PROC_STATE, MSG_EVENT,
/// REQ_TRACK, JOB_RUN), read from the types themselves, so a new variant is
/// covered without editing this test.
fn state_names() -> BTreeSet<&'static str> {
    use msgx::domain::delivery::EventStatus;
    use msgx::domain::proc_state::ProcState;
    use msgx::domain::request_state::RequestState;
    use msgx::store::pg::job_run::Outcome;
    let mut out = BTreeSet::new();
    out.extend(ProcState::ALL.map(ProcState::as_str));
    out.extend(EventStatus::ALL.map(EventStatus::as_str));
    out.extend(RequestState::ALL.map(RequestState::as_str));
    out.extend(Outcome::ALL.map(Outcome::as_str));
    out
}

/// The state literals in `text`: a literal that is exactly a state's stored
/// text, or one that names it as SQL (`'DEAD'`) or as a query parameter
/// (`state=DEAD`). Prose that mentions a state ("go back to PENDING") is
/// no literal of it. Test modules (`#[cfg(test)]` to the end) are left out.
fn state_literals(text: &str, names: &BTreeSet<&str>) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    lex(code)
        .literals
        .into_iter()
        .filter(|(_, lit)| {
            names.iter().any(|n| {
                lit == n || lit.contains(&format!("'{n}'")) || lit.contains(&format!("={n}"))
            })
        })
        .collect()
}

#[test]
fn no_state_is_spelled_outside_the_store_and_the_domain() {
    let names = state_names();
    let src = root().join("src");
    let files = sources(&src);
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        if rel.starts_with("store") || rel.starts_with("domain") {
            continue;
        }
        let text = fs::read_to_string(file).expect("read");
        for (line, lit) in state_literals(&text, &names) {
            found.push(format!("src/{}:{line}: {lit:?}", rel.display()));
        }
    }
    assert!(
        found.is_empty(),
        "state literals outside src/store and src/domain (use the state's type):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_state_literal_check_sees_literals_sql_and_query_strings() {
    let names = state_names();
    let text = "// \"DEAD\" in a comment\nlet a = \"DEAD\";\nlet b = \"x\";\n\
                let c = \"WHERE state = 'SENT'\";\nlet d = format!(\"/m?state=FAILED\");\n\
                let e = \"go back to PENDING\";\n#[cfg(test)]\nmod tests { const X: &str = \"DEAD\"; }";
    let got: Vec<usize> = state_literals(text, &names)
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(got, [2, 4, 5]);
    assert!(names.contains("SKIPPED_LOCKED") && names.contains("EXPIRED"));
}
