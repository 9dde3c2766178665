//! A small element-tree reader on top of quick-xml events, shared by every
//! message family (sis-format §1).
//!
//! Why a tree and not serde: the model is three-valued (absent / empty /
//! value, sis-format §3.2), unknown elements must be kept with their raw XML,
//! and every error must name its element path. A tree
//! built once from borrowed slices of the input gives all three cheaply.
//!
//! The tree is an arena (`Vec<Node>`) linked by indices: one allocation for
//! all elements, names and (most) text borrowed from the input. Nesting is
//! capped at [`MAX_DEPTH`](tree::MAX_DEPTH), so nothing downstream can recurse without bound.
//!
//! Well-formedness checks beyond quick-xml's own: exactly one root element,
//! nothing but whitespace, comments and processing instructions after it,
//! no text outside it, every element closed, only the five predefined
//! entities, and no C0 control characters other than tab, CR and LF.
//!
//! Split by role: [`tree`] holds the element types,
//! [`parser`] builds them; the paths below are the ones the decoders use.

mod parser;
mod tree;

pub(crate) use parser::{check_chars, parse, parse_fragment, parse_two_level, trim_xml};
pub(crate) use tree::{El, tag_key};

/// Declares `u32` key constants named like the SIS elements they match.
macro_rules! tag_keys {
    ($($tag:ident),* $(,)?) => {
        $( const $tag: u32 = $crate::codec::xml::tag_key(stringify!($tag).as_bytes()); )*
    };
}
pub(crate) use tag_keys;

#[cfg(test)]
mod tests;
