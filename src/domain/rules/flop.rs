//! FLOP dispatch: one explicit handler per subtype (sis-format §3.3, design
//! §12.2, INV-20). A handler changes only the fields its subtype names
//! ([`touched_fields`]); the engine decides unknown/DELETED flights (no-match)
//! and unchanged results (no-change) around it.

use crate::codec::FlopPayload;
use crate::domain::error::DomainError;
use crate::domain::flight_state::FlightState;

use super::convert::Conv;
use super::flop_collections as c;
use super::flop_scalars as s;

/// The STYP of a payload.
pub fn subtype(p: &FlopPayload) -> &'static str {
    use FlopPayload as P;
    match p {
        P::ABTM(_) => "ABTM",
        P::ACFT(_) => "ACFT",
        P::APPT(_) => "APPT",
        P::BOTM(_) => "BOTM",
        P::CHDT(_) => "CHDT",
        P::CHOT(_) => "CHOT",
        P::CKDT(_) => "CKDT",
        P::CLDT(_) => "CLDT",
        P::CNCL(_) => "CNCL",
        P::COBT(_) => "COBT",
        P::CTOT(_) => "CTOT",
        P::DELY(_) => "DELY",
        P::EGSR(_) => "EGSR",
        P::EGST(_) => "EGST",
        P::EOBT(_) => "EOBT",
        P::ERUT(_) => "ERUT",
        P::EXSS { .. } => "EXSS",
        P::FDIV(_) => "FDIV",
        P::FINT(_) => "FINT",
        P::FLAB(_) => "FLAB",
        P::FLIN(_) => "FLIN",
        P::FLTY(_) => "FLTY",
        P::FRET(_) => "FRET",
        P::FTSS(_) => "FTSS",
        P::GTDT(_) => "GTDT",
        P::HNAG { .. } => "HNAG",
        P::IEST(_) => "IEST",
        P::LACL(_) => "LACL",
        P::MAXP(_) => "MAXP",
        P::NAAT(_) => "NAAT",
        P::NEAT(_) => "NEAT",
        P::PADT(_) => "PADT",
        P::PEDT(_) => "PEDT",
        P::PORT(_) => "PORT",
        P::PSDT(_) => "PSDT",
        P::PSHT(_) => "PSHT",
        P::REMC(_) => "REMC",
        P::RENO(_) => "RENO",
        P::RUNW(_) => "RUNW",
        P::SRVT(_) => "SRVT",
        P::STND(_) => "STND",
        P::TAOP { .. } => "TAOP",
        P::TIPT(_) => "TIPT",
        P::TOBT(_) => "TOBT",
        P::TRML(_) => "TRML",
        P::VIPF(_) => "VIPF",
        P::VIPP { .. } => "VIPP",
    }
}

/// The content fields (names as in `FlightState::changed_fields`) a subtype
/// may change (INV-20). Every subtype names itself, except the four whose
/// payload is several elements (sis-format §3.1).
pub fn touched_fields(subtype: &str) -> Vec<&str> {
    match subtype {
        "EXSS" => vec!["EXSC", "EXSR"],
        "HNAG" => vec!["FHAG", "PHAG", "MHAG"],
        "TAOP" => vec!["TAOP", "TAFL", "TAID"],
        "VIPP" => vec!["VIPP", "VIPR"],
        "FDEL" => vec!["STATE"],
        other => vec![other],
    }
}

/// Applies one FLOP payload to `st` (an ACTIVE flight).
pub fn apply(st: &mut FlightState, cx: Conv<'_>, p: &FlopPayload) -> Result<(), DomainError> {
    use FlopPayload as P;
    match p {
        P::ABTM(x) => c::abtm(st, cx, x),
        P::ACFT(x) => s::acft(st, x),
        P::APPT(x) => s::appt(st, cx, x),
        P::BOTM(x) => s::botm(st, cx, x),
        P::CHDT(x) => c::chdt(st, cx, x),
        P::CHOT(x) => c::chot(st, cx, x),
        P::CKDT(x) => c::ckdt(st, cx, x),
        P::CLDT(x) => c::cldt(st, cx, x),
        P::CNCL(x) => s::cncl(st, cx, x),
        P::COBT(x) => s::cobt(st, cx, x),
        P::CTOT(x) => s::ctot(st, cx, x),
        P::DELY(x) => c::dely(st, cx, x),
        P::EGSR(x) => s::egsr(st, cx, x),
        P::EGST(x) => s::egst(st, cx, x),
        P::EOBT(x) => s::eobt(st, cx, x),
        P::ERUT(x) => c::erut(st, cx, x),
        P::EXSS { exsc, exsr } => s::exss(st, exsc, exsr),
        P::FDIV(x) => s::fdiv(st, cx, x),
        P::FINT(x) => s::fint(st, cx, x),
        P::FLAB(x) => s::flab(st, cx, x),
        P::FLIN(x) => s::flin(st, x),
        P::FLTY(x) => s::flty(st, x),
        P::FRET(x) => s::fret(st, cx, x),
        P::FTSS(x) => s::ftss(st, x),
        P::GTDT(x) => c::gtdt(st, cx, x),
        P::HNAG { fhag, phag, mhag } => s::hnag(st, fhag, phag, mhag),
        P::IEST(x) => s::iest(st, cx, x),
        P::LACL(x) => s::lacl(st, cx, x),
        P::MAXP(x) => s::maxp(st, x),
        P::NAAT(x) => s::naat(st, cx, x),
        P::NEAT(x) => s::neat(st, cx, x),
        P::PADT(x) => s::padt(st, cx, x),
        P::PEDT(x) => s::pedt(st, cx, x),
        P::PORT(x) => c::port(st, cx, x),
        P::PSDT(x) => c::psdt(st, cx, x),
        P::PSHT(x) => c::psht(st, cx, x),
        P::REMC(x) => s::remc(st, x),
        P::RENO(x) => s::reno(st, x),
        P::RUNW(x) => s::runw(st, x),
        P::SRVT(x) => c::srvt(st, cx, x),
        P::STND(x) => s::stnd(st, x),
        P::TAOP { taop, tafl, taid } => s::taop(st, taop, tafl, taid),
        P::TIPT(x) => c::tipt(st, cx, x),
        P::TOBT(x) => s::tobt(st, cx, x),
        P::TRML(x) => s::trml(st, x),
        P::VIPF(x) => c::vipf(st, cx, x),
        P::VIPP { vipp, vipr } => s::vipp(st, vipp, vipr),
    }
}
