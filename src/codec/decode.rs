//! The decoder entry point: bytes → envelope (sis-format §1) → the family
//! decoder chosen by TYPE/STYP (design §2, §5.2).
//!
//! Dispatch on the upper-cased TYPE and STYP:
//! - `SCHD` → [`MsgKind::Schd`] (STYP DNLD/RESP/ADFT, or kept as `Other`);
//! - `FLOP` + `FDEL` → [`MsgKind::Fdel`]; `FLOP` + another of the 48
//!   subtypes → [`MsgKind::Flop`]; `FLOP` + anything else → Unsupported;
//! - one of the 23 reference types → [`MsgKind::RefData`];
//! - `SCHS` + DNLD/RESP → [`MsgKind::Schs`]; `SCHS` + anything else → Unsupported;
//! - anything else (LDM, RQRD…) → [`MsgKind::Unsupported`], not an error.
//!
//! The error classes are tabled in docs/codec.md.

use super::error::DecodeError;
use super::fields::{extra_attrs, put, stray_text, text_leaf, unknown_el};
use super::fltr::Window;
use super::model::{
    DecodedMessage, FLOP_SUBTYPES, Field, Meta, MsgKind, REF_TYPES, SchsStyp, UnknownElement,
    Unsupported,
};
use super::xml::{self, El, tag_keys};
use serde::Serialize;
use std::ops::Range;

tag_keys!(META, SNDR, SEQN, DTTM, TYPE, STYP);
use super::{flop, fltr, refdata, schs, time};

/// Largest message accepted (64 MiB). A 1,000-flight SCHD is about 1.2 MB;
/// the cap bounds the element arena (roughly 8× the input) for anything
/// far beyond a real mailbox row. Larger input is a codec error: plausible,
/// but not representable by this version.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// The longest SNDR, TYPE and STYP accepted, in characters. They are parts
/// of the business identity (design §2), which PROC_STATE keeps in a unique
/// index (a btree row holds at most 2,704 bytes): unbounded, one over-long
/// value failed the binding on every attempt. sis-format §1.2:
/// SNDR is VARCHAR(4) in the mailbox, TYPE and STYP are four letters in the
/// catalogue and every sample; 16 leaves room for a longer code.
pub const MAX_CODE_CHARS: usize = 16;

/// The longest SEQN accepted, in decimal digits. sis-format §1.2: the
/// mailbox keeps it as MEDIUMINT (at most 8,388,607: seven digits) and the
/// outbound form is zero-padded to six; ten leave room for padding and a
/// wider counter. With [`MAX_CODE_CHARS`] an identity stays under 300 bytes.
pub const MAX_SEQN_DIGITS: usize = 10;

/// Decodes one SIS message. Never panics; every failure is classified as
/// [`DecodeError::Malformed`] or [`DecodeError::Codec`] with the element
/// path and a precise reason (it becomes LAST_ERROR).
pub fn decode(bytes: &[u8]) -> Result<DecodedMessage, DecodeError> {
    decode_with(bytes, TWO_LEVEL_ABOVE)
}

/// Messages longer than this are parsed in two levels (`xml::parse_two_level`):
/// each FLTR's elements are in memory only while that FLTR is decoded, so a
/// 20,000-flight SCHD does not hold an element tree of its whole 16.5 MB
/// beside the decoded model. Smaller messages are parsed
/// once (a second pass over each FLTR would cost about a third of the decode
/// time; docs/BENCHMARKS.md, codec). A 1,000-flight SCHD is about 1.2 MB.
pub const TWO_LEVEL_ABOVE: usize = 2 << 20;

/// The error of a message of `len` bytes when it is over
/// [`MAX_MESSAGE_BYTES`]: a view can tell without reading the text.
pub fn too_large(len: usize) -> Option<DecodeError> {
    (len > MAX_MESSAGE_BYTES).then(|| {
        DecodeError::codec(
            "(document)",
            format!(
                "message of {len} bytes is larger than the {MAX_MESSAGE_BYTES} bytes this codec version accepts"
            ),
        )
    })
}

/// [`decode`] with the two-level threshold given: the result is the same for
/// every threshold (tests compare both parses, `tests/it/codec_proptest.rs`).
#[doc(hidden)]
pub fn decode_with(bytes: &[u8], two_level_above: usize) -> Result<DecodedMessage, DecodeError> {
    decode_in(bytes, two_level_above, None)
}

/// A message decoded in part: its records (the FLTRs of
/// a SCHD or SCHS, the records of a reference message) are only those of
/// `first..first + message's record count`; everything else is decoded as
/// [`decode`] does. `total` is the number of records the message has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecodedWindow {
    pub message: DecodedMessage,
    /// Index (from 0) of the first record kept.
    pub first: usize,
    /// Records in the whole message.
    pub total: usize,
}

impl DecodedWindow {
    /// Records kept.
    pub fn shown(&self) -> usize {
        match &self.message.kind {
            MsgKind::Schd(s) => s.flights.len(),
            MsgKind::Schs(s) => s.flights.len(),
            MsgKind::RefData(r) => r.records.len(),
            MsgKind::Flop(_) | MsgKind::Fdel(_) | MsgKind::Unsupported(_) => 0,
        }
    }

    /// True when records of the message were left out.
    pub fn is_cut(&self) -> bool {
        self.shown() < self.total
    }
}

/// Decodes `bytes` keeping only the records in `records` (by index, from 0)
/// for a view of a large message (the console's message page, `msgx msg
/// show`). A SCHD is parsed in two levels whatever its size and only the
/// FLTRs in the window are decoded: a page of a 20,000-flight package costs
/// one well-formedness pass over the text and 200 FLTRs, not the ~50 MB model
/// of all 20,000. Other kinds are decoded whole and cut (they are not parsed
/// in two levels by the pipeline either). Errors are those of [`decode`] for
/// everything but the FLTRs outside the window, which are not decoded.
pub fn decode_window(bytes: &[u8], records: Range<usize>) -> Result<DecodedWindow, DecodeError> {
    let mut window = Window {
        range: records.clone(),
        total: 0,
    };
    let mut message = decode_in(bytes, 0, Some(&mut window))?;
    // Kept in place: the records after the window, then those before it.
    fn keep<T>(list: &mut Vec<T>, records: &Range<usize>) -> usize {
        let total = list.len();
        list.truncate(records.end);
        list.drain(..records.start.min(list.len()));
        total
    }
    let total = match &mut message.kind {
        MsgKind::Schd(_) => window.total,
        MsgKind::Schs(s) => keep(&mut s.flights, &records),
        MsgKind::RefData(r) => keep(&mut r.records, &records),
        MsgKind::Flop(_) | MsgKind::Fdel(_) | MsgKind::Unsupported(_) => 0,
    };
    Ok(DecodedWindow {
        message,
        first: records.start.min(total),
        total,
    })
}

fn decode_in(
    bytes: &[u8],
    two_level_above: usize,
    window: Option<&mut Window>,
) -> Result<DecodedMessage, DecodeError> {
    if let Some(e) = too_large(bytes.len()) {
        return Err(e);
    }
    let src = std::str::from_utf8(bytes).map_err(|e| {
        DecodeError::malformed(
            "(document)",
            format!(
                "not UTF-8: invalid byte sequence at byte {} (sis-format §1.5)",
                e.valid_up_to()
            ),
        )
    })?;
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    xml::check_chars(src)?;
    let doc = if src.len() > two_level_above {
        xml::parse_two_level(src)?
    } else {
        xml::parse(src)?
    };
    let root = doc.root();
    if root.name() != "MSG" {
        return Err(DecodeError::malformed(
            root.name(),
            format!(
                "root element is <{}>, expected <MSG> (sis-format §1.1)",
                root.name()
            ),
        ));
    }
    let (meta, unknown) = envelope(root)?;
    let kind = dispatch(root, &meta, unknown, window)?;
    Ok(DecodedMessage { meta, kind })
}

/// Reads META (sis-format §1.2). SNDR, SEQN, TYPE and STYP are mandatory
/// and non-empty; DTTM is optional. Unknown META children are returned so
/// the family decoder can keep them.
pub(crate) fn envelope(root: El<'_, '_>) -> Result<(Meta, Vec<UnknownElement>), DecodeError> {
    let mut metas = root.children().filter(|c| c.key() == META);
    let Some(meta_el) = metas.next() else {
        return Err(DecodeError::malformed(
            "MSG",
            "no <META> element (sis-format §1.2)",
        ));
    };
    if let Some(second) = metas.next() {
        return Err(DecodeError::malformed(
            second.path(),
            "more than one <META> element (sis-format §1.2)",
        ));
    }
    let mut unknown = Vec::new();
    let (mut sndr, mut seqn, mut dttm, mut typ, mut styp) = (
        Field::Absent,
        Field::Absent,
        Field::Absent,
        Field::Absent,
        Field::Absent,
    );
    let mut dttm_el = None;
    for c in meta_el.children() {
        let slot = match c.key() {
            SNDR => &mut sndr,
            SEQN => &mut seqn,
            DTTM => {
                dttm_el = Some(c);
                &mut dttm
            }
            TYPE => &mut typ,
            STYP => &mut styp,
            _ => {
                unknown.push(unknown_el(c));
                continue;
            }
        };
        let v = text_leaf(c, &mut unknown)?;
        put(slot, v, c)?;
    }
    extra_attrs(meta_el, &[], &mut unknown);
    stray_text(meta_el, &mut unknown);
    let need = |f: Field<String>, tag: &str| match f {
        Field::Value(v) => Ok(v),
        Field::Empty => Err(DecodeError::malformed(
            format!("MSG/META/{tag}"),
            format!("<{tag}> is empty; it is mandatory (sis-format §1.2)"),
        )),
        Field::Absent => Err(DecodeError::malformed(
            "MSG/META",
            format!("missing <{tag}>; it is mandatory (sis-format §1.2)"),
        )),
    };
    let sndr = bounded(need(sndr, "SNDR")?, "SNDR", MAX_CODE_CHARS)?;
    let seqn = seqn_of(need(seqn, "SEQN")?)?;
    let mut msg_type = bounded(need(typ, "TYPE")?, "TYPE", MAX_CODE_CHARS)?;
    msg_type.make_ascii_uppercase();
    let mut styp = bounded(need(styp, "STYP")?, "STYP", MAX_CODE_CHARS)?;
    styp.make_ascii_uppercase();
    let dttm = match (dttm, dttm_el) {
        (Field::Value(s), Some(el)) => Some(time::parse_dttm(&s).map_err(|e| e.at(el.path()))?),
        _ => None,
    };
    Ok((
        Meta {
            sndr,
            seqn,
            dttm,
            msg_type,
            styp,
        },
        unknown,
    ))
}

/// `value` of the META field `tag` if it has at most `max` characters, else
/// MALFORMED naming the field and its length (an identity part, design §2).
fn bounded(value: String, tag: &str, max: usize) -> Result<String, DecodeError> {
    let chars = value.chars().count();
    if chars > max {
        return Err(DecodeError::malformed(
            format!("MSG/META/{tag}"),
            format!(
                "<{tag}> is {chars} characters long; at most {max} are accepted \
                 (an identity part, design §2; sis-format §1.2)"
            ),
        ));
    }
    Ok(value)
}

/// SEQN: at most [`MAX_SEQN_DIGITS`] decimal digits (sis-format §1.2: the
/// mailbox keeps it as MEDIUMINT), else MALFORMED.
fn seqn_of(seqn: String) -> Result<String, DecodeError> {
    let seqn = bounded(seqn, "SEQN", MAX_SEQN_DIGITS)?;
    if !seqn.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DecodeError::malformed(
            "MSG/META/SEQN",
            format!(
                "<SEQN> {seqn:?} is not a decimal number (sis-format §1.2: a sequence number, \
                 MEDIUMINT in the mailbox)"
            ),
        ));
    }
    Ok(seqn)
}

fn dispatch(
    root: El<'_, '_>,
    meta: &Meta,
    unknown: Vec<UnknownElement>,
    window: Option<&mut Window>,
) -> Result<MsgKind, DecodeError> {
    let t = meta.msg_type.as_str();
    let s = meta.styp.as_str();
    let unsupported = |reason: String| {
        MsgKind::Unsupported(Unsupported {
            msg_type: t.to_owned(),
            styp: s.to_owned(),
            reason,
        })
    };
    Ok(match t {
        "SCHD" => MsgKind::Schd(fltr::schd(root, s, unknown, window)?),
        // Both lists are sorted (a unit test checks it).
        "FLOP" if FLOP_SUBTYPES.binary_search(&s).is_ok() => flop::flop(root, s, unknown)?,
        "FLOP" => unsupported(format!(
            "unknown FLOP subtype {s} (sis-format §3.3 lists 48; legacy drops these too)"
        )),
        _ if REF_TYPES.binary_search(&t).is_ok() => {
            MsgKind::RefData(refdata::refdata(root, t, s, unknown)?)
        }
        "SCHS" if s == "DNLD" => MsgKind::Schs(schs::schs(root, SchsStyp::Dnld, unknown)?),
        "SCHS" if s == "RESP" => MsgKind::Schs(schs::schs(root, SchsStyp::Resp, unknown)?),
        "SCHS" => unsupported(format!(
            "unknown SCHS subtype {s} (sis-format §2.5 knows DNLD and RESP)"
        )),
        "RQRD" | "RQFD" => unsupported(format!(
            "{t} is an outbound request msgx sends, not a message it consumes (sis-format §5)"
        )),
        _ => unsupported(format!("message type {t} is not handled by msgx")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(meta: &str, body: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd"><META>{meta}</META>{body}</MSG>"#
        )
    }

    fn meta(t: &str, s: &str) -> String {
        format!(
            "<SNDR>AODB</SNDR><SEQN>7</SEQN><DTTM>20261201080000</DTTM><TYPE>{t}</TYPE><STYP>{s}</STYP>"
        )
    }

    #[test]
    fn identity_parts_are_bounded_naming_the_field_and_its_length() {
        let flop = |sndr: &str, seqn: &str, t: &str, s: &str| {
            let meta =
                format!("<SNDR>{sndr}</SNDR><SEQN>{seqn}</SEQN><TYPE>{t}</TYPE><STYP>{s}</STYP>");
            decode(msg(&meta, "<FLOP><FLID>1</FLID><APPT/></FLOP>").as_bytes())
        };
        let long = "9".repeat(6_000);
        let e = flop("AODB", &long, "FLOP", "APPT").unwrap_err();
        assert_eq!(
            e.to_string(),
            "MALFORMED at MSG/META/SEQN: <SEQN> is 6000 characters long; at most 10 are \
             accepted (an identity part, design §2; sis-format §1.2)"
        );
        let e = flop("AODB", "12a4", "FLOP", "APPT").unwrap_err();
        assert!(
            matches!(&e, DecodeError::Malformed { path, reason }
                if path == "MSG/META/SEQN" && reason.contains("\"12a4\" is not a decimal")),
            "{e}"
        );
        assert!(flop("AODB", "-1", "FLOP", "APPT").is_err(), "digits only");
        let code = "X".repeat(MAX_CODE_CHARS + 1);
        for (tag, e) in [
            ("SNDR", flop(&code, "1", "FLOP", "APPT")),
            ("TYPE", flop("AODB", "1", &code, "APPT")),
            ("STYP", flop("AODB", "1", "FLOP", &code)),
        ] {
            let e = e.unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "MALFORMED at MSG/META/{tag}: <{tag}> is 17 characters"
                )),
                "{e}"
            );
        }
        // At the bounds: accepted (a zero-padded outbound SEQN too).
        let ten = "0".repeat(MAX_SEQN_DIGITS);
        let m = flop("ÄÖÜÄÖÜÄÖÜÄÖÜÄÖÜÄ", &ten, "FLOP", "APPT").expect("at the bounds");
        assert_eq!(
            (m.meta.seqn.as_str(), m.meta.sndr.chars().count()),
            (ten.as_str(), 16)
        );
        assert_eq!(
            flop("AODB", " 000042 ", "FLOP", "APPT")
                .expect("trimmed")
                .meta
                .seqn,
            "000042"
        );
    }

    #[test]
    fn dispatch_lists_are_sorted_for_binary_search() {
        assert!(FLOP_SUBTYPES.is_sorted());
        assert!(REF_TYPES.is_sorted());
    }

    #[test]
    fn meta_is_read_and_upper_cased() {
        let m = decode(msg(&meta("flop", "appt"), "<FLOP><FLID>1</FLID><APPT/></FLOP>").as_bytes())
            .expect("ok");
        assert_eq!(m.meta.msg_type, "FLOP");
        assert_eq!(m.meta.styp, "APPT");
        assert_eq!(m.meta.sndr, "AODB");
        assert_eq!(m.meta.seqn, "7");
        assert_eq!(
            m.meta.dttm.map(|d| d.to_string()).as_deref(),
            Some("2026-12-01 08:00:00")
        );
    }

    #[test]
    fn mandatory_meta_fields() {
        for tag in ["SNDR", "SEQN", "TYPE", "STYP"] {
            let full = meta("GLST", "ADD");
            let open = format!("<{tag}>");
            let start = full.find(&open).expect("tag");
            let end = full.find(&format!("</{tag}>")).expect("end") + tag.len() + 3;
            let missing = format!("{}{}", &full[..start], &full[end..]);
            let e = decode(msg(&missing, "").as_bytes()).expect_err(tag);
            assert_eq!(
                e,
                DecodeError::malformed(
                    "MSG/META",
                    format!("missing <{tag}>; it is mandatory (sis-format §1.2)")
                )
            );
            let empty = format!("{}<{tag}/>{}", &full[..start], &full[end..]);
            let e = decode(msg(&empty, "").as_bytes()).expect_err(tag);
            assert!(e.to_string().contains(&format!("MSG/META/{tag}")), "{e}");
        }
        let e = decode(b"<MSG><RECS>1</RECS></MSG>").expect_err("no meta");
        assert!(e.to_string().contains("no <META>"), "{e}");
        let e = decode(b"<ROOT/>").expect_err("root");
        assert!(e.to_string().contains("expected <MSG>"), "{e}");
    }

    #[test]
    fn dttm_classes() {
        let bad = "<SNDR>A</SNDR><SEQN>1</SEQN><DTTM>2026-12-01T08:00:00</DTTM><TYPE>LDM</TYPE><STYP>X</STYP>";
        let e = decode(msg(bad, "").as_bytes()).expect_err("iso");
        assert_eq!(e.class(), "CODEC_ERROR");
        assert!(
            e.to_string()
                .starts_with("CODEC_ERROR at MSG/META/DTTM: expected yyyyMMddHHmmss"),
            "{e}"
        );
        let none = "<SNDR>A</SNDR><SEQN>1</SEQN><DTTM/><TYPE>LDM</TYPE><STYP>X</STYP>";
        assert_eq!(
            decode(msg(none, "").as_bytes()).expect("ok").meta.dttm,
            None
        );
    }

    #[test]
    fn non_utf8_and_bom() {
        let mut b = msg(&meta("LDM", "X"), "").into_bytes();
        b.insert(60, 0xFF);
        let e = decode(&b).expect_err("bytes");
        assert_eq!(e.class(), "MALFORMED");
        assert!(e.to_string().contains("not UTF-8"), "{e}");
        let with_bom = format!("\u{feff}{}", msg(&meta("LDM", "X"), ""));
        assert!(decode(with_bom.as_bytes()).is_ok());
    }

    #[test]
    fn oversized_input_is_a_codec_error() {
        let big = vec![b' '; MAX_MESSAGE_BYTES + 1];
        let e = decode(&big).expect_err("too big");
        assert_eq!(e.class(), "CODEC_ERROR");
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn dispatch_unsupported() {
        for (t, s, want) in [
            ("SCHS", "ADD", "unknown SCHS subtype ADD"),
            ("LDM", "X", "not handled"),
            ("FLOP", "ACTT", "unknown FLOP subtype ACTT"),
            ("RQRD", "GLST", "outbound request"),
        ] {
            let m = decode(msg(&meta(t, s), "").as_bytes()).expect("ok");
            let MsgKind::Unsupported(u) = m.kind else {
                panic!("{t}: {:?}", m.kind)
            };
            assert!(u.reason.contains(want), "{}", u.reason);
            assert_eq!(u.msg_type, t);
        }
    }

    #[test]
    fn payload_missing_is_malformed() {
        let e = decode(msg(&meta("FLOP", "APPT"), "").as_bytes()).expect_err("no flop");
        assert_eq!(e.class(), "MALFORMED");
        let e = decode(msg(&meta("SCHD", "DNLD"), "").as_bytes()).expect_err("no schd");
        assert_eq!(e.class(), "MALFORMED");
        let e = decode(msg(&meta("SCHS", "RESP"), "").as_bytes()).expect_err("no schs");
        assert_eq!(e.class(), "MALFORMED");
    }

    #[test]
    fn schs_dnld_and_resp_decode_lower_case_styp_too() {
        for styp in ["DNLD", "resp"] {
            let m = decode(
                msg(
                    &meta("SCHS", styp),
                    "<SCHS><SNAM>W</SNAM><RECS>0</RECS></SCHS>",
                )
                .as_bytes(),
            )
            .expect("ok");
            let MsgKind::Schs(s) = m.kind else {
                panic!("{styp}: {:?}", m.kind)
            };
            assert_eq!(s.snam, Field::Value("W".into()));
            let want = if styp == "DNLD" {
                SchsStyp::Dnld
            } else {
                SchsStyp::Resp
            };
            assert_eq!(s.styp, want);
        }
    }

    #[test]
    fn meta_unknowns_are_kept() {
        let m = decode(
            msg(
                &format!("{}<PRIO>1</PRIO>", meta("GLST", "ADD")),
                "<RECS>1</RECS><GLST><GCOD>G1</GCOD></GLST>",
            )
            .as_bytes(),
        )
        .expect("ok");
        let MsgKind::RefData(r) = m.kind else {
            panic!()
        };
        assert_eq!(r.unknown[0].path, "MSG/META/PRIO");
    }

    /// Unknowns kept inside group items (a GTDT child, a
    /// VIPT attribute, a DELY extra) are found, not only the top-level lists.
    #[test]
    fn unknown_elements_finds_every_depth() {
        let schd = decode(
            msg(
                &format!("{}<PRIO>1</PRIO>", meta("SCHD", "DNLD")),
                "<SCHD><RECS>1</RECS><FLTR><FLID>1</FLID><ZZZZ>x</ZZZZ>\
                 <GTDT GTNO=\"1\"><GATE>G1</GATE><GTXX>bus</GTXX></GTDT>\
                 <VIPF><VPCD>V</VPCD><VIPT VX=\"1\"><VSCD>S</VSCD></VIPT></VIPF>\
                 <DELY CODE=\"YY\" DURA=\"0010\" EXTRA=\"e\">late</DELY></FLTR><TAIL/></SCHD>",
            )
            .as_bytes(),
        )
        .expect("ok");
        let names: Vec<&str> = schd
            .unknown_elements()
            .iter()
            .map(|u| u.name.as_str())
            .collect();
        assert_eq!(names, ["PRIO", "TAIL", "ZZZZ", "@EXTRA", "GTXX", "@VX"]);
        let flop = decode(
            msg(
                &meta("FLOP", "GTDT"),
                "<FLOP><FLID>9</FLID><GTDT GTNO=\"1\"><GATE>G1</GATE><GTXX>bus</GTXX></GTDT>\
                 <NOTE>n</NOTE></FLOP>",
            )
            .as_bytes(),
        )
        .expect("ok");
        let paths: Vec<&str> = flop
            .unknown_elements()
            .iter()
            .map(|u| u.path.as_str())
            .collect();
        assert_eq!(paths, ["MSG/FLOP/NOTE", "MSG/FLOP/GTDT/GTXX"]);
    }

    /// A window holds exactly the records of the whole decode at its
    /// indexes, counts them all, and skips the FLTRs outside it: a broken
    /// FLTR outside the window is not decoded.
    #[test]
    fn a_window_is_a_slice_of_the_whole_decode() {
        let fltrs: String = (0..7)
            .map(|i| format!("<FLTR><FLID>{i}</FLID><FLNO>YG{i}</FLNO></FLTR>"))
            .collect();
        let xml = msg(
            &meta("SCHD", "DNLD"),
            &format!("<SCHD><RECS>7</RECS>{fltrs}</SCHD>"),
        );
        let whole = decode(xml.as_bytes()).expect("whole");
        let MsgKind::Schd(all) = &whole.kind else {
            panic!("a SCHD")
        };
        for range in [0..3, 2..5, 5..100, 7..9, 0..usize::MAX] {
            let w = decode_window(xml.as_bytes(), range.clone()).expect("window");
            let MsgKind::Schd(part) = &w.message.kind else {
                panic!("a SCHD")
            };
            let end = range.end.min(7);
            let start = range.start.min(end);
            assert_eq!(part.flights, all.flights[start..end], "{range:?}");
            assert_eq!((w.first, w.total, w.shown()), (start, 7, end - start));
            assert_eq!(w.is_cut(), end - start < 7);
            assert_eq!((&w.message.meta, &part.recs), (&whole.meta, &all.recs));
        }
        let broken = xml.replace("<FLID>6</FLID>", "<FLID>six</FLID>");
        assert!(decode(broken.as_bytes()).is_err());
        assert!(decode_window(broken.as_bytes(), 0..3).is_ok());
        assert!(decode_window(broken.as_bytes(), 5..7).is_err());
        // Not well-formed anywhere: an error whatever the window.
        let cut = &xml[..xml.len() - 20];
        assert!(decode_window(cut.as_bytes(), 0..1).is_err());
        // A reference message is decoded whole and cut to the window.
        let refs = msg(
            &meta("AIRL", "DNLD"),
            "<RECS>3</RECS><AIRL><ITOP>UA</ITOP></AIRL><AIRL><ITOP>YG</ITOP></AIRL><AIRL><ITOP>CA</ITOP></AIRL>",
        );
        let w = decode_window(refs.as_bytes(), 1..2).expect("refdata");
        let MsgKind::RefData(r) = &w.message.kind else {
            panic!("reference data: {:?}", w.message.kind)
        };
        assert_eq!((w.first, w.total, r.records.len()), (1, 3, 1));
        assert_eq!(r.records[0].key, "YG");
    }
}
