//! FLOP handlers for the scalar subtypes (sis-format §3.3, design §12.2, INV-20).
//!
//! One clear rule (sis-format §3.2): a value sets; an empty or self-closing
//! element clears; an **absent** element also clears (the TOBT sample clears
//! by omission). Exceptions, all documented in docs/domain.md:
//! * ACFT, FLIN, FLTY are mandatory schedule fields: absent or empty →
//!   rejected (they cannot be cleared);
//! * EXSS: EXSC absent → rejected; EXSC empty clears EXSC and EXSR;
//! * TAOP: unless TAOP, TAFL and TAID all carry values, all three are cleared;
//! * FDIV/FRET/FLAB: absent or empty clears the object; invalid codes reject.

use chrono::NaiveDateTime;

use crate::codec::{Diversion, Field, LandingAbort, Return, ScalarTag};
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightState, FlightValue};

use super::apply::{OnAbsent, apply_scalar};
use super::convert::{Conv, FLIN_CODES, code};

type Res = Result<(), DomainError>;

/// Clearable time scalar: value sets, empty/absent clears.
fn time(st: &mut FlightState, cx: Conv<'_>, tag: ScalarTag, f: &Field<NaiveDateTime>) -> Res {
    apply_scalar(st, tag, f.as_ref().map(|t| cx.at(*t)), OnAbsent::Clear);
    Ok(())
}

/// Clearable text scalar: value sets, empty/absent clears.
fn text(st: &mut FlightState, tag: ScalarTag, f: &Field<String>) -> Res {
    apply_scalar(
        st,
        tag,
        f.as_ref().map(|v| FlightValue::Text(v.clone())),
        OnAbsent::Clear,
    );
    Ok(())
}

/// Clearable integer scalar: value sets, empty/absent clears.
fn int(st: &mut FlightState, tag: ScalarTag, f: &Field<i64>) -> Res {
    apply_scalar(
        st,
        tag,
        f.as_ref().map(|v| FlightValue::Int(*v)),
        OnAbsent::Clear,
    );
    Ok(())
}

/// Mandatory text scalar (cannot be cleared): absent or empty → rejected.
fn mandatory(
    st: &mut FlightState,
    tag: ScalarTag,
    f: &Field<String>,
) -> Result<String, DomainError> {
    let v = f.value().cloned().ok_or(DomainError::Missing {
        field: tag.name(),
        context: "this FLOP cannot clear its field (sis-format §3.3)",
    })?;
    st.set_scalar(tag, Some(FlightValue::Text(v.clone())));
    Ok(v)
}

/// ACFT: set aircraft type; cannot be cleared.
pub fn acft(st: &mut FlightState, f: &Field<String>) -> Res {
    mandatory(st, ScalarTag::ACFT, f).map(|_| ())
}
/// APPT: set approved time; empty/absent clears.
pub fn appt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::APPT, f)
}
/// BOTM: set boarding-open time; empty/absent clears.
pub fn botm(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::BOTM, f)
}
/// CNCL: set cancellation time (flight kept); empty/absent clears (reinstates).
pub fn cncl(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::CNCL, f)
}
/// COBT: set calculated off-block; empty/absent clears.
pub fn cobt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::COBT, f)
}
/// CTOT: set calculated take-off; empty/absent clears.
pub fn ctot(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::CTOT, f)
}
/// EGSR: set engine-start request; empty/absent clears.
pub fn egsr(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::EGSR, f)
}
/// EGST: set engine start; empty/absent clears.
pub fn egst(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::EGST, f)
}
/// EOBT: set estimated off-block; empty/absent clears.
pub fn eobt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::EOBT, f)
}
/// FINT: set final-call time; empty/absent clears.
pub fn fint(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::FINT, f)
}
/// IEST: set internal estimate; empty/absent clears.
pub fn iest(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::IEST, f)
}
/// LACL: set last-call time; empty/absent clears.
pub fn lacl(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::LACL, f)
}
/// NAAT: set next-station actual time; empty/absent clears.
pub fn naat(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::NAAT, f)
}
/// NEAT: set next-station estimated time; empty/absent clears.
pub fn neat(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::NEAT, f)
}
/// PADT: set previous-station actual time; `<PADT/>` clears.
pub fn padt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::PADT, f)
}
/// PEDT: set previous-station estimated time; empty/absent clears.
pub fn pedt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::PEDT, f)
}
/// TOBT: set target off-block; empty/absent clears (the sample omits TOBT).
pub fn tobt(st: &mut FlightState, cx: Conv<'_>, f: &Field<NaiveDateTime>) -> Res {
    time(st, cx, ScalarTag::TOBT, f)
}
/// FLIN: set D/I/M; cannot be cleared; other codes rejected.
pub fn flin(st: &mut FlightState, f: &Field<String>) -> Res {
    if let Field::Value(v) = f {
        code("FLIN", v, FLIN_CODES)?;
    }
    mandatory(st, ScalarTag::FLIN, f).map(|_| ())
}
/// FLTY: set flight type; cannot be cleared.
pub fn flty(st: &mut FlightState, f: &Field<String>) -> Res {
    mandatory(st, ScalarTag::FLTY, f).map(|_| ())
}
/// FTSS: set flight status code; empty/absent clears.
pub fn ftss(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::FTSS, f)
}
/// MAXP: set maximum passengers; empty/absent clears.
pub fn maxp(st: &mut FlightState, f: &Field<i64>) -> Res {
    int(st, ScalarTag::MAXP, f)
}
/// REMC: set remark; empty/absent clears.
pub fn remc(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::REMC, f)
}
/// RENO: set registration; empty/absent clears.
pub fn reno(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::RENO, f)
}
/// RUNW: set logical runway; empty/absent clears.
pub fn runw(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::RUNW, f)
}
/// STND: set current stand; empty/absent clears.
pub fn stnd(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::STND, f)
}
/// TRML: set terminal; empty/absent clears.
pub fn trml(st: &mut FlightState, f: &Field<String>) -> Res {
    text(st, ScalarTag::TRML, f)
}

/// EXSS: set EXSC + EXSR. EXSC absent → rejected; EXSC empty clears both;
/// with an EXSC value, EXSR follows the scalar rule (absent/empty clears).
pub fn exss(st: &mut FlightState, exsc: &Field<String>, exsr: &Field<String>) -> Res {
    match exsc {
        Field::Absent => Err(DomainError::Missing {
            field: "EXSC",
            context: "EXSS needs EXSC (sis-format §3.3)",
        }),
        Field::Empty => {
            st.set_scalar(ScalarTag::EXSC, None);
            st.set_scalar(ScalarTag::EXSR, None);
            Ok(())
        }
        Field::Value(_) => {
            text(st, ScalarTag::EXSC, exsc)?;
            text(st, ScalarTag::EXSR, exsr)
        }
    }
}

/// HNAG: set FHAG, PHAG, MHAG; each empty (or absent) one is cleared on its own.
pub fn hnag(st: &mut FlightState, fhag: &Field<i64>, phag: &Field<i64>, mhag: &Field<i64>) -> Res {
    int(st, ScalarTag::FHAG, fhag)?;
    int(st, ScalarTag::PHAG, phag)?;
    int(st, ScalarTag::MHAG, mhag)
}

/// VIPP: set VIPP and VIPR; each empty (or absent) one is cleared on its own.
pub fn vipp(st: &mut FlightState, vipp: &Field<i64>, vipr: &Field<i64>) -> Res {
    int(st, ScalarTag::VIPP, vipp)?;
    int(st, ScalarTag::VIPR, vipr)
}

/// TAOP: set the turnaround link TAOP/TAFL/TAID; unless all three carry a
/// value, all three are cleared (unlink).
pub fn taop(
    st: &mut FlightState,
    taop: &Field<String>,
    tafl: &Field<String>,
    taid: &Field<i64>,
) -> Res {
    match (taop.value(), tafl.value(), taid.value()) {
        (Some(op), Some(fl), Some(id)) => {
            st.set_scalar(ScalarTag::TAOP, Some(FlightValue::Text(op.clone())));
            st.set_scalar(ScalarTag::TAFL, Some(FlightValue::Text(fl.clone())));
            st.set_scalar(ScalarTag::TAID, Some(FlightValue::Int(*id)));
        }
        _ => {
            st.set_scalar(ScalarTag::TAOP, None);
            st.set_scalar(ScalarTag::TAFL, None);
            st.set_scalar(ScalarTag::TAID, None);
        }
    }
    Ok(())
}

/// FDIV: set diversion DDES/DDIR/reason. Absent, empty or DDES empty clears
/// all three; DDIR must be TO/FROM (mandatory with DDES).
pub fn fdiv(st: &mut FlightState, cx: Conv<'_>, f: &Field<Diversion>) -> Res {
    st.fdiv = match f {
        Field::Value(d) => cx.diversion(d)?,
        _ => None,
    };
    Ok(())
}

/// FRET: set return REID + reason; absent/empty clears; REID must be A/G.
pub fn fret(st: &mut FlightState, cx: Conv<'_>, f: &Field<Return>) -> Res {
    st.fret = match f {
        Field::Value(r) => Some(cx.ret(r)?),
        _ => None,
    };
    Ok(())
}

/// FLAB: set landing abort ARES + reason; absent/empty clears; ARES must be O/G.
pub fn flab(st: &mut FlightState, cx: Conv<'_>, f: &Field<LandingAbort>) -> Res {
    st.flab = match f {
        Field::Value(a) => Some(cx.abort(a)?),
        _ => None,
    };
    Ok(())
}
