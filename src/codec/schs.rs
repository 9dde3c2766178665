//! SCHS, the seasonal schedule (sis-format §1.3, §2.5): one `<SCHS>` under
//! `<MSG>` holding the header `SNAM`, `APCD`, `SDAT`, `EDAT`, then `RECS`
//! and the FLTRs, which are decoded by the same [`fltr`] as a SCHD's (their
//! STDT/EDDT/DYOP/SCHT scalars and `HHMM` route times are already known).
//!
//! As for SCHD, the codec checks only what the format forbids (a repeated
//! header element, an impossible SDAT). Mandatory fields, STDT ≤ EDDT and the
//! other season rules are the domain's (`domain::season`), which rejects the
//! whole package as PROTOCOL.

use super::error::DecodeError;
use super::fields::{extra_attrs, int_leaf, leaf, put, stray_text, text_leaf, unknown_el};
use super::fltr::fltr;
use super::model::{Field, Schs, SchsStyp, UnknownElement};
use super::time;
use super::xml::{El, tag_keys};

tag_keys!(META, SCHS, SNAM, APCD, SDAT, EDAT, RECS, FLTR);

/// Decodes a SCHS body (STYP already checked by the dispatcher). Other
/// children of `<MSG>` besides META are kept as unknown.
pub(crate) fn schs(
    msg: El<'_, '_>,
    styp: SchsStyp,
    mut unknown: Vec<UnknownElement>,
) -> Result<Schs, DecodeError> {
    let mut wrapper = None;
    for c in msg.children() {
        match c.key() {
            META => {}
            SCHS if wrapper.is_some() => {
                return Err(DecodeError::codec(
                    c.path(),
                    "more than one <SCHS> block in one message; this codec version handles one",
                ));
            }
            SCHS => wrapper = Some(c),
            _ => unknown.push(unknown_el(c)),
        }
    }
    let Some(body) = wrapper else {
        return Err(DecodeError::malformed(
            msg.path(),
            "TYPE SCHS without a <SCHS> block (sis-format §1.3)",
        ));
    };
    let mut s = Schs {
        styp,
        snam: Field::Absent,
        apcd: Field::Absent,
        sdat: Field::Absent,
        edat: Field::Absent,
        recs: Field::Absent,
        flights: Vec::with_capacity(body.children().filter(|c| c.key() == FLTR).count()),
        unknown,
    };
    for c in body.children() {
        match c.key() {
            SNAM => {
                let v = text_leaf(c, &mut s.unknown)?;
                put(&mut s.snam, v, c)?;
            }
            APCD => {
                let v = text_leaf(c, &mut s.unknown)?;
                put(&mut s.apcd, v, c)?;
            }
            SDAT => {
                let v = leaf(c, &mut s.unknown, time::parse_date)?;
                put(&mut s.sdat, v, c)?;
            }
            EDAT => {
                let v = leaf(c, &mut s.unknown, time::parse_date)?;
                put(&mut s.edat, v, c)?;
            }
            RECS => {
                let v = int_leaf(c, &mut s.unknown)?;
                put(&mut s.recs, v, c)?;
            }
            FLTR => s.flights.push(fltr(c)?),
            _ => s.unknown.push(unknown_el(c)),
        }
    }
    extra_attrs(body, &[], &mut s.unknown);
    stray_text(body, &mut s.unknown);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::model::{Collection, ScalarTag, ScalarValue};
    use crate::codec::xml::parse;
    use chrono::NaiveDate;

    fn one(xml: &str) -> Result<Schs, DecodeError> {
        let d = parse(xml).expect("xml");
        schs(d.root(), SchsStyp::Dnld, Vec::new())
    }

    #[test]
    fn header_scalars_and_fltrs() {
        let s = one(
            "<MSG><SCHS><SNAM>Winter</SNAM><APCD>CTU</APCD><SDAT>10SEP20</SDAT><EDAT>10JUN21</EDAT>\
             <RECS>1</RECS><FLTR><ALCD>LH</ALCD><STDT>14NOV20</STDT><DYOP>1200560</DYOP><SCHT>1023</SCHT>\
             <ROUT RTNO=\"1\"><APCD>HKG</APCD><SCAT>1125</SCAT></ROUT>\
             <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCDT>14MAR211023</SCDT><SDDC>-2</SDDC></ERUT></FLTR>\
             <ZZZZ/></SCHS></MSG>",
        )
        .expect("ok");
        assert_eq!(s.snam, Field::Value("Winter".into()));
        assert_eq!(s.apcd, Field::Value("CTU".into()));
        assert_eq!(
            s.sdat,
            Field::Value(NaiveDate::from_ymd_opt(2020, 9, 10).unwrap())
        );
        assert_eq!(
            s.edat,
            Field::Value(NaiveDate::from_ymd_opt(2021, 6, 10).unwrap())
        );
        assert_eq!(s.recs, Field::Value(1));
        let f = &s.flights[0];
        assert_eq!(
            f.scalar(ScalarTag::STDT),
            Field::Value(&ScalarValue::Date(
                NaiveDate::from_ymd_opt(2020, 11, 14).unwrap()
            ))
        );
        assert_eq!(
            f.scalar(ScalarTag::SCHT),
            Field::Value(&ScalarValue::Hhmm("1023".into()))
        );
        let Collection::Items(rout) = &f.rout else {
            panic!("rout")
        };
        assert_eq!(rout[0].scat, Field::Value(ScalarValue::Hhmm("1125".into())));
        assert_eq!(f.erut.items()[0].sddc, Field::Value("-2".into()));
        assert_eq!(s.unknown[0].path, "MSG/SCHS/ZZZZ");
    }

    #[test]
    fn format_errors_name_the_element() {
        let e = one("<MSG><SCHS><SDAT>31FEB21</SDAT></SCHS></MSG>").expect_err("date");
        assert_eq!(e.class(), "MALFORMED");
        assert!(e.to_string().contains("MSG/SCHS/SDAT"), "{e}");
        let e = one("<MSG><SCHS><SNAM>A</SNAM><SNAM>B</SNAM></SCHS></MSG>").expect_err("dup");
        assert!(e.to_string().contains("more than once"), "{e}");
        let e = one("<MSG><SCHS/><SCHS/></MSG>").expect_err("two");
        assert_eq!(e.class(), "CODEC_ERROR");
        let e = one("<MSG><RECS>1</RECS></MSG>").expect_err("none");
        assert_eq!(e.class(), "MALFORMED");
        let e = one("<MSG><SCHS><FLTR><SCHT>2460</SCHT></FLTR></SCHS></MSG>").expect_err("hhmm");
        assert!(e.to_string().contains("FLTR/SCHT"), "{e}");
    }
}
