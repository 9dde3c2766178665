//! The element tree: a [`Document`] arena of nodes and the [`El`] handles
//! the decoders walk (see the module doc of `codec::xml` for why a tree).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;

/// Deepest element nesting accepted. SIS nests at most 5 levels
/// (`MSG/SCHD/FLTR/VIPF/VIPT`); anything far deeper is not a SIS message.
pub(crate) const MAX_DEPTH: usize = 32;

/// Most attributes accepted on one element. SIS elements carry at most 3
/// (DELY); the cap also bounds quick-xml's duplicate-attribute check, which
/// is quadratic in the attribute count.
pub(crate) const MAX_ATTRS: usize = 64;

pub(super) const NONE: u32 = u32::MAX;

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
pub(super) fn is_named(key: u32, actual: &str, name: &str) -> bool {
    match tag_key(name.as_bytes()) {
        0 => actual == name,
        wanted => key == wanted,
    }
}

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
pub(super) enum Text {
    Span(u32, u32),
    Owned(u32),
}

/// One element. Offsets are `u32`: [`parse`](super::parse) refuses inputs of 4 GiB or more
/// (the decoder caps messages at 64 MiB), so every offset and index fits.
/// Kept small (56 bytes) because a 1,000-flight SCHD has ~48,000 of them.
#[derive(Debug)]
pub(super) struct Node {
    /// [`tag_key`] of the name.
    pub(super) key: u32,
    /// The name is `src[start + 1 .. start + 1 + name_len]`.
    pub(super) name_len: u32,
    /// Character data directly inside the element (all segments joined,
    /// leading whitespace-only segments dropped: values are trimmed anyway).
    pub(super) text: Text,
    pub(super) attrs: (u32, u32),
    pub(super) parent: u32,
    pub(super) first_child: u32,
    pub(super) next_sibling: u32,
    /// Byte span of the whole element in the source, `<` to `>`.
    pub(super) start: u32,
    pub(super) end: u32,
    /// 1-based index among same-named siblings and their count (0: not yet
    /// computed), filled lazily for all children of a parent on the first
    /// path request, so rendering many paths stays linear (see [`El::path`]).
    pub(super) ordinal: Cell<u32>,
    pub(super) same_named: Cell<u32>,
}

/// Node arenas are reused between documents on one thread (a worker
/// decodes message after message): no multi-megabyte allocation, page
/// faults and heap consolidation per large message, and the memory is
/// warm in cache. Arenas above this many nodes (3.5 MiB) are not kept.
pub(super) const KEEP_NODES: usize = 1 << 16;

thread_local! {
    static SPARE_NODES: Cell<Option<Vec<Node>>> = const { Cell::new(None) };
}

/// An empty node arena with room for `want` nodes, reusing this thread's
/// spare arena when there is one.
pub(super) fn node_arena(want: usize) -> Vec<Node> {
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
    pub(super) src: &'a str,
    pub(super) nodes: Vec<Node>,
    pub(super) attrs: Vec<Attr<'a>>,
    /// Texts that are not a single source span (entities, CDATA, CR, joined
    /// segments).
    pub(super) owned: Vec<String>,
    /// Two-level parse ([`parse_two_level`](super::parse_two_level)): every `MSG/SCHD/FLTR` is a
    /// leaf here, its subtree checked and dropped when it closed.
    pub(super) pruned: bool,
    /// For a fragment ([`parse_fragment`](super::parse_fragment)): the path of its root element in
    /// the whole message, so every path names the element as a whole-message
    /// parse would.
    pub(super) root_path: Option<String>,
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
    pub(super) fn name_of(&self, n: &Node) -> &'a str {
        let s = n.start as usize + 1;
        self.src.get(s..s + n.name_len as usize).unwrap_or("")
    }

    pub(super) fn text_of(&self, n: &Node) -> &str {
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
    pub(super) doc: &'d Document<'a>,
    pub(super) id: u32,
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
    /// ([`parse_two_level`](super::parse_two_level)): its subtree is parsed again, alone, from
    /// [`El::raw`] with [`parse_fragment`](super::parse_fragment).
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
    pub(super) doc: &'d Document<'a>,
    pub(super) next: u32,
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

pub(super) const KEY_SCHD: u32 = tag_key(b"SCHD");
pub(super) const KEY_FLTR: u32 = tag_key(b"FLTR");
