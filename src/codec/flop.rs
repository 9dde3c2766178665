//! FLOP single-flight updates and FDEL (sis-format §3).
//!
//! One `<FLOP>` per message (several → Codec error: the legacy loop over
//! blocks is not reproduced, sis-format §1.3, §7.3). FLID is mandatory
//! (Malformed without it); FFID is kept as text and never parsed (§2.2).
//! The payload is read from the element(s) the STYP names (§3.1: EXSS →
//! EXSC+EXSR, HNAG → FHAG+PHAG+MHAG, TAOP → TAOP+TAFL+TAID, VIPP →
//! VIPP+VIPR); a payload element not sent is `Absent` (the TOBT sample
//! clears by omission). Other elements are kept in `unknown`.
//!
//! FDEL deletes a flight, so it is read strictly: anything besides FLID,
//! FFID and FDEL is Malformed rather than ignored.

use chrono::NaiveDateTime;

use super::error::DecodeError;
use super::fields::{
    duplicate, extra_attrs, int_leaf, put, stray_text, text_leaf, time_leaf, unknown_el,
};
use super::groups::{
    airbridge_event, carousel_alloc, chock_event, chute_alloc, collect, counter_alloc, delay,
    diversion, door_event, gate_alloc, landing_abort, push_event, ret, route_point, service,
    stand_alloc, tractor_event, vip,
};
use super::model::{Fdel, Field, Flop, FlopPayload, MsgKind, UnknownElement};
use super::xml::El;

/// Whether `name` is a payload element of FLOP subtype `styp` (sis-format §3.1).
fn is_payload(styp: &str, name: &str) -> bool {
    match styp {
        "EXSS" => matches!(name, "EXSC" | "EXSR"),
        "HNAG" => matches!(name, "FHAG" | "PHAG" | "MHAG"),
        "TAOP" => matches!(name, "TAOP" | "TAFL" | "TAID"),
        "VIPP" => matches!(name, "VIPP" | "VIPR"),
        _ => name == styp,
    }
}

/// The payload elements found, in message order.
struct Found<'d, 'a> {
    els: Vec<El<'d, 'a>>,
}

impl<'d, 'a> Found<'d, 'a> {
    fn all(&self, name: &str) -> Vec<El<'d, 'a>> {
        self.els.iter().copied().filter(|e| e.is(name)).collect()
    }

    /// The single element `name`, refusing a second one.
    fn single(&self, name: &str) -> Result<Option<El<'d, 'a>>, DecodeError> {
        let mut it = self.els.iter().copied().filter(|e| e.is(name));
        let first = it.next();
        match it.next() {
            Some(second) => Err(duplicate(second)),
            None => Ok(first),
        }
    }

    fn field<T>(
        &self,
        name: &str,
        unknown: &mut Vec<UnknownElement>,
        read: impl FnOnce(El<'d, 'a>, &mut Vec<UnknownElement>) -> Result<Field<T>, DecodeError>,
    ) -> Result<Field<T>, DecodeError> {
        match self.single(name)? {
            Some(e) => read(e, unknown),
            None => Ok(Field::Absent),
        }
    }

    fn time(
        &self,
        name: &str,
        unknown: &mut Vec<UnknownElement>,
    ) -> Result<Field<NaiveDateTime>, DecodeError> {
        self.field(name, unknown, time_leaf)
    }

    fn text(
        &self,
        name: &str,
        unknown: &mut Vec<UnknownElement>,
    ) -> Result<Field<String>, DecodeError> {
        self.field(name, unknown, text_leaf)
    }

    fn int(
        &self,
        name: &str,
        unknown: &mut Vec<UnknownElement>,
    ) -> Result<Field<i64>, DecodeError> {
        self.field(name, unknown, int_leaf)
    }
}

/// Decodes a FLOP message whose STYP is one of the 48 subtypes (the caller
/// sends unknown subtypes to Unsupported). `unknown` holds what the
/// envelope already set aside (unknown META children).
pub(crate) fn flop(
    msg: El<'_, '_>,
    styp: &str,
    mut unknown: Vec<UnknownElement>,
) -> Result<MsgKind, DecodeError> {
    let mut block = None;
    for c in msg.children() {
        match c.name() {
            "META" => {}
            "FLOP" if block.is_some() => {
                return Err(DecodeError::codec(
                    c.path(),
                    "more than one <FLOP> block in one message; this codec version handles one",
                ));
            }
            "FLOP" => block = Some(c),
            _ => unknown.push(unknown_el(c)),
        }
    }
    let Some(block) = block else {
        return Err(DecodeError::malformed(
            msg.path(),
            format!("TYPE FLOP/{styp} without a <FLOP> block (sis-format §3.1)"),
        ));
    };

    let mut flid = Field::Absent;
    let mut ffid = Field::Absent;
    let mut found = Found { els: Vec::new() };
    for c in block.children() {
        match c.name() {
            "FLID" => {
                let v = int_leaf(c, &mut unknown)?;
                put(&mut flid, v, c)?;
            }
            "FFID" => {
                let v = text_leaf(c, &mut unknown)?;
                put(&mut ffid, v, c)?;
            }
            n if is_payload(styp, n) => found.els.push(c),
            _ => unknown.push(unknown_el(c)),
        }
    }
    extra_attrs(block, &[], &mut unknown);
    stray_text(block, &mut unknown);
    let Field::Value(flid) = flid else {
        return Err(DecodeError::malformed(
            format!("{}/FLID", block.path()),
            if flid.is_present() {
                "FLID is empty; every FLOP names its flight (sis-format §2.2)"
            } else {
                "FLOP without FLID; every FLOP names its flight (sis-format §2.2)"
            },
        ));
    };

    if styp == "FDEL" {
        if let Some(u) = unknown.first() {
            return Err(DecodeError::malformed(
                u.path.clone(),
                format!(
                    "unexpected {} in an FDEL message: FDEL carries only FLID, FFID and an empty <FDEL/> \
                     (sis-format §3.2)",
                    u.name
                ),
            ));
        }
        let fdel_empty = match found.single("FDEL")? {
            Some(e) => e.is_bare(),
            None => false,
        };
        return Ok(MsgKind::Fdel(Fdel {
            flid,
            ffid,
            fdel_empty,
        }));
    }

    let payload = payload(styp, &found, &mut unknown)?;
    Ok(MsgKind::Flop(Flop {
        flid,
        ffid,
        payload,
        unknown,
    }))
}

fn payload(
    styp: &str,
    f: &Found<'_, '_>,
    unk: &mut Vec<UnknownElement>,
) -> Result<FlopPayload, DecodeError> {
    use FlopPayload as P;
    let all = |n: &str| f.all(n);
    Ok(match styp {
        "ABTM" => P::ABTM(collect(&all("ABTM"), airbridge_event)?),
        "ACFT" => P::ACFT(f.text("ACFT", unk)?),
        "APPT" => P::APPT(f.time("APPT", unk)?),
        "BOTM" => P::BOTM(f.time("BOTM", unk)?),
        "CHDT" => P::CHDT(collect(&all("CHDT"), chute_alloc)?),
        "CHOT" => P::CHOT(collect(&all("CHOT"), chock_event)?),
        "CKDT" => P::CKDT(collect(&all("CKDT"), counter_alloc)?),
        "CLDT" => P::CLDT(collect(&all("CLDT"), carousel_alloc)?),
        "CNCL" => P::CNCL(f.time("CNCL", unk)?),
        "COBT" => P::COBT(f.time("COBT", unk)?),
        "CTOT" => P::CTOT(f.time("CTOT", unk)?),
        "DELY" => P::DELY(collect(&all("DELY"), |e| delay(e, unk))?),
        "EGSR" => P::EGSR(f.time("EGSR", unk)?),
        "EGST" => P::EGST(f.time("EGST", unk)?),
        "EOBT" => P::EOBT(f.time("EOBT", unk)?),
        "ERUT" => P::ERUT(collect(&all("ERUT"), route_point)?),
        "EXSS" => P::EXSS {
            exsc: f.text("EXSC", unk)?,
            exsr: f.text("EXSR", unk)?,
        },
        "FDIV" => P::FDIV(f.field("FDIV", unk, |e, u| Ok(diversion(e, u)))?),
        "FINT" => P::FINT(f.time("FINT", unk)?),
        "FLAB" => P::FLAB(f.field("FLAB", unk, |e, u| Ok(landing_abort(e, u)))?),
        "FLIN" => P::FLIN(f.text("FLIN", unk)?),
        "FLTY" => P::FLTY(f.text("FLTY", unk)?),
        "FRET" => P::FRET(f.field("FRET", unk, |e, u| Ok(ret(e, u)))?),
        "FTSS" => P::FTSS(f.text("FTSS", unk)?),
        "GTDT" => P::GTDT(collect(&all("GTDT"), gate_alloc)?),
        "HNAG" => P::HNAG {
            fhag: f.int("FHAG", unk)?,
            phag: f.int("PHAG", unk)?,
            mhag: f.int("MHAG", unk)?,
        },
        "IEST" => P::IEST(f.time("IEST", unk)?),
        "LACL" => P::LACL(f.time("LACL", unk)?),
        "MAXP" => P::MAXP(f.int("MAXP", unk)?),
        "NAAT" => P::NAAT(f.time("NAAT", unk)?),
        "NEAT" => P::NEAT(f.time("NEAT", unk)?),
        "PADT" => P::PADT(f.time("PADT", unk)?),
        "PEDT" => P::PEDT(f.time("PEDT", unk)?),
        "PORT" => P::PORT(collect(&all("PORT"), door_event)?),
        "PSDT" => P::PSDT(collect(&all("PSDT"), stand_alloc)?),
        "PSHT" => P::PSHT(collect(&all("PSHT"), push_event)?),
        "REMC" => P::REMC(f.text("REMC", unk)?),
        "RENO" => P::RENO(f.text("RENO", unk)?),
        "RUNW" => P::RUNW(f.text("RUNW", unk)?),
        "SRVT" => P::SRVT(collect(&all("SRVT"), service)?),
        "STND" => P::STND(f.text("STND", unk)?),
        "TAOP" => P::TAOP {
            taop: f.text("TAOP", unk)?,
            tafl: f.text("TAFL", unk)?,
            taid: f.int("TAID", unk)?,
        },
        "TIPT" => P::TIPT(collect(&all("TIPT"), tractor_event)?),
        "TOBT" => P::TOBT(f.time("TOBT", unk)?),
        "TRML" => P::TRML(f.text("TRML", unk)?),
        "VIPF" => P::VIPF(collect(&all("VIPF"), vip)?),
        "VIPP" => P::VIPP {
            vipp: f.int("VIPP", unk)?,
            vipr: f.int("VIPR", unk)?,
        },
        other => {
            // The caller dispatches only the 48 subtypes; reaching this is a
            // codec bug, reported as a retryable codec error.
            return Err(DecodeError::codec(
                "MSG/META/STYP",
                format!("FLOP subtype {other} has no payload decoder in this codec version"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::model::{Collection, FLOP_SUBTYPES};
    use crate::codec::xml::parse;

    fn run(styp: &str, body: &str) -> Result<MsgKind, DecodeError> {
        let xml = format!("<MSG><META/><FLOP>{body}</FLOP></MSG>");
        let d = parse(&xml).expect("xml");
        flop(d.root(), styp, Vec::new())
    }

    fn payload_of(k: MsgKind) -> FlopPayload {
        match k {
            MsgKind::Flop(f) => f.payload,
            other => panic!("not a flop: {other:?}"),
        }
    }

    #[test]
    fn every_subtype_has_a_decoder() {
        for styp in FLOP_SUBTYPES {
            let k = run(styp, "<FLID>1</FLID>").unwrap_or_else(|e| panic!("{styp}: {e}"));
            match (styp, k) {
                ("FDEL", MsgKind::Fdel(d)) => assert!(!d.fdel_empty),
                ("FDEL", other) => panic!("FDEL gave {other:?}"),
                (_, MsgKind::Flop(f)) => assert_eq!(f.flid, 1),
                (_, other) => panic!("{styp} gave {other:?}"),
            }
        }
    }

    #[test]
    fn flid_is_mandatory_and_numeric() {
        let e = run("APPT", "<APPT/>").expect_err("no flid");
        assert_eq!(e.class(), "MALFORMED");
        assert!(e.to_string().contains("MSG/FLOP/FLID"), "{e}");
        let e = run("APPT", "<FLID></FLID>").expect_err("empty flid");
        assert!(e.to_string().contains("FLID is empty"), "{e}");
        let e = run("APPT", "<FLID>1x</FLID>").expect_err("bad flid");
        assert_eq!(
            e,
            DecodeError::malformed("MSG/FLOP/FLID", "expected an integer, got \"1x\"")
        );
    }

    #[test]
    fn multi_field_payloads_and_unknowns() {
        let p = payload_of(
            run("HNAG", "<FLID>1</FLID><FHAG>7</FHAG><PHAG/><STND>9</STND>").expect("ok"),
        );
        assert_eq!(
            p,
            FlopPayload::HNAG {
                fhag: Field::Value(7),
                phag: Field::Empty,
                mhag: Field::Absent
            }
        );
        let k = run(
            "TAOP",
            "<FLID>1</FLID><TAOP>YG</TAOP><TAFL>YG1</TAFL><TAID>16</TAID><X/>",
        )
        .expect("ok");
        let MsgKind::Flop(f) = k else { panic!("flop") };
        assert_eq!(f.unknown.len(), 1);
        assert_eq!(f.unknown[0].path, "MSG/FLOP/X");
    }

    #[test]
    fn duplicate_payload_and_multiple_blocks() {
        let e = run("APPT", "<FLID>1</FLID><APPT/><APPT/>").expect_err("dup");
        assert!(e.to_string().contains("MSG/FLOP/APPT[2]"), "{e}");
        let d = parse("<MSG><FLOP><FLID>1</FLID></FLOP><FLOP><FLID>2</FLID></FLOP></MSG>")
            .expect("xml");
        let e = flop(d.root(), "APPT", Vec::new()).expect_err("two blocks");
        assert_eq!(e.class(), "CODEC_ERROR");
        assert!(e.to_string().contains("MSG/FLOP[2]"), "{e}");
    }

    #[test]
    fn fdel_forms() {
        let MsgKind::Fdel(d) = run("FDEL", "<FLID>9</FLID><FDEL/>").expect("ok") else {
            panic!()
        };
        assert!(d.fdel_empty);
        let MsgKind::Fdel(d) = run("FDEL", "<FLID>9</FLID><FDEL>x</FDEL>").expect("ok") else {
            panic!()
        };
        assert!(!d.fdel_empty);
        let e = run("FDEL", "<FLID>9</FLID><FDEL/><STND>1</STND>").expect_err("extra");
        assert!(e.to_string().contains("MSG/FLOP/STND"), "{e}");
    }

    #[test]
    fn collections_in_flop() {
        let p = payload_of(run("SRVT", "<FLID>1</FLID><SRVT></SRVT>").expect("ok"));
        assert_eq!(p, FlopPayload::SRVT(Collection::ClearAll));
        let p = payload_of(
            run(
                "PSHT",
                r#"<FLID>1</FLID><PSHT PSHN="2"><PSTM>01DEC261000</PSTM><PSID>IN</PSID></PSHT>"#,
            )
            .expect("ok"),
        );
        let FlopPayload::PSHT(c) = p else { panic!() };
        assert_eq!(c.items()[0].seq, Some(2));
    }
}
