//! The parser: quick-xml events into a [`Document`], with the
//! well-formedness checks of the module doc, and the two-level parse of
//! large schedules ([`parse_two_level`], [`parse_fragment`]).

use std::borrow::Cow;
use std::cell::Cell;

use quick_xml::events::{BytesDecl, BytesEnd, BytesRef, BytesStart, BytesText, Event};
use quick_xml::reader::Reader;

use super::tree::{
    Attr, Document, El, KEEP_NODES, KEY_FLTR, KEY_SCHD, MAX_ATTRS, MAX_DEPTH, NONE, Node, Text,
    node_arena, tag_key,
};
use crate::codec::error::DecodeError;

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
/// decoded model; the decoder parses each FLTR again, alone,
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

/// One open element: its node and its last child so far (appending a child
/// needs it; closed elements never do, so it lives here, not in the node).
#[derive(Clone, Copy)]
struct Open {
    id: u32,
    last_child: u32,
}

pub(super) struct Parser<'a> {
    src: &'a str,
    pub(super) doc: Document<'a>,
    /// Open elements, root first.
    stack: Vec<Open>,
    root_closed_at: Option<usize>,
    seen_markup: bool,
    decoder: quick_xml::encoding::Decoder,
}

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, pruned: bool, root_path: Option<String>) -> Self {
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
    pub(super) fn plain_attributes(&mut self, raw: &[u8]) -> Option<()> {
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
    pub(super) fn iterated_attributes(
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
                v => {
                    // Unescaped only, as the borrowed case above: quick-xml
                    // 0.41's value methods also normalise whitespace.
                    let bad = |err: &dyn std::fmt::Display| {
                        self.malformed(format!(
                            "bad value of attribute {key} in <{}> at byte {before}: {err}",
                            name()
                        ))
                    };
                    let decoded = self.decoder.decode(v).map_err(|e| bad(&e))?;
                    let v = quick_xml::escape::unescape(&decoded).map_err(|e| bad(&e))?;
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
