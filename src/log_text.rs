//! Nothing a client sends is logged raw. A 2 MB console
//! user name once went into the log whole, 25 times; a newline in it wrote
//! a forged "Console: login user=alice" line, and terminal escape codes
//! reached the operator's terminal. Every client-supplied string a listener
//! logs (console form fields and paths, the compat entry's SNDR and the
//! error texts quoting its body) goes through [`for_log`].

use crate::error_text::cut;
use std::borrow::Cow;
use std::fmt::Write;

/// `text` bounded by [`cut`] (its start, then `… [cut, N chars]`), each
/// character that could break or colour a log line shown escaped: `\n`,
/// `\r`, `\t`, `\\`, and as `\u{…}` every other control character (C0,
/// DEL, C1, so the ANSI ESC too), the Unicode line and paragraph
/// separators and the bidirectional overrides. Other text, multi-byte
/// included, stays as it is. A line then holds at most
/// [`crate::error_text::MAX_CHARS`] characters of the input and cannot be
/// split or recoloured by it.
pub fn for_log(text: &str) -> Cow<'_, str> {
    let text = cut(text);
    if !text.chars().any(needs_escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => {
                // Writing to a String cannot fail.
                let _ = write!(out, "{}", c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is shown escaped: it could end, fake or recolour a line, or
/// (the backslash) be mistaken for an escape.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || c == '\\'
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_text::MAX_CHARS;

    #[test]
    fn newlines_and_returns_are_escaped() {
        assert_eq!(
            for_log("mallory\nConsole: login user=alice\r\n"),
            "mallory\\nConsole: login user=alice\\r\\n"
        );
    }

    #[test]
    fn ansi_and_other_controls_are_escaped() {
        assert_eq!(for_log("\x1b[31mred\x1b[0m"), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(
            for_log("a\u{0}b\u{7f}c\u{85}d\u{9b}e"),
            "a\\u{0}b\\u{7f}c\\u{85}d\\u{9b}e"
        );
        assert_eq!(
            for_log("x\u{2028}y\u{2029}z\u{202e}"),
            "x\\u{2028}y\\u{2029}z\\u{202e}"
        );
        assert_eq!(
            for_log("C:\\n"),
            "C:\\\\n",
            "a literal backslash is not a newline"
        );
    }

    #[test]
    fn clean_text_is_kept_as_it_is_multi_byte_included() {
        let text = "Zürich → 東京 ✈ ok";
        assert!(matches!(for_log(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn a_2_mb_input_is_bounded() {
        let huge = "a".repeat(2 << 20);
        let out = for_log(&huge);
        assert_eq!(out.chars().count(), MAX_CHARS);
        assert!(out.ends_with("… [cut, 2097152 chars]"), "{out}");
        let controls = "\n".repeat(2 << 20);
        let out = for_log(&controls);
        assert!(out.len() < 4 * MAX_CHARS, "{} bytes", out.len());
        assert!(!out.contains('\n'));
    }
}
