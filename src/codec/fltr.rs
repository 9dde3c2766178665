//! SCHD messages and their FLTR flight records (sis-format §2.1–§2.4).
//!
//! The codec checks only what the format itself forbids (a repeated
//! single element, a non-integer FLID, an impossible time). Mandatory-field
//! checks (FLID, ALCD, FLNO… for SCHD) belong to the domain, which skips
//! the one FLTR rather than the whole message (sis-format §2.1).

use super::error::DecodeError;
use super::fields::{
    duplicate, extra_attrs, int_leaf, leaf, parse_scalar, put, stray_text, unknown_el,
};
use super::groups::{
    Group, airbridge_event, carousel_alloc, chock_event, chute_alloc, counter_alloc, delay,
    diversion, door_event, gate_alloc, landing_abort, push_event, ret, route_point, service,
    stand_alloc, tractor_event, vip,
};
use super::model::{Field, Fltr, ScalarTag, Schd, SchdStyp, UnknownElement};
use super::xml::{self, El, tag_keys};
use std::ops::Range;

/// Which records (by index, from 0) a windowed decode keeps, and how many
/// the message has (set by the decode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub range: Range<usize>,
    pub total: usize,
}

tag_keys!(
    FDIV, FRET, FLAB, ROUT, ERUT, PSDT, GTDT, CKDT, CLDT, CHDT, CHOT, ABTM, DELY, SRVT, VIPF, PORT,
    TIPT, PSHT, META, SCHD, RECS, FLTR,
);

// One bit per scalar tag tracks "already sent" without a search.
const _: () = assert!(ScalarTag::ALL.len() <= 64);

/// Decodes one `<FLTR>` in a single pass over its children.
pub(crate) fn fltr(el: El<'_, '_>) -> Result<Fltr, DecodeError> {
    let mut f = Fltr {
        scalars: Vec::with_capacity(24),
        ..Fltr::default()
    };
    let mut seen: u64 = 0;
    let (mut rout, mut erut) = (Group::new(), Group::new());
    let (mut psdt, mut gtdt, mut ckdt) = (Group::new(), Group::new(), Group::new());
    let (mut cldt, mut chdt, mut chot) = (Group::new(), Group::new(), Group::new());
    let (mut abtm, mut dely, mut srvt) = (Group::new(), Group::new(), Group::new());
    let (mut vipf, mut port, mut tipt) = (Group::new(), Group::new(), Group::new());
    let mut psht = Group::new();
    let mut dely_unknown: Vec<UnknownElement> = Vec::new();
    for c in el.children() {
        let key = c.key();
        if let Some(tag) = ScalarTag::from_key(key) {
            let bit = 1u64 << (tag as u32);
            if seen & bit != 0 {
                return Err(duplicate(c));
            }
            seen |= bit;
            let kind = tag.kind();
            let v = leaf(c, &mut f.unknown, |s| parse_scalar(kind, s))?;
            f.scalars.push((tag, v));
            continue;
        }
        match key {
            FDIV => {
                let v = diversion(c, &mut f.unknown);
                put(&mut f.fdiv, v, c)?;
            }
            FRET => {
                let v = ret(c, &mut f.unknown);
                put(&mut f.fret, v, c)?;
            }
            FLAB => {
                let v = landing_abort(c, &mut f.unknown);
                put(&mut f.flab, v, c)?;
            }
            ROUT => rout.push(c, route_point)?,
            ERUT => erut.push(c, route_point)?,
            PSDT => psdt.push(c, stand_alloc)?,
            GTDT => gtdt.push(c, gate_alloc)?,
            CKDT => ckdt.push(c, counter_alloc)?,
            CLDT => cldt.push(c, carousel_alloc)?,
            CHDT => chdt.push(c, chute_alloc)?,
            CHOT => chot.push(c, chock_event)?,
            ABTM => abtm.push(c, airbridge_event)?,
            DELY => dely.push(c, |e| delay(e, &mut dely_unknown))?,
            SRVT => srvt.push(c, service)?,
            VIPF => vipf.push(c, vip)?,
            PORT => port.push(c, door_event)?,
            TIPT => tipt.push(c, tractor_event)?,
            PSHT => psht.push(c, push_event)?,
            _ => f.unknown.push(unknown_el(c)),
        }
    }
    f.rout = rout.finish();
    f.erut = erut.finish();
    f.psdt = psdt.finish();
    f.gtdt = gtdt.finish();
    f.ckdt = ckdt.finish();
    f.cldt = cldt.finish();
    f.chdt = chdt.finish();
    f.chot = chot.finish();
    f.abtm = abtm.finish();
    f.dely = dely.finish();
    f.srvt = srvt.finish();
    f.vipf = vipf.finish();
    f.port = port.finish();
    f.tipt = tipt.finish();
    f.psht = psht.finish();
    f.unknown.append(&mut dely_unknown);
    extra_attrs(el, &[], &mut f.unknown);
    stray_text(el, &mut f.unknown);
    Ok(f)
}

/// Decodes a SCHD message body: exactly one `<SCHD>` under `<MSG>` holding
/// `RECS` then the FLTRs (sis-format §1.3). Other children of `<MSG>`
/// (besides META) are kept as unknown, after what the envelope set aside.
/// With a `window`, only the FLTRs whose index is in it are decoded (the
/// others are counted into it): a view of a large package.
pub(crate) fn schd(
    msg: El<'_, '_>,
    styp: &str,
    mut unknown: Vec<UnknownElement>,
    window: Option<&mut Window>,
) -> Result<Schd, DecodeError> {
    let mut wrapper = None;
    for c in msg.children() {
        match c.key() {
            META => {}
            SCHD if wrapper.is_some() => {
                return Err(DecodeError::codec(
                    c.path(),
                    "more than one <SCHD> block in one message; this codec version handles one",
                ));
            }
            SCHD => wrapper = Some(c),
            _ => unknown.push(unknown_el(c)),
        }
    }
    let Some(body) = wrapper else {
        return Err(DecodeError::malformed(
            msg.path(),
            "TYPE SCHD without a <SCHD> block (sis-format §1.3)",
        ));
    };
    let mut recs = Field::Absent;
    // Sized once: regrowing a list of ~1 KB records copies them all.
    let count = body.children().filter(|c| c.key() == FLTR).count();
    let mut flights = Vec::with_capacity(window.as_ref().map_or(count, |w| {
        w.range.end.min(count).saturating_sub(w.range.start)
    }));
    let mut index = 0;
    for c in body.children() {
        match c.key() {
            RECS => {
                let v = int_leaf(c, &mut unknown)?;
                put(&mut recs, v, c)?;
            }
            FLTR => {
                index += 1;
                if window
                    .as_ref()
                    .is_some_and(|w| !w.range.contains(&(index - 1)))
                {
                    continue;
                }
                if c.pruned() {
                    // Two-level parse (large messages): this FLTR's elements
                    // are parsed now, alone, and dropped after decoding.
                    let doc = xml::parse_fragment(c.raw(), c.path())?;
                    flights.push(fltr(doc.root())?);
                } else {
                    flights.push(fltr(c)?);
                }
            }
            _ => unknown.push(unknown_el(c)),
        }
    }
    if let Some(w) = window {
        w.total = count;
    }
    extra_attrs(body, &[], &mut unknown);
    stray_text(body, &mut unknown);
    Ok(Schd {
        styp: match styp {
            "DNLD" => SchdStyp::Dnld,
            "RESP" => SchdStyp::Resp,
            "ADFT" => SchdStyp::Adft,
            "DEL" => SchdStyp::Del,
            other => SchdStyp::Other(other.to_owned()),
        },
        recs,
        flights,
        unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::model::{Collection, ScalarValue};
    use crate::codec::xml::parse;

    fn one(xml: &str) -> Result<Fltr, DecodeError> {
        let d = parse(xml).expect("xml");
        fltr(d.root())
    }

    #[test]
    fn scalars_keep_order_and_kinds() {
        let f = one("<FLTR><FLID>15</FLID><ALCD>YG</ALCD><SODT>23jan210535</SODT><LBWT>12.5</LBWT><RENO/></FLTR>")
            .expect("ok");
        let tags: Vec<_> = f.scalars.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            tags,
            [
                ScalarTag::FLID,
                ScalarTag::ALCD,
                ScalarTag::SODT,
                ScalarTag::LBWT,
                ScalarTag::RENO
            ]
        );
        assert_eq!(
            f.scalar(ScalarTag::FLID),
            Field::Value(&ScalarValue::Int(15))
        );
        assert_eq!(
            f.scalar(ScalarTag::LBWT),
            Field::Value(&ScalarValue::Decimal("12.5".into()))
        );
        assert_eq!(f.scalar(ScalarTag::RENO), Field::Empty);
        assert_eq!(f.scalar(ScalarTag::ACFT), Field::Absent);
    }

    #[test]
    fn repeated_scalar_is_malformed_with_path() {
        let e = one("<FLTR><STND>1</STND><STND>2</STND></FLTR>").expect_err("dup");
        assert_eq!(e.class(), "MALFORMED");
        assert!(e.to_string().contains("FLTR/STND[2]"), "{e}");
    }

    #[test]
    fn bad_values_carry_their_path() {
        let e = one("<FLTR><FLID>x15</FLID></FLTR>").expect_err("bad");
        assert_eq!(
            e,
            DecodeError::malformed("FLTR/FLID", "expected an integer, got \"x15\"")
        );
        let e = one("<FLTR><SODT>2021-01-23T05:35</SODT></FLTR>").expect_err("bad");
        assert_eq!(e.class(), "CODEC_ERROR");
        let e = one(r#"<FLTR><ROUT RTNO="a"/></FLTR>"#).expect_err("bad");
        assert_eq!(
            e,
            DecodeError::malformed(
                "FLTR/ROUT/@RTNO",
                "sequence RTNO must be a number, got \"a\""
            )
        );
    }

    #[test]
    fn groups_clear_all_vs_items() {
        let f = one("<FLTR><DELY></DELY><SRVT/><SRVT></SRVT></FLTR>").expect("ok");
        assert_eq!(f.dely, Collection::ClearAll);
        assert_eq!(f.srvt, Collection::ClearAll);
        assert_eq!(f.gtdt, Collection::Absent);
        let f = one(r#"<FLTR><DELY CODE="A" DURA="0130"/><DELY/></FLTR>"#).expect("ok");
        let items = f.dely.items();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].dura_minutes, Field::Value(90));
        assert_eq!(items[1].code, Field::Absent);
    }

    #[test]
    fn attributed_elements_and_unknowns() {
        let f = one(r#"<FLTR><FDIV DDES="PEK" DDIR="TOO">fog</FDIV><FRET/><XYZZ>1</XYZZ><DELY CODE="A" ODD="1"/></FLTR>"#)
            .expect("ok");
        let d = f.fdiv.value().expect("fdiv");
        assert_eq!(d.ddir, Field::Value("TOO".into()));
        assert_eq!(d.reason, Field::Value("fog".into()));
        assert_eq!(f.fret, Field::Empty);
        assert_eq!(f.flab, Field::Absent);
        let paths: Vec<_> = f.unknown.iter().map(|u| u.path.as_str()).collect();
        assert_eq!(paths, ["FLTR/XYZZ", "FLTR/DELY/@ODD"]);
        assert_eq!(f.unknown[0].raw, "<XYZZ>1</XYZZ>");
    }
}
