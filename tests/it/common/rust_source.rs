//! Reading the project's Rust sources as text, for the tests that check the
//! code's shape (architecture, traceability): the files under a folder, and
//! one pass over a file that tells code, comments and string literals apart.

use std::fs;
use std::path::{Path, PathBuf};

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, in no particular order.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// A source split once: its code with every comment removed and every
/// string literal emptied (`""`), its comments' text, and its string
/// literals with their line. Char literals of a quote are no strings.
#[derive(Debug, Default)]
pub struct Lexed {
    pub code: String,
    pub comments: String,
    pub literals: Vec<(usize, String)>,
}

/// Splits `text` (see [`Lexed`]).
pub fn lex(text: &str) -> Lexed {
    let mut out = Lexed::default();
    let mut rest = text;
    let line_of = |rest: &str| text[..text.len() - rest.len()].matches('\n').count() + 1;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find('\n').unwrap_or(after.len());
            out.comments.push_str(&after[..end]);
            out.comments.push('\n');
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").unwrap_or(after.len());
            out.comments.push_str(&after[..end]);
            out.comments.push('\n');
            rest = after.get(end + 2..).unwrap_or("");
        } else if let Some(after) = rest
            .strip_prefix("'\"'")
            .or_else(|| rest.strip_prefix("'\\\"'"))
        {
            out.code.push_str("' '");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("r#\"") {
            let end = after.find("\"#").unwrap_or(after.len());
            out.literals.push((line_of(rest), after[..end].to_string()));
            out.code.push_str("\"\"");
            rest = after.get(end + 2..).unwrap_or("");
        } else if rest.starts_with('"') {
            let bytes = rest.as_bytes();
            let mut i = 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            let end = i.min(rest.len());
            out.literals
                .push((line_of(rest), rest.get(1..end).unwrap_or("").to_string()));
            out.code.push_str("\"\"");
            rest = rest.get(i + 1..).unwrap_or("");
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.code.push(c);
            }
            rest = chars.as_str();
        }
    }
    out
}

#[test]
fn the_lexer_tells_code_comments_and_strings_apart() {
    let l = lex("let a = \"x // y\"; // c1\n/* c2 */ let q = '\"'; let r = r#\"raw\"#;");
    assert_eq!(l.code, "let a = \"\"; \n let q = ' '; let r = \"\";");
    assert_eq!(l.comments, " c1\n c2 \n");
    assert_eq!(
        l.literals,
        [(1, "x // y".to_string()), (2, "raw".to_string())]
    );
}
