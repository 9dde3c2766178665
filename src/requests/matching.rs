//! RESP matching rules (G-RESP-GUARD, design §7.1, §7.2; C-23, Q5). Pure: the
//! caller loads the candidate requests and applies the verdict.
//!
//! A SCHD or reference RESP answers an open request of its type:
//!
//! 1. **Exact** — the RESP echoes the request's SEQN in an
//!    [`ECHO_SEQN_ELEMENT`] element. The newest request of the type with that
//!    SEQN must be SENT, and the RESP must not be older than its send time.
//! 2. **Degraded** — no echo. The open (SENT) requests of the type whose
//!    covered operation day is one the RESP carries (reference data: any) and
//!    that were sent no later than the RESP's DTTM plus the clock-skew
//!    tolerance (`msgx.request.clock-skew`). This can pair a reply with the
//!    wrong generation of request (C-23): each degraded match is audited and
//!    is never reported as exact.
//!
//! Otherwise the RESP is SKIPPED `resp-unmatched:<why>` ([`Unmatched`]) and
//! nothing is applied. Closed requests (DONE, EXPIRED) are never matched, so
//! a late RESP never changes them.

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, Utc};

use crate::codec::{DecodedMessage, Field, MsgKind, ScalarTag, ScalarValue, Schd};
use crate::domain::operation_day;
use crate::domain::request_state::RequestState;

/// The element a RESP would echo the request's SEQN in. The SIS
/// specification that would name it is not available (sis-format §0); none
/// of the 172 real samples carries one, so every real RESP takes the
/// degraded rule. Looked for anywhere in the message (META, the SCHD
/// wrapper, or under MSG), as the codec keeps unknown elements.
pub const ECHO_SEQN_ELEMENT: &str = "RQSN";

/// A request as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: i64,
    pub operation_day: Option<NaiveDate>,
    pub state: RequestState,
    pub seqn: String,
    pub sent_at: Option<DateTime<Utc>>,
}

/// What the rules need from a RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespFacts {
    /// `RQFD` for SCHD, `RQRD:<TYPE>` for reference data.
    pub req_type: String,
    /// Operation days of the carried flights (SCHD); empty for reference data.
    pub days: Vec<NaiveDate>,
    /// META DTTM as an instant (airport time zone applied).
    pub dttm: Option<DateTime<Utc>>,
    /// The echoed SEQN, if any.
    pub echo_seqn: Option<String>,
}

impl RespFacts {
    /// True for a schedule RESP (matched per covered operation day).
    pub fn is_schedule(&self) -> bool {
        self.req_type == "RQFD"
    }
}

/// How a request was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MatchMode {
    Exact,
    Degraded,
}

impl MatchMode {
    /// The REQ_TRACK.match_mode value.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Exact => "EXACT",
            MatchMode::Degraded => "DEGRADED",
        }
    }
}

/// One matched request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub id: i64,
    pub mode: MatchMode,
    /// For a degraded match: what the match rests on (stored on the row and
    /// in the audit log).
    pub audit: Option<String>,
}

/// Why a RESP answers no open request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmatched {
    /// No request of the type (and day) at all.
    NoOpenRequest,
    /// The request it would answer is EXPIRED.
    RequestExpired,
    /// The request it would answer is already DONE.
    RequestClosed,
    /// The request it would answer was never confirmed as sent (PENDING).
    RequestNotSent,
    /// The RESP's DTTM is before the request was sent (beyond the skew).
    OlderThanRequest,
    /// Degraded matching needs DTTM and the RESP has none.
    NoDttm,
    /// A schedule RESP without a flight whose operation day can be derived.
    NoCoveredDay,
    /// The echoed SEQN names no request of the type.
    UnknownEcho,
}

impl Unmatched {
    /// The `<why>` of `resp-unmatched:<why>`.
    pub fn as_str(self) -> &'static str {
        match self {
            Unmatched::NoOpenRequest => "no-open-request",
            Unmatched::RequestExpired => "request-expired",
            Unmatched::RequestClosed => "request-closed",
            Unmatched::RequestNotSent => "request-not-sent",
            Unmatched::OlderThanRequest => "older-than-request",
            Unmatched::NoDttm => "no-dttm",
            Unmatched::NoCoveredDay => "no-covered-day",
            Unmatched::UnknownEcho => "unknown-echo",
        }
    }
}

/// The decision for one RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Apply the RESP; these requests become DONE with it.
    Matched(Vec<Matched>),
    /// SKIPPED `resp-unmatched:<why>`; nothing applied, no request changed.
    Unmatched(Unmatched),
}

/// Decides which requests `resp` answers. `requests` are the requests of the
/// RESP's type, newest first — restricted to the echoed SEQN when there is
/// one, else (schedule) to the covered days.
pub fn decide(resp: &RespFacts, requests: &[Candidate], skew: Duration) -> Verdict {
    let too_old = |c: &Candidate| match (resp.dttm, c.sent_at) {
        (Some(d), Some(s)) => d + skew < s,
        _ => false,
    };
    if let Some(seqn) = &resp.echo_seqn {
        let Some(c) = requests.iter().find(|c| &c.seqn == seqn) else {
            return Verdict::Unmatched(Unmatched::UnknownEcho);
        };
        return match c.state {
            RequestState::Sent if too_old(c) => Verdict::Unmatched(Unmatched::OlderThanRequest),
            RequestState::Sent => Verdict::Matched(vec![Matched {
                id: c.id,
                mode: MatchMode::Exact,
                audit: None,
            }]),
            other => Verdict::Unmatched(closed_reason(other)),
        };
    }
    if resp.is_schedule() && resp.days.is_empty() {
        return Verdict::Unmatched(Unmatched::NoCoveredDay);
    }
    let Some(dttm) = resp.dttm else {
        return Verdict::Unmatched(Unmatched::NoDttm);
    };
    let relevant: Vec<&Candidate> = requests
        .iter()
        .filter(|c| !resp.is_schedule() || c.operation_day.is_some_and(|d| resp.days.contains(&d)))
        .collect();
    let open: Vec<&Candidate> = relevant
        .iter()
        .copied()
        .filter(|c| c.state == RequestState::Sent)
        .collect();
    if open.is_empty() {
        // Name the newest relevant request's state; nothing at all = no request.
        return Verdict::Unmatched(
            relevant
                .first()
                .map(|c| closed_reason(c.state))
                .unwrap_or(Unmatched::NoOpenRequest),
        );
    }
    let matched: Vec<Matched> = open
        .iter()
        .filter(|c| !too_old(c))
        .map(|c| Matched {
            id: c.id,
            mode: MatchMode::Degraded,
            audit: Some(degraded_audit(resp, c, dttm, skew)),
        })
        .collect();
    if matched.is_empty() {
        Verdict::Unmatched(Unmatched::OlderThanRequest)
    } else {
        Verdict::Matched(matched)
    }
}

fn closed_reason(state: RequestState) -> Unmatched {
    match state {
        RequestState::Expired => Unmatched::RequestExpired,
        RequestState::Done => Unmatched::RequestClosed,
        RequestState::Pending => Unmatched::RequestNotSent,
        RequestState::Sent => Unmatched::NoOpenRequest,
    }
}

fn degraded_audit(resp: &RespFacts, c: &Candidate, dttm: DateTime<Utc>, skew: Duration) -> String {
    let day = c
        .operation_day
        .map(|d| format!(" day {d}"))
        .unwrap_or_default();
    let sent = c
        .sent_at
        .map(|s| s.to_rfc3339())
        .unwrap_or_else(|| "-".into());
    format!(
        "degraded match (no echoed SEQN; C-23): {}{day}, request SEQN {} sent {sent} <= RESP DTTM {} + clock-skew {}s",
        resp.req_type,
        c.seqn,
        dttm.to_rfc3339(),
        skew.num_seconds()
    )
}

/// The operation days of the flights a schedule package carries (SODT and
/// the day cutover, §11.2), sorted and without duplicates.
pub fn covered_days(schd: &Schd, cutover: NaiveTime) -> Vec<NaiveDate> {
    let mut days: Vec<NaiveDate> = schd
        .flights
        .iter()
        .filter_map(|f| match f.scalar(ScalarTag::SODT) {
            Field::Value(ScalarValue::Time(t)) => operation_day::derive(*t, cutover),
            _ => None,
        })
        .collect();
    days.sort_unstable();
    days.dedup();
    days
}

/// The SEQN a RESP echoes in [`ECHO_SEQN_ELEMENT`], if any (trimmed text of
/// the first such element; an empty one counts as absent).
pub fn echo_seqn(msg: &DecodedMessage) -> Option<String> {
    let unknown = match &msg.kind {
        MsgKind::Schd(s) => &s.unknown,
        MsgKind::RefData(r) => &r.unknown,
        _ => return None,
    };
    unknown
        .iter()
        .filter(|u| u.name == ECHO_SEQN_ELEMENT)
        .find_map(|u| {
            let inner = u.raw.split_once('>')?.1.rsplit_once('<')?.0.trim();
            (!inner.is_empty()).then(|| inner.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        chrono::NaiveDate::from_ymd_opt(2026, 12, 1)
            .and_then(|d| d.and_hms_opt(h, m, 0))
            .expect("valid")
            .and_utc()
    }

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, d).expect("valid")
    }

    fn req(
        id: i64,
        d: Option<u32>,
        state: RequestState,
        seqn: &str,
        sent: Option<DateTime<Utc>>,
    ) -> Candidate {
        Candidate {
            id,
            operation_day: d.map(day),
            state,
            seqn: seqn.into(),
            sent_at: sent,
        }
    }

    fn schd_resp(days: &[u32], dttm: Option<DateTime<Utc>>, echo: Option<&str>) -> RespFacts {
        RespFacts {
            req_type: "RQFD".into(),
            days: days.iter().map(|d| day(*d)).collect(),
            dttm,
            echo_seqn: echo.map(str::to_string),
        }
    }

    const SKEW: Duration = Duration::minutes(2);

    fn unmatched(v: Verdict) -> Unmatched {
        match v {
            Verdict::Unmatched(u) => u,
            Verdict::Matched(m) => panic!("expected unmatched, got {m:?}"),
        }
    }

    fn matched(v: Verdict) -> Vec<Matched> {
        match v {
            Verdict::Matched(m) => m,
            Verdict::Unmatched(u) => panic!("expected a match, got {u:?}"),
        }
    }

    #[test]
    fn an_echoed_seqn_matches_its_sent_request_exactly() {
        let reqs = [req(7, Some(2), RequestState::Sent, "000042", Some(t(8, 0)))];
        let m = matched(decide(
            &schd_resp(&[1], Some(t(8, 5)), Some("000042")),
            &reqs,
            SKEW,
        ));
        assert_eq!(
            m,
            vec![Matched {
                id: 7,
                mode: MatchMode::Exact,
                audit: None
            }]
        );
    }

    #[test]
    fn an_echo_naming_no_request_or_a_closed_one_is_unmatched() {
        let reqs = [req(
            7,
            Some(1),
            RequestState::Expired,
            "000042",
            Some(t(8, 0)),
        )];
        let resp = schd_resp(&[1], Some(t(8, 5)), Some("000043"));
        assert_eq!(
            unmatched(decide(&resp, &reqs, SKEW)),
            Unmatched::UnknownEcho
        );
        let resp = schd_resp(&[1], Some(t(8, 5)), Some("000042"));
        assert_eq!(
            unmatched(decide(&resp, &reqs, SKEW)),
            Unmatched::RequestExpired
        );
        let done = [req(7, Some(1), RequestState::Done, "000042", Some(t(8, 0)))];
        assert_eq!(
            unmatched(decide(&resp, &done, SKEW)),
            Unmatched::RequestClosed
        );
    }

    #[test]
    fn an_exact_echo_older_than_the_send_is_unmatched() {
        let reqs = [req(7, Some(1), RequestState::Sent, "000042", Some(t(8, 0)))];
        let resp = schd_resp(&[1], Some(t(7, 57)), Some("000042"));
        assert_eq!(
            unmatched(decide(&resp, &reqs, SKEW)),
            Unmatched::OlderThanRequest
        );
    }

    #[test]
    fn degraded_match_needs_type_day_and_send_before_dttm_within_skew() {
        let reqs = [
            req(9, Some(2), RequestState::Sent, "000002", Some(t(8, 0))),
            req(8, Some(1), RequestState::Sent, "000001", Some(t(8, 0))),
        ];
        // Day 1 only: request 8; DTTM 2 minutes before the send is within the skew.
        let m = matched(decide(&schd_resp(&[1], Some(t(7, 58)), None), &reqs, SKEW));
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].id, m[0].mode), (8, MatchMode::Degraded));
        let audit = m[0].audit.as_deref().unwrap_or_default();
        assert!(
            audit.contains("degraded") && audit.contains("000001"),
            "{audit}"
        );
        // A package covering both days answers both requests.
        let m = matched(decide(
            &schd_resp(&[1, 2], Some(t(9, 0)), None),
            &reqs,
            SKEW,
        ));
        assert_eq!(m.iter().map(|x| x.id).collect::<Vec<_>>(), vec![9, 8]);
    }

    #[test]
    fn a_resp_older_than_the_send_beyond_the_skew_is_unmatched() {
        let reqs = [req(8, Some(1), RequestState::Sent, "000001", Some(t(8, 0)))];
        let resp = schd_resp(&[1], Some(t(7, 57) + Duration::seconds(59)), None);
        assert_eq!(
            unmatched(decide(&resp, &reqs, SKEW)),
            Unmatched::OlderThanRequest
        );
    }

    #[test]
    fn no_request_expired_closed_and_other_days_are_unmatched() {
        let resp = schd_resp(&[1], Some(t(9, 0)), None);
        assert_eq!(
            unmatched(decide(&resp, &[], SKEW)),
            Unmatched::NoOpenRequest
        );
        let other_day = [req(8, Some(2), RequestState::Sent, "000001", Some(t(8, 0)))];
        assert_eq!(
            unmatched(decide(&resp, &other_day, SKEW)),
            Unmatched::NoOpenRequest
        );
        let expired = [
            req(9, Some(1), RequestState::Expired, "000002", Some(t(8, 30))),
            req(8, Some(1), RequestState::Done, "000001", Some(t(8, 0))),
        ];
        assert_eq!(
            unmatched(decide(&resp, &expired, SKEW)),
            Unmatched::RequestExpired
        );
        let pending = [req(9, Some(1), RequestState::Pending, "000002", None)];
        assert_eq!(
            unmatched(decide(&resp, &pending, SKEW)),
            Unmatched::RequestNotSent
        );
    }

    #[test]
    fn degraded_matching_needs_dttm_and_a_covered_day() {
        let reqs = [req(8, Some(1), RequestState::Sent, "000001", Some(t(8, 0)))];
        assert_eq!(
            unmatched(decide(&schd_resp(&[1], None, None), &reqs, SKEW)),
            Unmatched::NoDttm
        );
        assert_eq!(
            unmatched(decide(&schd_resp(&[], Some(t(9, 0)), None), &reqs, SKEW)),
            Unmatched::NoCoveredDay
        );
    }

    #[test]
    fn reference_resp_matches_its_type_whatever_the_day() {
        let resp = RespFacts {
            req_type: "RQRD:GLST".into(),
            days: vec![],
            dttm: Some(t(9, 0)),
            echo_seqn: None,
        };
        let reqs = [req(3, None, RequestState::Sent, "000005", Some(t(8, 0)))];
        let m = matched(decide(&resp, &reqs, SKEW));
        assert_eq!((m[0].id, m[0].mode), (3, MatchMode::Degraded));
    }

    #[test]
    fn covered_days_follow_the_cutover_and_echo_is_read_from_unknown_elements() {
        let xml = "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><DTTM>20261201080000</DTTM><TYPE>SCHD</TYPE>\
                   <STYP>RESP</STYP><RQSN> 000042 </RQSN></META><SCHD><RECS>2</RECS>\
                   <FLTR><FLID>1</FLID><SODT>01DEC260300</SODT></FLTR>\
                   <FLTR><FLID>2</FLID><SODT>01DEC261000</SODT></FLTR></SCHD></MSG>";
        let msg = crate::codec::decode(xml.as_bytes()).expect("decodes");
        let MsgKind::Schd(s) = &msg.kind else {
            panic!("schd")
        };
        assert_eq!(covered_days(s, NaiveTime::MIN), vec![day(1)]);
        let four = NaiveTime::from_hms_opt(4, 0, 0).expect("valid");
        assert_eq!(
            covered_days(s, four),
            vec![day(1).pred_opt().expect("valid"), day(1)]
        );
        assert_eq!(echo_seqn(&msg).as_deref(), Some("000042"));
    }
}
