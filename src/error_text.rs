//! Error texts stay short. A decode error quotes the value
//! it refuses, so a 1 MiB input once gave a 209,771-character `LAST_ERROR`.
//! Every error msgx records or answers goes through [`cut`]: PROC_STATE
//! `LAST_ERROR` and `OUTCOME_REASON`, MSG_EVENT `LAST_ERROR`, JOB_RUN
//! `ERROR`, the log fields of failed messages and the compat entry's error
//! bodies. A row, a log line or a response then stays small whatever the
//! input was. A log line quoting what a client sent also needs escaping:
//! [`crate::log_text::for_log`] cuts and escapes.

use std::borrow::Cow;

/// The longest error text kept, in characters, the marker included.
pub const MAX_CHARS: usize = 512;

/// `text` as it is when it has at most [`MAX_CHARS`] characters. Longer text
/// keeps its start, followed by the marker `… [cut, N chars]`, where N is the
/// original length. The result is then exactly [`MAX_CHARS`] characters.
pub fn cut(text: &str) -> Cow<'_, str> {
    // At most MAX_CHARS bytes means at most MAX_CHARS characters: no count.
    if text.len() <= MAX_CHARS {
        return Cow::Borrowed(text);
    }
    let total = text.chars().count();
    if total <= MAX_CHARS {
        return Cow::Borrowed(text);
    }
    let marker = format!("… [cut, {total} chars]");
    let keep = MAX_CHARS - marker.chars().count();
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!("{}{marker}", &text[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_text_is_kept_as_it_is() {
        assert_eq!(cut("raw-missing"), "raw-missing");
        let exactly = "é".repeat(MAX_CHARS);
        assert!(
            matches!(cut(&exactly), Cow::Borrowed(_)),
            "512 chars, 1024 bytes"
        );
    }

    #[test]
    fn long_text_keeps_its_start_and_says_how_long_it_was() {
        let long = format!("MALFORMED at MSG/FLOP/FLID: {}", "9".repeat(1 << 20));
        let out = cut(&long);
        assert_eq!(out.chars().count(), MAX_CHARS);
        assert!(out.starts_with("MALFORMED at MSG/FLOP/FLID: 999"), "{out}");
        assert!(out.ends_with("… [cut, 1048604 chars]"), "{out}");
    }

    proptest! {
        /// Never longer than MAX_CHARS characters; a prefix of the input
        /// (on a character boundary) when cut; the input itself otherwise.
        #[test]
        fn bounded_and_a_prefix(text in "\\PC{0,700}") {
            let out = cut(&text);
            prop_assert!(out.chars().count() <= MAX_CHARS);
            if text.chars().count() <= MAX_CHARS {
                prop_assert_eq!(out.as_ref(), text.as_str());
            } else {
                let (head, marker) = out.rsplit_once("… [cut, ").expect("marker");
                prop_assert!(text.starts_with(head));
                prop_assert_eq!(marker, format!("{} chars]", text.chars().count()));
            }
        }
    }
}
