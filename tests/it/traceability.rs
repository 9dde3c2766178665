//! docs/traceability.md holds: every code item and test a row names exists,
//! every numbered section of the design has a row (when the design is
//! checked out beside the project, `../shared/design/implementation.md`),
//! and every design ID cited in a comment under `src/` has a row. The page's
//! top explains the notation this reads.
//!
//! Pure file reading: no services needed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::rust_source::{lex, root, sources};

/// One table row of the page: the design cell, the code cell's paths with
/// their items, and the test names.
struct Row {
    line: usize,
    design: String,
    code: Vec<(String, Vec<String>)>,
    tests: Vec<String>,
}

/// The text inside backticks, in order (double backticks included).
fn ticked(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = cell;
    while let Some(start) = rest.find('`') {
        let after = rest[start..].trim_start_matches('`');
        let ticks = rest[start..].len() - after.len();
        let fence = "`".repeat(ticks);
        let Some(end) = after.find(&fence) else { break };
        out.push(after[..end].trim().to_string());
        rest = &after[end + ticks..];
    }
    out
}

fn rows() -> Vec<Row> {
    let doc =
        fs::read_to_string(root().join("docs/traceability.md")).expect("docs/traceability.md");
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('|') || line.starts_with("|---") || line.starts_with("| design ") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert_eq!(
            cells.len(),
            4,
            "docs/traceability.md:{}: a row has four cells (design | rule | code | tests)",
            i + 1
        );
        let mut code: Vec<(String, Vec<String>)> = Vec::new();
        for token in ticked(cells[2]) {
            if token.ends_with(".rs") {
                code.push((token, Vec::new()));
            } else {
                let Some((_, items)) = code.last_mut() else {
                    panic!(
                        "docs/traceability.md:{}: item `{token}` before any path",
                        i + 1
                    );
                };
                items.push(token);
            }
        }
        out.push(Row {
            line: i + 1,
            design: cells[0].trim().to_string(),
            code,
            tests: ticked(cells[3]),
        });
    }
    out
}

/// Whether `text` defines `name` as an item (fn, type, const, …).
fn defines(text: &str, name: &str) -> bool {
    const KINDS: [&str; 8] = [
        "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ",
    ];
    KINDS.iter().any(|kind| {
        let needle = format!("{kind}{name}");
        text.match_indices(&needle).any(|(at, _)| {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            let before = text[..at].chars().last().unwrap_or(' ');
            let after = text[at + needle.len()..].chars().next().unwrap_or(' ');
            !word(before) && !word(after)
        })
    })
}

/// Whether `text` declares or implements the type `name` (`struct`, `enum`,
/// `trait`, or an `impl` line naming it).
fn has_type(text: &str, name: &str) -> bool {
    defines(text, name)
        || text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("impl")
                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == name)
        })
}

/// What is wrong with `item` in the file `path` (None when it is there).
fn check_item(path: &str, item: &str) -> Option<String> {
    let file = root().join(path);
    let Ok(text) = fs::read_to_string(&file) else {
        return Some(format!("{path}: no such file"));
    };
    let mut parts: Vec<&str> = item.split("::").collect();
    let name = parts.pop().expect("item name");
    if !defines(&text, name) {
        return Some(format!("{path}: no item `{name}`"));
    }
    for owner in parts {
        if !has_type(&text, owner) {
            return Some(format!("{path}: no type `{owner}` for `{item}`"));
        }
    }
    None
}

/// The file holding module path `mods` under `base`, and the inline modules
/// left inside that file (`domain::watermark::tests` → `src/domain/watermark.rs`,
/// `[tests]`).
fn module_file(base: &Path, mods: &[&str]) -> Option<(PathBuf, Vec<String>)> {
    for k in (1..=mods.len()).rev() {
        let joined: PathBuf = mods[..k].iter().collect();
        for candidate in [
            base.join(&joined).with_extension("rs"),
            base.join(&joined).join("mod.rs"),
        ] {
            if candidate.is_file() {
                let inline = mods[k..].iter().map(|m| m.to_string()).collect();
                return Some((candidate, inline));
            }
        }
    }
    None
}

/// Whether `text` has a test function `name`: `fn name` whose attributes
/// (above it, past doc comments and other attributes) include a `…test…`.
fn has_test_fn(text: &str, name: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let l = line.trim_start();
        let l = l.strip_prefix("async ").unwrap_or(l);
        let Some(rest) = l.strip_prefix("fn ").and_then(|r| r.strip_prefix(name)) else {
            return false;
        };
        if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            return false;
        }
        lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("#[") || l.starts_with("///") || l.ends_with(")]"))
            .any(|l| l.starts_with("#[") && l.contains("test"))
    })
}

/// What is wrong with the test `name` (None when it is there).
fn check_test(name: &str) -> Option<String> {
    let (base, path) = match name.strip_prefix("msgx ") {
        Some(unit) => (root().join("src"), unit),
        None => (root().join("tests/it"), name),
    };
    let mut mods: Vec<&str> = path.split("::").collect();
    let func = mods.pop().expect("test name");
    if mods.is_empty() {
        return Some(format!("`{name}`: no module"));
    }
    let Some((file, inline)) = module_file(&base, &mods) else {
        return Some(format!("`{name}`: no file for module {}", mods.join("::")));
    };
    let text = fs::read_to_string(&file).expect("read test file");
    let shown = file
        .strip_prefix(root())
        .unwrap_or(&file)
        .display()
        .to_string();
    for m in &inline {
        if !defines(&text, m) {
            return Some(format!("`{name}`: {shown} has no `mod {m}`"));
        }
    }
    if !has_test_fn(&text, func) {
        return Some(format!("`{name}`: {shown} has no test fn `{func}`"));
    }
    None
}

#[test]
fn every_code_item_and_test_named_exists() {
    let rows = rows();
    assert!(rows.len() > 30, "docs/traceability.md has its tables");
    let mut missing = Vec::new();
    for row in &rows {
        let code_none = row.code.is_empty();
        for (path, items) in &row.code {
            if items.is_empty() {
                missing.push(format!("line {}: `{path}` names no item", row.line));
            }
            for item in items {
                if let Some(why) = check_item(path, item) {
                    missing.push(format!("line {} ({}): {why}", row.line, row.design));
                }
            }
        }
        for test in &row.tests {
            if let Some(why) = check_test(test) {
                missing.push(format!("line {} ({}): {why}", row.line, row.design));
            }
        }
        if code_none && row.tests.is_empty() && !row.design.starts_with('§') {
            missing.push(format!(
                "line {}: {} names neither code nor tests",
                row.line, row.design
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/traceability.md names what does not exist:\n  {}",
        missing.join("\n  ")
    );
}

/// Design IDs in `text`: `C-7`, `INV-14`, `PRE-5`, `CLM-3`, `US-03` (digits),
/// `G-RESP-GUARD` (upper-case words), `Q13`, `D1`.
fn design_ids(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        let word = word.trim_matches('-');
        let numbered = |prefix: &str| {
            word.strip_prefix(prefix)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        };
        let gap = word.strip_prefix("G-").is_some_and(|n| {
            n.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && n.chars().all(|c| c.is_ascii_uppercase() || c == '-')
        });
        if ["C-", "INV-", "PRE-", "CLM-", "US-", "Q", "D"]
            .iter()
            .any(|p| numbered(p))
            || gap
        {
            out.insert(word.to_string());
        }
    }
    out
}

#[test]
fn every_design_id_cited_in_src_has_a_row() {
    let covered: BTreeSet<String> = rows().iter().flat_map(|r| design_ids(&r.design)).collect();
    let mut files = sources(&root().join("src"));
    files.sort();
    let mut missing = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).expect("read source");
        for id in design_ids(&lex(&text).comments) {
            if !covered.contains(&id) {
                let shown = file
                    .strip_prefix(root())
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                missing.push(format!("{id} (cited in {shown})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "design IDs cited in src/ comments without a row in docs/traceability.md:\n  {}",
        missing.join("\n  ")
    );
}

/// The numbered sections of the design that need a row: every `### x.y`, and
/// every `## N.` with text of its own before its first subsection.
fn design_sections(design: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chapter: Option<(String, bool)> = None;
    let flush = |chapter: &mut Option<(String, bool)>, out: &mut Vec<String>| {
        if let Some((n, true)) = chapter.take() {
            out.push(n);
        }
    };
    for line in design.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            flush(&mut chapter, &mut out);
            if let Some(n) = h.split_whitespace().next() {
                out.push(n.to_string());
            }
        } else if let Some(h) = line.strip_prefix("## ") {
            flush(&mut chapter, &mut out);
            if let Some(n) = h
                .split_whitespace()
                .next()
                .and_then(|n| n.strip_suffix('.'))
                && n.chars().all(|c| c.is_ascii_digit())
            {
                chapter = Some((n.to_string(), false));
            }
        } else if !line.trim().is_empty()
            && let Some((_, body)) = chapter.as_mut()
        {
            *body = true;
        }
    }
    flush(&mut chapter, &mut out);
    out
}

#[test]
fn every_design_section_has_a_row() {
    let path = root().join("../shared/design/implementation.md");
    let Ok(design) = fs::read_to_string(&path) else {
        eprintln!("{} absent: section coverage not checked", path.display());
        return;
    };
    let sections = design_sections(&design);
    assert!(sections.len() > 20, "the design's sections were read");
    let covered: BTreeSet<String> = rows()
        .iter()
        .filter_map(|r| r.design.strip_prefix('§'))
        .filter_map(|d| d.split_whitespace().next())
        .map(str::to_string)
        .collect();
    let missing: Vec<String> = sections
        .into_iter()
        .filter(|s| !covered.contains(s))
        .map(|s| format!("§{s}"))
        .collect();
    assert!(
        missing.is_empty(),
        "design sections without a row in docs/traceability.md: {}",
        missing.join(", ")
    );
}

#[test]
fn the_readers_see_what_they_should() {
    assert_eq!(
        ticked("`a` and `` b `` then `c`"),
        vec!["a".to_string(), "b".into(), "c".into()]
    );
    assert!(defines("pub async fn flight(", "flight"));
    assert!(!defines("pub async fn flights(", "flight"));
    assert!(has_type("impl Processors<'_> {", "Processors"));
    let ids = design_ids("(INV-14; C-23, G-RESP-GUARD, Q13, D1) not ID1, UTF-8, G-, x-INV-2");
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        vec!["C-23", "D1", "G-RESP-GUARD", "INV-14", "Q13"]
    );
    assert_eq!(
        design_sections("## 1. a\n\n### 1.1 b\n## 2. c\ntext\n## 3. d\n\n### 3.1 e\n"),
        vec!["1.1", "2", "3.1"]
    );
}
