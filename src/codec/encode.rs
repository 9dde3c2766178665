//! Outbound requests RQRD (reference data) and RQFD (flight data),
//! byte-compatible with the predecessor (sis-format §5): one line, no
//! indentation, the exact declaration and `<MSG>` attributes below.
//!
//! [`decode_request`] reads them back (used by the round-trip tests and by
//! operators inspecting `coutmsgs`); [`super::decode`] classifies them as
//! Unsupported, since msgx never consumes its own requests.

use chrono::NaiveDateTime;

use super::decode::envelope;
use super::error::DecodeError;
use super::fields::text_leaf;
use super::model::{Field, Meta};
use super::xml;

const HEAD: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8"?>"#,
    r#"<MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd">"#
);

/// Escapes the three characters that would break element text. The
/// predecessor copied values verbatim; for the values it accepted (codes,
/// `DDMMMYYHHMM` times) the output is identical.
fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['&', '<', '>']) {
        return s.into();
    }
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .into()
}

fn meta(out: &mut String, sndr: &str, seqn6: &str, dttm: NaiveDateTime, typ: &str, styp: &str) {
    out.push_str(HEAD);
    out.push_str("<META><SNDR>");
    out.push_str(&escape(sndr));
    out.push_str("</SNDR><SEQN>");
    out.push_str(&escape(seqn6));
    out.push_str("</SEQN><DTTM>");
    out.push_str(&dttm.format("%Y%m%d%H%M%S").to_string());
    out.push_str("</DTTM><TYPE>");
    out.push_str(typ);
    out.push_str("</TYPE><STYP>");
    out.push_str(&escape(styp));
    out.push_str("</STYP></META>");
}

/// A local time as SIS `DDMMMYYHHMM` with an upper-case month (sis-format
/// §1.5), e.g. `01MAR210000`: the RQFD STDB/STDE convention.
pub fn format_sis_time(t: NaiveDateTime) -> String {
    t.format("%d%b%y%H%M").to_string().to_ascii_uppercase()
}

/// RQRD: request a reference-data snapshot of `rtype` (one of the 23
/// types). STYP and RTYP both carry `rtype` (sis-format §5). `seqn6` is
/// the already zero-padded 6-digit sequence.
pub fn encode_rqrd(sndr: &str, seqn6: &str, dttm: NaiveDateTime, rtype: &str) -> String {
    let mut out = String::with_capacity(320);
    meta(&mut out, sndr, seqn6, dttm, "RQRD", rtype);
    out.push_str("<RQRD><RTYP>");
    out.push_str(&escape(rtype));
    out.push_str("</RTYP></RQRD></MSG>");
    out
}

/// RQFD: request the daily schedule between `stdb` and `stde`, copied
/// verbatim (sis-format §5); STYP is the fixed `NONE`.
pub fn encode_rqfd(sndr: &str, seqn6: &str, dttm: NaiveDateTime, stdb: &str, stde: &str) -> String {
    let mut out = String::with_capacity(340);
    meta(&mut out, sndr, seqn6, dttm, "RQFD", "NONE");
    out.push_str("<RQFD><STDB>");
    out.push_str(&escape(stdb));
    out.push_str("</STDB><STDE>");
    out.push_str(&escape(stde));
    out.push_str("</STDE></RQFD></MSG>");
    out
}

/// The body of an outbound request, as read back by [`decode_request`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum OutboundRequest {
    /// RQRD with its RTYP.
    Rqrd { rtype: Field<String> },
    /// RQFD with its STDB/STDE, as text.
    Rqfd {
        stdb: Field<String>,
        stde: Field<String>,
    },
}

/// Reads an RQRD/RQFD request back. Any other TYPE is Malformed here
/// (this reader is only for requests).
pub fn decode_request(bytes: &[u8]) -> Result<(Meta, OutboundRequest), DecodeError> {
    let src = std::str::from_utf8(bytes).map_err(|e| {
        DecodeError::malformed(
            "(document)",
            format!("not UTF-8 at byte {}", e.valid_up_to()),
        )
    })?;
    xml::check_chars(src)?;
    let doc = xml::parse(src)?;
    let root = doc.root();
    let (meta, _) = envelope(root)?;
    let typ = meta.msg_type.clone();
    let body = root.children().find(|c| c.name() == typ);
    let mut unknown = Vec::new();
    let mut field = |name: &str| -> Result<Field<String>, DecodeError> {
        match body.and_then(|b| b.children().find(|c| c.name() == name)) {
            Some(el) => text_leaf(el, &mut unknown),
            None => Ok(Field::Absent),
        }
    };
    let req = match typ.as_str() {
        "RQRD" => OutboundRequest::Rqrd {
            rtype: field("RTYP")?,
        },
        "RQFD" => OutboundRequest::Rqfd {
            stdb: field("STDB")?,
            stde: field("STDE")?,
        },
        other => {
            return Err(DecodeError::malformed(
                "MSG/META/TYPE",
                format!("expected an outbound request RQRD or RQFD, got {other}"),
            ));
        }
    };
    Ok((meta, req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{MsgKind, decode};
    use chrono::NaiveDate;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .and_then(|x| x.and_hms_opt(h, mi, 0))
            .expect("valid")
    }

    #[test]
    fn rqrd_matches_sis_format_5_byte_for_byte() {
        let want = r#"<?xml version="1.0" encoding="UTF-8"?><MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd"><META><SNDR>VIEW</SNDR><SEQN>000042</SEQN><DTTM>20210301101500</DTTM><TYPE>RQRD</TYPE><STYP>GLST</STYP></META><RQRD><RTYP>GLST</RTYP></RQRD></MSG>"#;
        assert_eq!(
            encode_rqrd("VIEW", "000042", at(2021, 3, 1, 10, 15), "GLST"),
            want
        );
    }

    #[test]
    fn rqfd_matches_sis_format_5_byte_for_byte() {
        let want = r#"<?xml version="1.0" encoding="UTF-8"?><MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd"><META><SNDR>VIEW</SNDR><SEQN>000043</SEQN><DTTM>20210301101600</DTTM><TYPE>RQFD</TYPE><STYP>NONE</STYP></META><RQFD><STDB>01MAR210000</STDB><STDE>02MAR210000</STDE></RQFD></MSG>"#;
        let got = encode_rqfd(
            "VIEW",
            "000043",
            at(2021, 3, 1, 10, 16),
            "01MAR210000",
            "02MAR210000",
        );
        assert_eq!(got, want);
    }

    #[test]
    fn requests_round_trip() {
        let t = at(2026, 12, 1, 7, 5);
        let xml = encode_rqrd("VIEW", "999999", t, "ORGN");
        let (m, r) = decode_request(xml.as_bytes()).expect("rqrd");
        assert_eq!(
            (
                m.sndr.as_str(),
                m.seqn.as_str(),
                m.dttm,
                m.msg_type.as_str(),
                m.styp.as_str()
            ),
            ("VIEW", "999999", Some(t), "RQRD", "ORGN")
        );
        assert_eq!(
            r,
            OutboundRequest::Rqrd {
                rtype: Field::Value("ORGN".into())
            }
        );

        let xml = encode_rqfd("VIEW", "000001", t, "01DEC260000", "a<b&c");
        let (m, r) = decode_request(xml.as_bytes()).expect("rqfd");
        assert_eq!(
            (m.msg_type.as_str(), m.styp.as_str(), m.seqn.as_str()),
            ("RQFD", "NONE", "000001")
        );
        assert_eq!(
            r,
            OutboundRequest::Rqfd {
                stdb: Field::Value("01DEC260000".into()),
                stde: Field::Value("a<b&c".into()),
            }
        );

        // The general decoder accepts them as well-formed and routes them away.
        let m = decode(xml.as_bytes()).expect("decodes");
        assert!(matches!(m.kind, MsgKind::Unsupported(_)));
    }

    #[test]
    fn sis_time_format_reads_back() {
        let t = at(2021, 3, 1, 23, 5);
        let s = format_sis_time(t);
        assert_eq!(s, "01MAR212305");
        assert_eq!(super::super::time::parse_time(&s).expect("parses"), t);
    }

    #[test]
    fn decode_request_refuses_other_types() {
        let e = decode_request(b"<MSG><META><SNDR>A</SNDR><SEQN>1</SEQN><TYPE>GLST</TYPE><STYP>ADD</STYP></META></MSG>")
            .expect_err("not a request");
        assert_eq!(e.class(), "MALFORMED");
    }
}
