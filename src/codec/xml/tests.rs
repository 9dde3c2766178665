//! Unit tests of the tree and the parser.

use quick_xml::events::Event;
use quick_xml::reader::Reader;

use super::parser::Parser;
use super::tree::Document;
use super::*;
use crate::codec::error::DecodeError;

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
