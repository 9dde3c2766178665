//! Reference-data messages: the 23 types of sis-format §4.
//!
//! Layout (§1.3): META, RECS, then N records directly under MSG, each named
//! like TYPE. Each record becomes its key (the type's key field, §4) plus a
//! JSON body: element name → trimmed text (`""` when sent empty), an object
//! when the element has attributes (`@name`) or children (text under
//! `#text`), and a list for repeating children. Children marked `*` in §4
//! are always lists, even when sent once, so the stored shape is stable;
//! any other child sent more than once also becomes a list (never dropped).
//! A record without its key, or with an empty key, is Malformed (model doc).

use serde_json::{Map, Value};

use super::error::DecodeError;
use super::fields::{duplicate, int_leaf, parse_int, put, unknown_el};
use super::model::{Field, RefData, RefRecord, RefStyp, UnknownElement};
use super::xml::El;

/// The key field of each reference type (sis-format §4, column "Key").
pub(crate) fn key_field(rtype: &str) -> Option<&'static str> {
    Some(match rtype {
        "ABDG" => "ABCD",
        "ABNR" => "ANRC",
        "AIRC" => "ITAT",
        "AIRL" => "ITOP",
        "ARPT" => "ITCD",
        "BLST" => "BCOD",
        "CHLT" => "CCOD",
        "CITY" => "ITCD",
        "CLST" => "CCOD",
        "COUL" => "COUC",
        "DLYL" => "DCOD",
        "FLTL" => "FTYP",
        "GLST" => "GCOD",
        "HLTR" => "HLTC",
        "ORGN" => "OGID",
        "PLST" => "PCOD",
        "REGL" => "REGC",
        "REGN" => "RNUM",
        "SLST" => "SCOD",
        "STTS" => "STTC",
        "TLST" => "TCOD",
        "VIPL" => "VPCD",
        "VIPS" => "VSCD",
        _ => return None,
    })
}

/// Children that repeat (marked `*` in sis-format §4). AIRL TRML is not
/// starred there, but the AIRL sample sends two (one per MVIN).
fn repeating(rtype: &str) -> &'static [&'static str] {
    match rtype {
        "ABDG" => &["STND", "GATE"],
        "AIRL" => &["OGRP", "SUBC", "TRML"],
        "ARPT" | "CITY" => &["ABBR"],
        "COUL" => &["REGC"],
        "ORGN" => &["OCAT"],
        _ => &[],
    }
}

/// Decodes a reference-data message of type `rtype` (one of `REF_TYPES`).
pub(crate) fn refdata(
    msg: El<'_, '_>,
    rtype: &str,
    styp: &str,
    mut unknown: Vec<UnknownElement>,
) -> Result<RefData, DecodeError> {
    let Some(key) = key_field(rtype) else {
        return Err(DecodeError::codec(
            "MSG/META/TYPE",
            format!("reference type {rtype} has no key field in this codec version"),
        ));
    };
    let rep = repeating(rtype);
    let mut recs = Field::Absent;
    let mut records = Vec::new();
    for c in msg.children() {
        match c.name() {
            "META" => {}
            "RECS" => {
                let v = int_leaf(c, &mut unknown)?;
                put(&mut recs, v, c)?;
            }
            n if n == rtype => records.push(record(c, rtype, key, rep)?),
            _ => unknown.push(unknown_el(c)),
        }
    }
    Ok(RefData {
        rtype: rtype.to_owned(),
        styp: match styp {
            "DNLD" => RefStyp::Dnld,
            "RESP" => RefStyp::Resp,
            "ADD" => RefStyp::Add,
            "UPD" => RefStyp::Upd,
            "DEL" => RefStyp::Del,
            other => RefStyp::Other(other.to_owned()),
        },
        recs,
        records,
        unknown,
    })
}

fn record(el: El<'_, '_>, rtype: &str, key: &str, rep: &[&str]) -> Result<RefRecord, DecodeError> {
    let mut key_el = None;
    for c in el.children().filter(|c| c.name() == key) {
        if key_el.is_some() {
            return Err(duplicate(c));
        }
        key_el = Some(c);
    }
    let Some(key_el) = key_el else {
        return Err(DecodeError::malformed(
            el.path(),
            format!("{rtype} record without its key <{key}> (sis-format §4)"),
        ));
    };
    let value = key_el.text();
    if value.is_empty() {
        return Err(DecodeError::malformed(
            key_el.path(),
            format!("{rtype} record with an empty key <{key}> (sis-format §4)"),
        ));
    }
    if rtype == "ORGN" {
        parse_int(value).map_err(|e| e.at(key_el.path()))?;
    }
    Ok(RefRecord {
        key: value.to_owned(),
        body: Value::Object(object(el, rep)),
    })
}

/// The JSON object for an element: attributes as `@name`, children by
/// name (lists for repeating ones), text as `#text` when not a leaf.
fn object(el: El<'_, '_>, rep: &[&str]) -> Map<String, Value> {
    let mut map = Map::new();
    for a in el.attrs() {
        map.insert(format!("@{}", a.name), Value::String(a.value.to_string()));
    }
    for c in el.children() {
        let v = value(c);
        let name = c.name();
        match map.get_mut(name) {
            Some(Value::Array(list)) => list.push(v),
            Some(prev) => {
                let first = prev.take();
                *prev = Value::Array(vec![first, v]);
            }
            None if rep.contains(&name) => {
                map.insert(name.to_owned(), Value::Array(vec![v]));
            }
            None => {
                map.insert(name.to_owned(), v);
            }
        }
    }
    if (!el.attrs().is_empty() || el.has_children()) && !el.text().is_empty() {
        map.insert("#text".into(), Value::String(el.text().to_owned()));
    }
    map
}

fn value(el: El<'_, '_>) -> Value {
    if el.attrs().is_empty() && !el.has_children() {
        Value::String(el.text().to_owned())
    } else {
        // Nested children (SUBC) have no repeating grandchildren in §4.
        Value::Object(object(el, &[]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::model::REF_TYPES;
    use crate::codec::xml::parse;
    use serde_json::json;

    #[test]
    fn every_ref_type_has_a_key() {
        for t in REF_TYPES {
            assert!(key_field(t).is_some(), "{t}");
        }
        assert_eq!(key_field("SCHS"), None);
    }

    #[test]
    fn body_shapes() {
        let d = parse(
            r#"<MSG><META/><RECS>1</RECS><AIRL><ITOP>UA</ITOP><ONAM></ONAM><TRML MVIN="A" FLIN="I">T2</TRML>
               <OGRP>STAR</OGRP><SUBC><CODE>001</CODE></SUBC><SUBC><CODE>002</CODE></SUBC><XTRA>1</XTRA><XTRA>2</XTRA></AIRL></MSG>"#,
        )
        .expect("xml");
        let r = refdata(d.root(), "AIRL", "DNLD", Vec::new()).expect("ok");
        assert_eq!(r.recs, Field::Value(1));
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.records[0].key, "UA");
        assert_eq!(
            r.records[0].body,
            json!({
                "ITOP": "UA", "ONAM": "",
                "TRML": [{"@MVIN": "A", "@FLIN": "I", "#text": "T2"}],
                "OGRP": ["STAR"],
                "SUBC": [{"CODE": "001"}, {"CODE": "002"}],
                "XTRA": ["1", "2"],
            })
        );
    }

    #[test]
    fn key_rules() {
        let run = |xml: &str, t: &str| {
            let d = parse(xml).expect("xml");
            refdata(d.root(), t, "ADD", Vec::new())
        };
        let e = run("<MSG><GLST><GTNM>x</GTNM></GLST></MSG>", "GLST").expect_err("no key");
        assert_eq!(
            e,
            DecodeError::malformed(
                "MSG/GLST",
                "GLST record without its key <GCOD> (sis-format §4)"
            )
        );
        let e = run("<MSG><GLST><GCOD> </GCOD></GLST></MSG>", "GLST").expect_err("empty key");
        assert!(e.to_string().contains("MSG/GLST/GCOD"), "{e}");
        let e = run("<MSG><ORGN><OGID>x1</OGID></ORGN></MSG>", "ORGN").expect_err("bad int key");
        assert_eq!(e.class(), "MALFORMED");
        let r = run("<MSG><ORGN><OGID>110009</OGID></ORGN><JUNK/></MSG>", "ORGN").expect("ok");
        assert_eq!(r.records[0].key, "110009");
        assert_eq!(r.unknown[0].path, "MSG/JUNK");
    }
}
