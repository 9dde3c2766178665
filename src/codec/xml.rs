//! A small element-tree reader on top of quick-xml events, shared by every
//! message family (sis-format §1).
//!
//! Why a tree and not serde: the model is three-valued (absent / empty /
//! value, sis-format §3.2), unknown elements must be kept with their raw XML
//! (issue 3, item 2), and every error must name its element path. A tree
//! built once from borrowed slices of the input gives all three cheaply.
//!
//! The tree is an arena (`Vec<Node>`) linked by indices: one allocation for
//! all elements, names and (most) text borrowed from the input. Nesting is
//! capped at [`MAX_DEPTH`], so nothing downstream can recurse without bound.
//!
//! Well-formedness checks beyond quick-xml's own: exactly one root element,
//! nothing but whitespace, comments and processing instructions after it,
//! no text outside it, every element closed, only the five predefined
//! entities, and no C0 control characters other than tab, CR and LF.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;

use quick_xml::events::{BytesDecl, BytesEnd, BytesRef, BytesStart, BytesText, Event};
use quick_xml::reader::Reader;

use super::error::DecodeError;

/// Deepest element nesting accepted. SIS nests at most 5 levels
/// (`MSG/SCHD/FLTR/VIPF/VIPT`); anything far deeper is not a SIS message.
pub(crate) const MAX_DEPTH: usize = 32;

/// Most attributes accepted on one element. SIS elements carry at most 3
/// (DELY); the cap also bounds quick-xml's duplicate-attribute check, which
/// is quadratic in the attribute count.
pub(crate) const MAX_ATTRS: usize = 64;

const NONE: u32 = u32::MAX;

/// Children up to which path ordinals are counted without a hash map.
const SMALL_PARENT: usize = 64;

/// The dispatch key of an element name: its four bytes as one `u32` when
/// the name has four bytes (every SIS element name does), else 0. Walkers
/// `match` on keys (constants made with this function) instead of comparing
/// strings, so dispatching a child costs one integer compare chain.
pub(crate) const fn tag_key(name: &[u8]) -> u32 {
    if name.len() == 4 {
        u32::from_le_bytes([name[0], name[1], name[2], name[3]])
    } else {
        0
    }
}

/// True when a name with key `key` (its [`tag_key`]) and text `actual` is
/// `name`: one integer compare for four-byte names. `name` is usually a
/// literal, so its key folds to a constant.
#[inline]
fn is_named(key: u32, actual: &str, name: &str) -> bool {
    match tag_key(name.as_bytes()) {
        0 => actual == name,
        wanted => key == wanted,
    }
}

/// Declares `u32` key constants named like the SIS elements they match.
macro_rules! tag_keys {
    ($($tag:ident),* $(,)?) => {
        $( const $tag: u32 = $crate::codec::xml::tag_key(stringify!($tag).as_bytes()); )*
    };
}
pub(crate) use tag_keys;

/// One attribute, as written (value unescaped).
#[derive(Debug)]
pub(crate) struct Attr<'a> {
    pub name: &'a str,
    /// [`tag_key`] of the name (SIS attribute names have four bytes too),
    /// so lookups compare integers.
    pub key: u32,
    pub value: Cow<'a, str>,
}

impl Attr<'_> {
    /// True when the attribute is called `name` (see [`is_named`]).
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        is_named(self.key, self.name, name)
    }
}

/// Character data directly inside an element: a span of the source (the
/// common case: one segment, no entity, no CR) or, when segments had to be
/// joined or rewritten, an index into [`Document::owned`].
#[derive(Debug, Clone, Copy)]
enum Text {
    Span(u32, u32),
    Owned(u32),
}

/// One element. Offsets are `u32`: [`parse`] refuses inputs of 4 GiB or more
/// (the decoder caps messages at 64 MiB), so every offset and index fits.
/// Kept small (56 bytes) because a 1,000-flight SCHD has ~48,000 of them.
#[derive(Debug)]
struct Node {
    /// [`tag_key`] of the name.
    key: u32,
    /// The name is `src[start + 1 .. start + 1 + name_len]`.
    name_len: u32,
    /// Character data directly inside the element (all segments joined,
    /// leading whitespace-only segments dropped: values are trimmed anyway).
    text: Text,
    attrs: (u32, u32),
    parent: u32,
    first_child: u32,
    next_sibling: u32,
    /// Byte span of the whole element in the source, `<` to `>`.
    start: u32,
    end: u32,
    /// 1-based index among same-named siblings and their count (0: not yet
    /// computed), filled lazily for all children of a parent on the first
    /// path request, so rendering many paths stays linear (see [`El::path`]).
    ordinal: Cell<u32>,
    same_named: Cell<u32>,
}

/// Node arenas are reused between documents on one thread (a worker
/// decodes message after message): no multi-megabyte allocation, page
/// faults and heap consolidation per large message, and the memory is
/// warm in cache. Arenas above this many nodes (3.5 MiB) are not kept.
const KEEP_NODES: usize = 1 << 16;

thread_local! {
    static SPARE_NODES: Cell<Option<Vec<Node>>> = const { Cell::new(None) };
}

/// An empty node arena with room for `want` nodes, reusing this thread's
/// spare arena when there is one.
fn node_arena(want: usize) -> Vec<Node> {
    let mut nodes = SPARE_NODES
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default();
    nodes.clear();
    nodes.reserve(want);
    nodes
}

/// A parsed document: the source and its element arena (root = node 0).
#[derive(Debug)]
pub(crate) struct Document<'a> {
    src: &'a str,
    nodes: Vec<Node>,
    attrs: Vec<Attr<'a>>,
    /// Texts that are not a single source span (entities, CDATA, CR, joined
    /// segments).
    owned: Vec<String>,
    /// Two-level parse ([`parse_two_level`]): every `MSG/SCHD/FLTR` is a
    /// leaf here, its subtree checked and dropped when it closed.
    pruned: bool,
    /// For a fragment ([`parse_fragment`]): the path of its root element in
    /// the whole message, so every path names the element as a whole-message
    /// parse would.
    root_path: Option<String>,
}

impl Drop for Document<'_> {
    fn drop(&mut self) {
        let mut nodes = std::mem::take(&mut self.nodes);
        if nodes.capacity() <= KEEP_NODES {
            nodes.clear();
            // During thread teardown the slot may be gone: then just free.
            let _ = SPARE_NODES.try_with(|spare| spare.set(Some(nodes)));
        }
    }
}

impl<'a> Document<'a> {
    fn name_of(&self, n: &Node) -> &'a str {
        let s = n.start as usize + 1;
        self.src.get(s..s + n.name_len as usize).unwrap_or("")
    }

    fn text_of(&self, n: &Node) -> &str {
        match n.text {
            Text::Span(s, l) => self
                .src
                .get(s as usize..s as usize + l as usize)
                .unwrap_or(""),
            Text::Owned(i) => self.owned.get(i as usize).map_or("", String::as_str),
        }
    }

    /// Fills `ordinal` / `same_named` for every child of `parent`, once.
    fn index_children(&self, parent: u32) {
        let Some(p) = self.nodes.get(parent as usize) else {
            return;
        };
        let first = p.first_child;
        if self
            .nodes
            .get(first as usize)
            .is_none_or(|c| c.ordinal.get() != 0)
        {
            return;
        }
        let kids = || {
            El {
                doc: self,
                id: parent,
            }
            .children()
        };
        // Each distinct name gets a slot with its running count. Most parents
        // have a few dozen children: finding the slot by a linear search
        // beats hashing every name; a hash map keeps huge parents linear.
        let large = kids().nth(SMALL_PARENT).is_some();
        let mut counts: Vec<(&str, u32)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut slots = Vec::new();
        for c in kids() {
            let name = c.name();
            let slot = if large {
                *index.entry(name).or_insert(counts.len())
            } else {
                counts
                    .iter()
                    .position(|(k, _)| *k == name)
                    .unwrap_or(counts.len())
            };
            if slot == counts.len() {
                counts.push((name, 0));
            }
            counts[slot].1 += 1;
            c.node().ordinal.set(counts[slot].1);
            slots.push(slot);
        }
        for (c, slot) in kids().zip(slots) {
            c.node().same_named.set(counts[slot].1);
        }
    }

    /// The root element.
    pub fn root(&self) -> El<'_, 'a> {
        El { doc: self, id: 0 }
    }
}

/// A cheap handle on one element of a [`Document`].
#[derive(Clone, Copy)]
pub(crate) struct El<'d, 'a> {
    doc: &'d Document<'a>,
    id: u32,
}

impl std::fmt::Debug for El<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "El({})", self.path())
    }
}

impl<'d, 'a> El<'d, 'a> {
    fn node(&self) -> &'d Node {
        &self.doc.nodes[self.id as usize]
    }

    /// The element name.
    pub fn name(&self) -> &'a str {
        self.doc.name_of(self.node())
    }

    /// The [`tag_key`] of the name, for dispatch.
    pub fn key(&self) -> u32 {
        self.node().key
    }

    /// True when the element is called `name` (see [`is_named`]).
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        is_named(self.key(), self.name(), name)
    }

    /// The text directly inside the element, trimmed of XML whitespace
    /// (trimmed once, when the element closed).
    pub fn text(&self) -> &'d str {
        self.doc.text_of(self.node())
    }

    /// The attributes, in document order.
    pub fn attrs(&self) -> &'d [Attr<'a>] {
        let (a, b) = self.node().attrs;
        self.doc.attrs.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// The value of attribute `name`, if present.
    #[inline]
    pub fn attr(&self, name: &str) -> Option<&'d str> {
        self.attrs()
            .iter()
            .find(|a| a.is(name))
            .map(|a| a.value.as_ref())
    }

    /// The child elements, in document order.
    pub fn children(&self) -> Children<'d, 'a> {
        Children {
            doc: self.doc,
            next: self.node().first_child,
        }
    }

    /// How many siblings, this element included, follow in a row with its
    /// name: the usual size of a repeating group, so its list is allocated
    /// once (items are ~200 bytes; growing copies them). A sizing hint only.
    pub fn same_name_run(&self) -> usize {
        let key = self.key();
        let mut n = 1;
        let mut next = self.node().next_sibling;
        while key != 0
            && let Some(node) = self.doc.nodes.get(next as usize)
            && node.key == key
        {
            n += 1;
            next = node.next_sibling;
        }
        n
    }

    /// True when the element has child elements.
    pub fn has_children(&self) -> bool {
        self.node().first_child != NONE
    }

    /// A bare element: no attributes, no children, no (non-whitespace) text.
    /// This is the "delete all" form of sis-format §3.2.
    pub fn is_bare(&self) -> bool {
        self.attrs().is_empty() && !self.has_children() && self.text().is_empty()
    }

    /// The element's XML exactly as it appeared in the message.
    pub fn raw(&self) -> &'a str {
        let n = self.node();
        self.doc
            .src
            .get(n.start as usize..n.end as usize)
            .unwrap_or("")
    }

    /// The element path from the root, e.g. `MSG/SCHD/FLTR[2]/SODT`. An index
    /// (1-based) is added where the parent has several children of that name.
    pub fn path(&self) -> String {
        let mut segs: Vec<(&str, u32, u32)> = Vec::new();
        let mut id = self.id;
        while let Some(node) = self.doc.nodes.get(id as usize) {
            if node.parent != NONE {
                self.doc.index_children(node.parent);
            }
            segs.push((
                self.doc.name_of(node),
                node.ordinal.get(),
                node.same_named.get(),
            ));
            id = node.parent;
        }
        let mut out = String::new();
        for (i, (name, ordinal, same_named)) in segs.iter().rev().enumerate() {
            if i > 0 {
                out.push('/');
            }
            match (&self.doc.root_path, i) {
                (Some(root), 0) => out.push_str(root),
                _ => {
                    out.push_str(name);
                    if *same_named > 1 {
                        out.push_str(&format!("[{ordinal}]"));
                    }
                }
            }
        }
        out
    }

    /// True when this element's children were dropped by a two-level parse
    /// ([`parse_two_level`]): its subtree is parsed again, alone, from
    /// [`El::raw`] with [`parse_fragment`].
    pub fn pruned(&self) -> bool {
        self.doc.pruned && self.node().parent != NONE && self.is_pruned_fltr()
    }

    fn is_pruned_fltr(&self) -> bool {
        let n = self.node();
        let Some(schd) = self.doc.nodes.get(n.parent as usize) else {
            return false;
        };
        // The root is node 0; the decoder refuses a root other than MSG.
        n.key == KEY_FLTR && schd.key == KEY_SCHD && schd.parent == 0
    }

    /// The path of attribute `name` of this element, e.g. `…/DELY[2]/@DURA`.
    pub fn attr_path(&self, name: &str) -> String {
        format!("{}/@{}", self.path(), name)
    }
}

/// Iterator over an element's children.
pub(crate) struct Children<'d, 'a> {
    doc: &'d Document<'a>,
    next: u32,
}

impl<'d, 'a> Iterator for Children<'d, 'a> {
    type Item = El<'d, 'a>;
    fn next(&mut self) -> Option<Self::Item> {
        let node = self.doc.nodes.get(self.next as usize)?;
        let el = El {
            doc: self.doc,
            id: self.next,
        };
        self.next = node.next_sibling;
        Some(el)
    }
}

/// Trims XML whitespace (space, tab, CR, LF) from both ends.
pub(crate) fn trim_xml(s: &str) -> &str {
    // Byte-wise: the four whitespace bytes are ASCII, so any cut is on a
    // char boundary.
    let b = s.as_bytes();
    let start = b.iter().position(|&c| !is_ws_byte(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| !is_ws_byte(c))
        .map_or(start, |i| i + 1);
    s.get(start..end).unwrap_or("")
}

fn trim_xml_start(s: &str) -> &str {
    let b = s.as_bytes();
    let start = b.iter().position(|&c| !is_ws_byte(c)).unwrap_or(b.len());
    s.get(start..).unwrap_or("")
}

fn is_ws_byte(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_xml_ws(s: &str) -> bool {
    is_xml_ws_bytes(s.as_bytes())
}

fn is_xml_ws_bytes(b: &[u8]) -> bool {
    b.iter().all(|&c| is_ws_byte(c))
}

/// Re-borrows `part` (a slice handed out by quick-xml) from `src`, so it gets
/// the source lifetime. The slice reader never copies, so this only fails on
/// a quick-xml behaviour change; callers turn that into a codec error.
fn rebase<'a>(src: &'a str, part: &[u8]) -> Option<(usize, &'a str)> {
    let base = src.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    let off = p.checked_sub(base)?;
    // In range means `part` is this very slice of `src` (same address).
    let s = src.get(off..off.checked_add(part.len())?)?;
    Some((off, s))
}

fn internal(path: String) -> DecodeError {
    DecodeError::codec(
        path,
        "internal: quick-xml returned a slice outside the input",
    )
}

/// Parses `src` into a [`Document`], checking well-formedness.
pub(crate) fn parse(src: &str) -> Result<Document<'_>, DecodeError> {
    checked_len(src)?;
    Parser::new(src, false, None).run()
}

/// Parses `src` like [`parse`] (every well-formedness check over the whole
/// text), but keeps every `MSG/SCHD/FLTR` as a leaf: its subtree is dropped
/// from the arena when it closes. A 20,000-flight SCHD (16.5 MB) otherwise
/// holds an arena of ~840,000 elements (~70 MB with its growth) next to the
/// decoded model (issue 17 item 5); the decoder parses each FLTR again, alone,
/// with [`parse_fragment`], so one FLTR's elements are in memory at a time.
pub(crate) fn parse_two_level(src: &str) -> Result<Document<'_>, DecodeError> {
    checked_len(src)?;
    Parser::new(src, true, None).run()
}

/// Parses one element's text (`raw`, from [`El::raw`] of a pruned element)
/// as a document of its own whose paths start at `root_path`, the element's
/// path in the whole message. The whole text passed every check already.
pub(crate) fn parse_fragment(raw: &str, root_path: String) -> Result<Document<'_>, DecodeError> {
    checked_len(raw)?;
    Parser::new(raw, false, Some(root_path)).run()
}

fn checked_len(src: &str) -> Result<(), DecodeError> {
    if u32::try_from(src.len()).is_err() {
        return Err(DecodeError::codec(
            "(document)",
            format!("document of {} bytes is too large", src.len()),
        ));
    }
    Ok(())
}

const KEY_SCHD: u32 = tag_key(b"SCHD");
const KEY_FLTR: u32 = tag_key(b"FLTR");

/// One open element: its node and its last child so far (appending a child
/// needs it; closed elements never do, so it lives here, not in the node).
#[derive(Clone, Copy)]
struct Open {
    id: u32,
    last_child: u32,
}

struct Parser<'a> {
    src: &'a str,
    doc: Document<'a>,
    /// Open elements, root first.
    stack: Vec<Open>,
    root_closed_at: Option<usize>,
    seen_markup: bool,
    decoder: quick_xml::encoding::Decoder,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, pruned: bool, root_path: Option<String>) -> Self {
        Parser {
            src,
            doc: Document {
                pruned,
                root_path,
                src,
                // An element takes at least ~8 bytes of markup (`<X></X>` or
                // `<X/>` plus indentation; SIS averages ~24); reserving by
                // length avoids both a counting pass and most regrowth
                // copies. Capped so a huge input grows the arena instead of
                // reserving it upfront.
                nodes: node_arena((src.len() / 20 + 4).min(KEEP_NODES)),
                // SIS averages one attribute per ~130 bytes.
                // (a 1,000-flight SCHD has 9,000: regrowing copies them).
                attrs: Vec::with_capacity((src.len() / 120).min(1 << 15)),
                owned: Vec::new(),
            },
            stack: Vec::with_capacity(MAX_DEPTH),
            root_closed_at: None,
            seen_markup: false,
            decoder: Reader::from_str("").decoder(),
        }
    }

    /// Path of the innermost open element; the root once it is closed;
    /// `(document)` before it.
    fn here(&self) -> String {
        match self.stack.last() {
            Some(open) => El {
                doc: &self.doc,
                id: open.id,
            }
            .path(),
            None => self.doc.nodes.first().map_or_else(
                || "(document)".into(),
                |root| self.doc.name_of(root).to_owned(),
            ),
        }
    }

    fn malformed(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError::malformed(self.here(), reason)
    }

    /// Content after the root element: names where the root closed and
    /// quotes what follows (the ABNR-03 sample's second `</MSG>`).
    fn trailing(&self, at: usize) -> DecodeError {
        let closed = self.root_closed_at.unwrap_or(0);
        let root = self
            .doc
            .nodes
            .first()
            .map_or("MSG", |n| self.doc.name_of(n));
        let rest = self.src.get(at..).unwrap_or("");
        let skipped = rest.len() - trim_xml_start(rest).len();
        let snippet: String = trim_xml_start(rest).chars().take(24).collect();
        let snippet = snippet.lines().next().unwrap_or("");
        DecodeError::malformed(
            root,
            format!(
                "trailing content after the root element: </{root}> closed it at byte {closed}, \
                 then `{snippet}` at byte {}",
                at + skipped
            ),
        )
    }

    /// `at` moved past the XML whitespace that starts there: where the
    /// markup of an event begins when `at` is the position before it (the
    /// reader skips whitespace before text, see [`Parser::run`]).
    fn skip_ws(&self, at: usize) -> usize {
        let rest = self.src.as_bytes().get(at..).unwrap_or(&[]);
        at + rest.iter().take_while(|&&c| is_ws_byte(c)).count()
    }

    /// The reader skips whitespace before text (`trim_text_start`), so
    /// whitespace-only text between elements produces no event at all. Inside
    /// mixed content (text already started) the skipped whitespace still
    /// belongs to the text: this puts it back, from the source.
    fn restore_gap(&mut self, before: usize) {
        if self.text_is_empty() {
            return;
        }
        let end = self.skip_ws(before);
        if end > before
            && let Some(gap) = self.src.get(before..end)
        {
            self.append(&normalize_eols(gap));
        }
    }

    fn run(mut self) -> Result<Document<'a>, DecodeError> {
        let mut reader = Reader::from_str(self.src);
        {
            let cfg = reader.config_mut();
            cfg.check_end_names = false;
            cfg.check_comments = true;
            cfg.expand_empty_elements = false;
            // Whitespace before text is skipped by the reader: no event for
            // the indentation between elements (about half of all events in
            // a SIS message). Values are trimmed anyway; whitespace inside
            // mixed content is restored from the source (`restore_gap`).
            cfg.trim_text_start = true;
            cfg.trim_text_end = false;
        }
        loop {
            let before = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
            let ev = match reader.read_event() {
                Ok(ev) => ev,
                Err(e) => return Err(self.read_error(before, &e)),
            };
            let after = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
            // The common events are handled inline; the rare ones and every
            // error live in their own functions, out of the hot loop.
            match ev {
                Event::Start(e) => self.open(&e, before)?,
                Event::End(e) => self.end(&e, before, after)?,
                Event::Text(t) => self.text(&t, before)?,
                Event::Empty(e) => {
                    self.open(&e, before)?;
                    self.close(after);
                }
                Event::Eof => break,
                other => self.rare(other, before)?,
            }
            self.seen_markup = true;
        }
        if !self.stack.is_empty() {
            let open = self.here();
            return Err(DecodeError::malformed(
                open,
                "unexpected end of document: element not closed",
            ));
        }
        if self.doc.nodes.is_empty() {
            return Err(DecodeError::malformed("(document)", "no root element"));
        }
        Ok(self.doc)
    }

    /// The error for an event quick-xml could not read.
    #[cold]
    fn read_error(&self, before: usize, e: &quick_xml::Error) -> DecodeError {
        if self.root_closed_at.is_some() {
            return self.trailing(before);
        }
        let at = self.skip_ws(before);
        self.malformed(format!("not well-formed XML at byte {at}: {e}"))
    }

    /// An end tag: it must close the innermost open element.
    #[inline]
    fn end(&mut self, e: &BytesEnd<'_>, before: usize, after: usize) -> Result<(), DecodeError> {
        // quick-xml's own end-name check is off (it copies every start
        // name); the open-element stack already knows it.
        let Some(open) = self.stack.last().copied() else {
            return Err(self.trailing(before));
        };
        let node = &self.doc.nodes[open.id as usize];
        let end_name = e.name();
        let end_name = end_name.as_ref();
        let same = if node.key != 0 {
            // Four-byte names (all of SIS): one integer compare.
            tag_key(end_name) == node.key
        } else {
            self.doc.name_of(node).as_bytes() == end_name
        };
        if !same {
            return Err(self.mismatched_end(end_name, before));
        }
        self.close(after);
        Ok(())
    }

    #[cold]
    fn mismatched_end(&self, end_name: &[u8], before: usize) -> DecodeError {
        let name = self
            .stack
            .last()
            .and_then(|open| self.doc.nodes.get(open.id as usize))
            .map_or("", |n| self.doc.name_of(n));
        self.malformed(format!(
            "end tag </{}> at byte {} does not match the open <{name}>",
            String::from_utf8_lossy(end_name),
            self.skip_ws(before)
        ))
    }

    /// Character data (the reader already skipped leading whitespace).
    #[inline]
    fn text(&mut self, t: &BytesText<'_>, before: usize) -> Result<(), DecodeError> {
        if self.stack.is_empty() {
            return Err(self.outside("text", before));
        }
        let Some((off, s)) = rebase(self.src, t) else {
            return Err(internal(self.here()));
        };
        // Text that continues mixed content keeps the whitespace
        // the reader skipped: the span then starts at `before`.
        let (off, s) = if self.text_is_empty() {
            (off, s)
        } else {
            match self.src.get(before..off + s.len()) {
                Some(whole) => (before, whole),
                None => return Err(internal(self.here())),
            }
        };
        // Without a CR there is nothing to normalise (entities
        // are separate events), and the source is valid UTF-8
        // already: the text is its own span of the source.
        if !s.as_bytes().contains(&b'\r') {
            self.append_span(off, s);
        } else {
            self.append(&normalize_eols(s));
        }
        Ok(())
    }

    /// Declarations, DOCTYPE, comments, processing instructions, CDATA and
    /// entity references: rare in SIS, kept out of the event loop.
    #[inline(never)]
    fn rare(&mut self, ev: Event<'_>, before: usize) -> Result<(), DecodeError> {
        match ev {
            Event::Decl(d) => {
                if self.seen_markup || self.src.as_bytes().get(before) != Some(&b'<') {
                    return Err(self.malformed("XML declaration is not at the start"));
                }
                if let Some(enc) = self.declared_encoding(&d)
                    && !enc.eq_ignore_ascii_case("UTF-8")
                    && !enc.eq_ignore_ascii_case("UTF8")
                {
                    return Err(DecodeError::codec(
                        "(document)",
                        format!(
                            "declared encoding {} is not supported; \
                             SIS messages are UTF-8 (sis-format §1.5)",
                            enc.to_ascii_uppercase()
                        ),
                    ));
                }
            }
            Event::DocType(_) => {
                return Err(DecodeError::codec(
                    "(document)",
                    "a DOCTYPE declaration is not supported (SIS messages have none)",
                ));
            }
            Event::PI(_) | Event::Comment(_) => self.restore_gap(before),
            Event::CData(c) => {
                let at = self.skip_ws(before);
                let text = c
                    .xml10_content()
                    .map_err(|e| self.malformed(format!("bad CDATA at byte {at}: {e}")))?;
                if self.stack.is_empty() {
                    return Err(self.outside("CDATA", at));
                }
                self.restore_gap(before);
                self.append(&text);
            }
            Event::GeneralRef(r) => {
                let at = self.skip_ws(before);
                let ch = self.entity(&r, at)?;
                if self.stack.is_empty() {
                    return Err(self.outside("an entity reference", at));
                }
                self.restore_gap(before);
                let mut buf = [0u8; 4];
                self.append(ch.encode_utf8(&mut buf));
            }
            Event::Start(_) | Event::End(_) | Event::Empty(_) | Event::Text(_) | Event::Eof => {}
        }
        Ok(())
    }

    /// The `encoding` of an XML declaration, if it names one: split by
    /// [`plain_attrs`] when it can, else by quick-xml (whose attribute
    /// iterator costs more than the rest of a small FLOP's declaration).
    fn declared_encoding(&self, d: &BytesDecl<'_>) -> Option<Cow<'a, str>> {
        let plain = rebase(self.src, d).and_then(|(_, raw)| {
            let mut enc = None;
            plain_attrs(raw.strip_prefix("xml")?, |name, value| {
                if name == "encoding" {
                    enc = Some(value);
                }
                Some(())
            })?;
            Some(enc)
        });
        match plain {
            Some(enc) => enc.map(Cow::Borrowed),
            None => match d.encoding() {
                Some(Ok(enc)) => Some(Cow::Owned(String::from_utf8_lossy(&enc).into_owned())),
                _ => None,
            },
        }
    }

    fn outside(&self, what: &str, at: usize) -> DecodeError {
        if self.root_closed_at.is_some() {
            self.trailing(at)
        } else {
            DecodeError::malformed(
                "(document)",
                format!("{what} before the root element at byte {at}"),
            )
        }
    }

    /// Opens an element; `from` is the reader position before its event
    /// (whitespace may precede the `<`).
    fn open(&mut self, e: &BytesStart<'_>, from: usize) -> Result<(), DecodeError> {
        if self.root_closed_at.is_some() {
            return Err(self.trailing(from));
        }
        if !self.text_is_empty() {
            self.restore_gap(from);
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.malformed(format!(
                "elements nested deeper than {MAX_DEPTH} levels (SIS nests at most 5)"
            )));
        }
        let name_bytes = e.name();
        let name_bytes = name_bytes.as_ref();
        // The name follows the `<` (after any whitespace the reader skipped
        // from `before`); anything else would be a quick-xml behaviour change.
        let Some(name_at) = (name_bytes.as_ptr() as usize).checked_sub(self.src.as_ptr() as usize)
        else {
            return Err(internal(self.here()));
        };
        let before = name_at.wrapping_sub(1);
        if name_at == 0
            || self.src.as_bytes().get(before) != Some(&b'<')
            || !self.src.is_char_boundary(name_at + name_bytes.len())
        {
            return Err(internal(self.here()));
        }
        if name_bytes.is_empty() {
            return Err(self.malformed(format!("element without a name at byte {before}")));
        }
        let a0 = self.doc.attrs.len();
        if !is_xml_ws_bytes(e.attributes_raw()) {
            self.attributes(e, before)?;
        }
        let id = self.doc.nodes.len() as u32;
        let parent = match self.stack.last_mut() {
            Some(open) => {
                let prev = std::mem::replace(&mut open.last_child, id);
                if prev == NONE {
                    self.doc.nodes[open.id as usize].first_child = id;
                } else {
                    self.doc.nodes[prev as usize].next_sibling = id;
                }
                open.id
            }
            None => NONE,
        };
        self.doc.nodes.push(Node {
            key: tag_key(name_bytes),
            name_len: name_bytes.len() as u32,
            text: Text::Span(0, 0),
            attrs: (a0 as u32, self.doc.attrs.len() as u32),
            parent,
            first_child: NONE,
            next_sibling: NONE,
            start: before as u32,
            end: before as u32,
            ordinal: Cell::new(0),
            same_named: Cell::new(0),
        });
        self.stack.push(Open {
            id,
            last_child: NONE,
        });
        Ok(())
    }

    /// Reads the attributes of `e` into the attribute arena: the plain
    /// case by [`Parser::plain_attributes`], anything else (entities,
    /// errors, many attributes) by quick-xml's attribute iterator.
    fn attributes(&mut self, e: &BytesStart<'_>, before: usize) -> Result<(), DecodeError> {
        let a0 = self.doc.attrs.len();
        if self.plain_attributes(e.attributes_raw()).is_some() {
            return Ok(());
        }
        self.doc.attrs.truncate(a0);
        self.iterated_attributes(e, before)
    }

    /// Reads the attributes of an element when [`plain_attrs`] can split
    /// them and none repeats (at most [`MAX_ATTRS`]); `None` leaves them to
    /// quick-xml's iterator.
    fn plain_attributes(&mut self, raw: &[u8]) -> Option<()> {
        let a0 = self.doc.attrs.len();
        let (_, raw) = rebase(self.src, raw)?;
        let attrs = &mut self.doc.attrs;
        plain_attrs(raw, |name, value| {
            let key = tag_key(name.as_bytes());
            if attrs.len() - a0 >= MAX_ATTRS || attrs[a0..].iter().any(|a| a.is(name)) {
                return None;
            }
            attrs.push(Attr {
                name,
                key,
                value: Cow::Borrowed(value),
            });
            Some(())
        })
    }

    /// Reads the attributes of `e` with quick-xml's iterator (entities,
    /// and the precise error of a broken attribute).
    fn iterated_attributes(
        &mut self,
        e: &BytesStart<'_>,
        before: usize,
    ) -> Result<(), DecodeError> {
        let name = || String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let a0 = self.doc.attrs.len();
        // quick-xml's duplicate check allocates a list per element; the
        // arena already holds this element's attributes, so check there.
        for (n, attr) in e.attributes().with_checks(false).enumerate() {
            if n >= MAX_ATTRS {
                return Err(self.malformed(format!(
                    "more than {MAX_ATTRS} attributes on <{}> at byte {before} \
                     (SIS elements carry at most 3)",
                    name()
                )));
            }
            let attr = attr.map_err(|err| {
                self.malformed(format!(
                    "bad attribute in <{}> at byte {before}: {err}",
                    name()
                ))
            })?;
            let Some((_, key)) = rebase(self.src, attr.key.as_ref()) else {
                return Err(internal(self.here()));
            };
            if self.doc.attrs[a0..].iter().any(|a| a.name == key) {
                return Err(self.malformed(format!(
                    "bad attribute in <{}> at byte {before}: duplicate attribute {key}",
                    name()
                )));
            }
            let value = match &attr.value {
                Cow::Borrowed(v) if !v.contains(&b'&') => match rebase(self.src, v) {
                    Some((_, s)) => Cow::Borrowed(s),
                    None => return Err(internal(self.here())),
                },
                _ => {
                    let v = attr
                        .decode_and_unescape_value(self.decoder)
                        .map_err(|err| {
                            self.malformed(format!(
                                "bad value of attribute {key} in <{}> at byte {before}: {err}",
                                name()
                            ))
                        })?;
                    Cow::Owned(v.into_owned())
                }
            };
            self.doc.attrs.push(Attr {
                name: key,
                key: tag_key(key.as_bytes()),
                value,
            });
        }
        Ok(())
    }

    /// Closes the innermost element: records its end and trims its text
    /// once, so [`El::text`] is a plain lookup.
    fn close(&mut self, after: usize) {
        if self.doc.pruned {
            self.prune();
        }
        if let Some(open) = self.stack.pop()
            && let Some(n) = self.doc.nodes.get_mut(open.id as usize)
        {
            n.end = after as u32;
            match n.text {
                Text::Span(s, l) if l > 0 => {
                    let b = self
                        .src
                        .as_bytes()
                        .get(s as usize..s as usize + l as usize)
                        .unwrap_or(&[]);
                    // Usually already trimmed (the reader skips leading
                    // whitespace; values rarely end in a blank).
                    if b.first().is_some_and(|&c| !is_ws_byte(c))
                        && b.last().is_some_and(|&c| !is_ws_byte(c))
                    {
                        return self.closed(after);
                    }
                    let lead = b.iter().take_while(|&&c| is_ws_byte(c)).count();
                    let trail = b[lead..]
                        .iter()
                        .rev()
                        .take_while(|&&c| is_ws_byte(c))
                        .count();
                    n.text = Text::Span(s + lead as u32, l - (lead + trail) as u32);
                }
                Text::Span(..) => {}
                Text::Owned(i) => {
                    if let Some(t) = self.doc.owned.get_mut(i as usize) {
                        let trimmed = trim_xml(t);
                        if trimmed.len() != t.len() {
                            *t = trimmed.to_owned();
                        }
                    }
                }
            }
        }
        self.closed(after);
    }

    /// Two-level parse: when the element about to close is `MSG/SCHD/FLTR`,
    /// drops its descendants (their nodes and attributes; they were the last
    /// ones pushed) and keeps it as a leaf with its span.
    #[inline]
    fn prune(&mut self) {
        let [schd, fltr] = match self.stack.as_slice() {
            [root, b, c] if root.id == 0 => [b.id, c.id],
            _ => return,
        };
        let key = |id: u32| self.doc.nodes.get(id as usize).map_or(0, |n| n.key);
        let root = self.doc.nodes.first().map_or("", |n| self.doc.name_of(n));
        if root != "MSG" || key(schd) != KEY_SCHD || key(fltr) != KEY_FLTR {
            return;
        }
        let Some(n) = self.doc.nodes.get_mut(fltr as usize) else {
            return;
        };
        n.first_child = NONE;
        let attrs_end = n.attrs.1 as usize;
        self.doc.nodes.truncate(fltr as usize + 1);
        self.doc.attrs.truncate(attrs_end);
    }

    /// Notes where the root closed, once the stack is empty.
    #[inline]
    fn closed(&mut self, after: usize) {
        if self.stack.is_empty() {
            self.root_closed_at = Some(after);
        }
    }

    /// True outside the root, or when the open element has no text yet.
    #[inline]
    fn text_is_empty(&self) -> bool {
        // An owned text is never empty (it is only made from real text).
        self.stack.last().is_none_or(|open| {
            matches!(
                self.doc.nodes.get(open.id as usize).map(|n| n.text),
                Some(Text::Span(_, 0)) | None
            )
        })
    }

    /// Appends a source span `s` (at byte `off`) to the open element's text.
    fn append_span(&mut self, off: usize, s: &str) {
        let Some(open) = self.stack.last() else {
            return;
        };
        let id = open.id as usize;
        if self.doc.text_of(&self.doc.nodes[id]).is_empty() {
            // The reader skipped leading whitespace, so a non-blank first
            // byte settles it without scanning the rest.
            if s.as_bytes().first().is_some_and(|&c| !is_ws_byte(c)) || !is_xml_ws(s) {
                self.doc.nodes[id].text = Text::Span(off as u32, s.len() as u32);
            }
        } else {
            self.append(s);
        }
    }

    /// Appends `text` to the open element's text, moving it to an owned
    /// string (entities, CDATA, CRs, a second segment).
    fn append(&mut self, text: &str) {
        let Some(open) = self.stack.last() else {
            return;
        };
        let id = open.id as usize;
        match self.doc.nodes[id].text {
            Text::Owned(i) => {
                if let Some(s) = self.doc.owned.get_mut(i as usize) {
                    s.push_str(text);
                }
            }
            Text::Span(..) => {
                let current = self.doc.text_of(&self.doc.nodes[id]);
                if current.is_empty() && is_xml_ws(text) {
                    return;
                }
                let joined = format!("{current}{text}");
                self.doc.nodes[id].text = Text::Owned(self.doc.owned.len() as u32);
                self.doc.owned.push(joined);
            }
        }
    }

    fn entity(&self, r: &BytesRef<'_>, at: usize) -> Result<char, DecodeError> {
        let resolved = r
            .resolve_char_ref()
            .map_err(|e| self.malformed(format!("bad character reference at byte {at}: {e}")))?;
        let ch = match resolved {
            Some(c) => c,
            None => match AsRef::<[u8]>::as_ref(&**r) {
                b"lt" => '<',
                b"gt" => '>',
                b"amp" => '&',
                b"apos" => '\'',
                b"quot" => '"',
                other => {
                    return Err(self.malformed(format!(
                        "undefined entity &{}; at byte {at}",
                        String::from_utf8_lossy(other)
                    )));
                }
            },
        };
        if !is_xml_char(ch) {
            return Err(self.malformed(format!(
                "character reference to U+{:04X} at byte {at}, which XML forbids",
                ch as u32
            )));
        }
        Ok(ch)
    }
}

const WS: u8 = 1;
const EQ: u8 = 2;

/// XML whitespace and `=`, the bytes that end an attribute name: one table
/// load per byte instead of five compares.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b' ' as usize] = WS;
    t[b'\t' as usize] = WS;
    t[b'\r' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'=' as usize] = EQ;
    t
};

/// Splits attributes that need nothing but splitting: `name = "value"`
/// pairs (either quote, whitespace around `=`) with no entity in a value,
/// calling `each(name, value)`. It follows quick-xml's own attribute scan
/// (`IterState::next`: a name runs to `=` or whitespace, the value to the
/// matching quote), so where it succeeds quick-xml reads the same pairs (a
/// proptest compares them); on anything else, or when `each` refuses, it
/// returns `None` and quick-xml's iterator reads the element, with its error
/// messages. A fraction of the iterator's instructions (docs/BENCHMARKS.md).
fn plain_attrs<'s>(
    raw: &'s str,
    mut each: impl FnMut(&'s str, &'s str) -> Option<()>,
) -> Option<()> {
    let b = raw.as_bytes();
    let skip_ws = |mut i: usize| {
        while b.get(i).is_some_and(|&c| BYTE_CLASS[usize::from(c)] == WS) {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(0);
    while i < b.len() {
        let k0 = i;
        while b.get(i).is_some_and(|&c| BYTE_CLASS[usize::from(c)] == 0) {
            i += 1;
        }
        if i == k0 {
            // quick-xml would take the `=` itself as the name.
            return None;
        }
        let name = raw.get(k0..i)?;
        i = skip_ws(i);
        if b.get(i) != Some(&b'=') {
            return None;
        }
        i = skip_ws(i + 1);
        let quote = *b.get(i).filter(|&&q| q == b'"' || q == b'\'')?;
        let rest = b.get(i + 1..)?;
        // Most SIS values are a few bytes: a plain loop beats memchr's
        // set-up there; long ones (the root's namespace) take memchr.
        let len = match rest.get(..16) {
            Some(head) => match head.iter().position(|&c| c == quote) {
                Some(n) => n,
                None => 16 + memchr::memchr(quote, rest.get(16..)?)?,
            },
            None => rest.iter().position(|&c| c == quote)?,
        };
        let value = raw.get(i + 1..i + 1 + len)?;
        if value.as_bytes().contains(&b'&') {
            return None;
        }
        each(name, value)?;
        i = skip_ws(i + 2 + len);
    }
    Some(())
}

/// XML 1.0 end-of-line handling (§2.11): `\r\n` and a lone `\r` become `\n`.
fn normalize_eols(s: &str) -> Cow<'_, str> {
    if s.contains('\r') {
        Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(s)
    }
}

/// XML 1.0 `Char` production.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Rejects C0 control characters (other than tab, LF, CR) anywhere in the
/// input: XML 1.0 forbids them even escaped-free, and quick-xml does not check.
pub(crate) fn check_chars(src: &str) -> Result<(), DecodeError> {
    // Branch-free (`&`, not `&&`), so the OR over the whole input
    // vectorises (no early exit: the clean case is the common one); the
    // position is looked for only on a hit.
    let flag = |b: u8| {
        u8::from(b < 0x20) & u8::from(b != b'\t') & u8::from(b != b'\n') & u8::from(b != b'\r')
    };
    let mut chunks = src.as_bytes().chunks_exact(64);
    let mut hit = 0u8;
    for chunk in &mut chunks {
        hit |= chunk.iter().fold(0u8, |acc, &b| acc | flag(b));
    }
    hit |= chunks.remainder().iter().fold(0u8, |acc, &b| acc | flag(b));
    if hit == 0 {
        return Ok(());
    }
    let at = src.bytes().position(|b| flag(b) != 0).unwrap_or(0);
    let byte = src.as_bytes().get(at).copied().unwrap_or(0);
    Err(DecodeError::malformed(
        "(document)",
        format!("control character 0x{byte:02X} at byte {at}, which XML forbids"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Document<'_> {
        parse(s).expect("parses")
    }

    fn err(s: &str) -> DecodeError {
        parse(s).expect_err("must fail")
    }

    #[test]
    fn builds_tree_with_text_attrs_and_raw() {
        let src = r#"<MSG><A x = "1" y='2'> hi </A><B/><B>t&amp;u</B></MSG>"#;
        let d = doc(src);
        let root = d.root();
        assert_eq!(root.name(), "MSG");
        let kids: Vec<_> = root.children().collect();
        assert_eq!(kids.len(), 3);
        assert_eq!(kids[0].text(), "hi");
        assert_eq!(kids[0].attr("x"), Some("1"));
        assert_eq!(kids[0].attr("y"), Some("2"));
        assert_eq!(kids[0].raw(), r#"<A x = "1" y='2'> hi </A>"#);
        assert!(kids[1].is_bare());
        assert_eq!(kids[1].raw(), "<B/>");
        assert_eq!(kids[2].text(), "t&u");
        assert_eq!(kids[2].path(), "MSG/B[2]");
        assert_eq!(kids[0].path(), "MSG/A");
        assert_eq!(kids[2].attr_path("Q"), "MSG/B[2]/@Q");
    }

    #[test]
    fn whitespace_only_text_is_empty_and_bare() {
        let d = doc("<MSG><X>  \n\t </X></MSG>");
        let x = d.root().children().next().expect("child");
        assert_eq!(x.text(), "");
        assert!(x.is_bare());
    }

    #[test]
    fn trailing_end_tag_is_reported() {
        let e = err("<MSG><A/></MSG>\n\t</MSG>");
        assert!(matches!(e, DecodeError::Malformed { .. }));
        assert_eq!(
            e,
            DecodeError::malformed(
                "MSG",
                "trailing content after the root element: </MSG> closed it at byte 15, \
                 then `</MSG>` at byte 17"
            )
        );
    }

    #[test]
    fn trailing_element_and_text_are_reported() {
        assert!(err("<MSG/><MSG/>").to_string().contains("trailing content"));
        assert!(err("<MSG/>junk").to_string().contains("trailing content"));
        // Whitespace and comments after the root are fine.
        doc("<MSG/>\n<!-- c -->\n");
    }

    #[test]
    fn unclosed_and_mismatched_are_malformed() {
        let e = err("<MSG><A></MSG>");
        assert_eq!(
            e,
            DecodeError::malformed(
                "MSG/A",
                "end tag </MSG> at byte 8 does not match the open <A>"
            )
        );
        let e = err("<MSG><A>");
        assert!(e.to_string().contains("not closed"), "{e}");
        assert!(e.to_string().contains("MSG/A"), "{e}");
        assert!(err("").to_string().contains("no root"));
    }

    #[test]
    fn entities_and_depth_are_checked() {
        assert!(
            err("<MSG>&nbsp;</MSG>")
                .to_string()
                .contains("undefined entity")
        );
        assert!(err("<MSG>&#1;</MSG>").to_string().contains("forbids"));
        let d = doc("<MSG>&#x41;&lt;</MSG>");
        assert_eq!(d.root().text(), "A<");
        let deep = format!("{}{}", "<a>".repeat(40), "</a>".repeat(40));
        assert!(err(&deep).to_string().contains("nested deeper"));
    }

    #[test]
    fn declaration_encoding_and_doctype() {
        doc(r#"<?xml version="1.0" encoding="UTF-8"?><MSG/>"#);
        doc(r#"<?xml version='1.0' encoding = 'utf8' standalone="yes"?><MSG/>"#);
        let e = err(r#"<?xml version="1.0" encoding="GBK"?><MSG/>"#);
        assert!(matches!(e, DecodeError::Codec { .. }), "{e}");
        // Not plainly split (an entity): quick-xml's iterator reads it.
        let e = err(r#"<?xml version="1.0" encoding="gb&amp;k"?><MSG/>"#);
        assert!(e.to_string().contains("GB&AMP;K"), "{e}");
        let e = err("<!DOCTYPE MSG><MSG/>");
        assert!(matches!(e, DecodeError::Codec { .. }), "{e}");
    }

    #[test]
    fn control_characters_are_rejected() {
        assert!(check_chars("<MSG>\u{1}</MSG>").is_err());
        assert!(check_chars("<MSG>\t\r\n</MSG>").is_ok());
    }

    #[test]
    fn many_attributes_are_capped() {
        let attrs: String = (0..70).map(|i| format!(" a{i}=\"1\"")).collect();
        let e = err(&format!("<MSG{attrs}/>"));
        assert!(
            e.to_string().contains("more than 64 attributes on <MSG>"),
            "{e}"
        );
    }

    #[test]
    fn paths_index_repeated_names_and_stay_linear() {
        let n = 20_000;
        let src = format!("<MSG><S>{}<X/></S></MSG>", "<U/><V/>".repeat(n));
        let d = doc(&src);
        let s = d.root().children().next().expect("S");
        let started = std::time::Instant::now();
        let paths: Vec<String> = s.children().map(|c| c.path()).collect();
        assert_eq!(paths.len(), 2 * n + 1);
        assert_eq!(paths[0], "MSG/S/U[1]");
        assert_eq!(paths[3], "MSG/S/V[2]");
        assert_eq!(paths[2 * n], "MSG/S/X");
        // Quadratic rendering would take minutes here.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn mixed_content_keeps_the_whitespace_the_reader_skips() {
        // Whitespace-only text between segments is not an event (the reader
        // skips it); it must still join the text, as XML reads it.
        let d = doc("<MSG>a &amp; b</MSG>");
        assert_eq!(d.root().text(), "a & b");
        let d = doc("<MSG>&lt; <![CDATA[x]]> &gt;</MSG>");
        assert_eq!(d.root().text(), "< x >");
        let d = doc("<MSG>a <!-- c --> b<?pi x?> c</MSG>");
        assert_eq!(d.root().text(), "a  b c");
        let d = doc("<MSG>a <B/> b</MSG>");
        assert_eq!(d.root().text(), "a  b");
        // Leading and trailing whitespace around entities is still trimmed.
        let d = doc("<MSG>  &amp;  </MSG>");
        assert_eq!(d.root().text(), "&");
    }

    #[test]
    fn carriage_returns_are_normalised() {
        let d = doc("<MSG>a\r\nb\rc</MSG>");
        assert_eq!(d.root().text(), "a\nb\nc");
        let d = doc("<MSG>x &amp;\r\n y</MSG>");
        assert_eq!(d.root().text(), "x &\n y");
    }

    #[test]
    fn declaration_after_whitespace_is_malformed() {
        let e = err(" <?xml version=\"1.0\"?><MSG/>");
        assert!(e.to_string().contains("not at the start"), "{e}");
    }

    #[test]
    fn names_of_other_lengths_match_by_bytes() {
        // Only four-byte names get a dispatch key; others compare as bytes.
        let d = doc("<MSG><LONGER a=\"1\">x</LONGER><AB/><ABCD/></MSG>");
        let names: Vec<_> = d.root().children().map(|c| (c.name(), c.key())).collect();
        assert_eq!(
            names,
            [("LONGER", 0), ("AB", 0), ("ABCD", tag_key(b"ABCD"))]
        );
        let e = err("<MSG><ABCDE></ABCDF></MSG>");
        assert!(
            e.to_string().contains("does not match the open <ABCDE>"),
            "{e}"
        );
        let e = err("<MSG><ABCD></ABCE></MSG>");
        assert!(
            e.to_string().contains("does not match the open <ABCD>"),
            "{e}"
        );
    }

    #[test]
    fn reused_arena_starts_clean() {
        // A large document, then a small one on the same thread: the spare
        // arena must not leak nodes of the first into the second.
        let big = format!("<MSG>{}</MSG>", "<FLTR><FLID>1</FLID></FLTR>".repeat(5000));
        let d = doc(&big);
        assert_eq!(d.root().children().count(), 5000);
        drop(d);
        let d = doc("<MSG><A>x</A></MSG>");
        let kids: Vec<_> = d.root().children().collect();
        assert_eq!(kids.len(), 1);
        assert_eq!(kids[0].text(), "x");
        assert_eq!(kids[0].path(), "MSG/A");
        // Two documents alive at once each get their own arena.
        let d2 = doc("<MSG><B/></MSG>");
        assert_eq!(d.root().children().next().map(|c| c.name()), Some("A"));
        assert_eq!(d2.root().children().next().map(|c| c.name()), Some("B"));
    }

    type Pairs = Vec<(String, String)>;

    /// The plain attribute scan and quick-xml's iterator, on one element.
    fn both_attribute_readers(raw: &str) -> Option<(Pairs, Pairs)> {
        let src = format!("<X{raw}/>");
        let mut reader = Reader::from_str(&src);
        let Ok(Event::Empty(e)) = reader.read_event() else {
            return None;
        };
        let pairs = |p: &Parser<'_>| {
            p.doc
                .attrs
                .iter()
                .map(|a| (a.name.to_owned(), a.value.to_string()))
                .collect::<Vec<_>>()
        };
        let mut fast = Parser::new(&src, false, None);
        fast.plain_attributes(e.attributes_raw())?;
        let mut slow = Parser::new(&src, false, None);
        let slow_ok = slow.iterated_attributes(&e, 0).is_ok();
        Some((
            pairs(&fast),
            if slow_ok { pairs(&slow) } else { Vec::new() },
        ))
    }

    #[test]
    fn plain_attribute_scan_reads_sis_attributes() {
        let (fast, slow) = both_attribute_readers(r#" RTNO = "1" CODE='9"3'"#).expect("plain");
        assert_eq!(fast, slow);
        assert_eq!(fast[1], ("CODE".to_owned(), "9\"3".to_owned()));
        // Entities, duplicates, `=` as a name and unquoted values go to quick-xml.
        for raw in [
            r#" A="&amp;""#,
            r#" A="1" A="2""#,
            r#" ="1""#,
            " A=1",
            r#" A"#,
        ] {
            assert!(both_attribute_readers(raw).is_none(), "{raw}");
        }
    }

    proptest::proptest! {
        /// Whatever the plain scan accepts, quick-xml's iterator accepts with
        /// the same names and values (the scan is only a shortcut).
        #[test]
        fn plain_attribute_scan_agrees_with_quick_xml(
            raw in proptest::prop_oneof![
                "[ a=\"'&;\t\n]{0,16}",
                "( {0,2}[a-c:]{1,2} {0,2}= {0,2}(\"[a-c'&;<]{0,3}\"|'[a-c\"]{0,3}')){0,4} {0,2}",
            ]
        ) {
            if let Some((fast, slow)) = both_attribute_readers(&raw) {
                proptest::prop_assert_eq!(fast, slow, "{}", raw);
            }
        }
    }

    #[test]
    fn duplicate_attribute_is_malformed() {
        let e = err(r#"<MSG a="1" a="2"/>"#);
        assert!(matches!(e, DecodeError::Malformed { .. }), "{e}");
        assert!(e.to_string().contains("duplicate attribute a"), "{e}");
        // Same name after whitespace around `=` and with an entity value.
        let e = err(r#"<MSG><X b = "1" c="&amp;" b="2"/></MSG>"#);
        assert_eq!(
            e,
            DecodeError::malformed(
                "MSG",
                "bad attribute in <X> at byte 5: duplicate attribute b"
            )
        );
    }
}
