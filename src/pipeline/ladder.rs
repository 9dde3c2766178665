//! The decision ladder of `MessageProcessor.processOne` (design §5.2),
//! written once: raw → decode → identity → duplicate →
//! ignore → dispatch. Pure: each step takes what the caller read (the raw
//! text, the decode, the identity binding) and says whether the ladder ends
//! there, with which outcome, or goes on.
//!
//! Both paths climb this ladder: processOne one message per transaction
//! (`process_one.rs`), and group commit for a prefix of the queue in one
//! (`group.rs`), which reads the identity holders for all members at once.
//! So the two cannot diverge; the equivalence tests of `tests/it/pipeline.rs`
//! still prove it on the database.

use super::identity::ignore_rule;
use crate::codec::{DecodeError, DecodedMessage, MsgKind, RefData, RefStyp, Schd, SchdStyp, Schs};
use crate::domain::ErrorClass;
use crate::domain::proc_state::database_error_class;
use crate::store::pg::proc_state::IdentityBinding;
use std::sync::Arc;

/// A raw message as the pump sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// The text (shared with the read-ahead, never copied: an `Arc<[u8]>`
    /// made from the row's `Vec` would copy a 16 MB SCHD once more).
    Text(std::sync::Arc<Vec<u8>>),
    /// Longer than `msgx.pipeline.max-message-bytes`: this many bytes, never
    /// read.
    TooLarge(u64),
}

/// An outcome the ladder decides without a processor: recorded in one
/// statement (§5.3 non-business terminal states), or a FAILED attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// DEAD with this class and reason.
    Dead(ErrorClass, String),
    /// FAILED with this class and reason (backoff, then maybe EXHAUSTED).
    Failed(ErrorClass, String),
    /// SKIPPED with this reason (`duplicate-of:<id>`, `ignored:<rule>`).
    Skipped(String),
}

/// The processor a decoded message goes to (§5.2 step 5).
#[derive(Debug, Clone, Copy)]
pub enum Route<'m> {
    /// SCHD DNLD: ScheduleProcessor.
    Schedule(&'m Schd),
    /// SCHD RESP or a reference RESP: the RESP guard (G-RESP-GUARD).
    Resp,
    /// SCHD ADFT: AdftProcessor.
    Adft(&'m Schd),
    /// SCHD DEL: ScheduleDeleteProcessor.
    ScheduleDelete(&'m Schd),
    /// FLOP: FlopProcessor.
    Flop,
    /// FDEL: FdelProcessor.
    Fdel,
    /// Reference DNLD/ADD/UPD/DEL: RefDataProcessor.
    RefData(&'m RefData),
    /// SCHS DNLD/RESP: SeasonProcessor (SCHS cannot be requested).
    Season(&'m Schs),
}

/// Where steps 3–5 leave a decoded message.
#[derive(Debug, Clone)]
pub enum Step<'m> {
    /// The ladder ends with this outcome.
    Ends(Verdict),
    /// On to this processor.
    Dispatch(Route<'m>),
}

/// Step 1: the raw text, or the outcome when there is none — missing →
/// DEAD(MALFORMED, raw-missing); over `msgx.pipeline.max-message-bytes` →
/// DEAD(MALFORMED, too-large:<bytes>); a read error → FAILED(INFRA).
pub fn read<E: std::fmt::Display>(read: Result<Option<Raw>, E>) -> Result<Arc<Vec<u8>>, Verdict> {
    match read {
        Ok(Some(Raw::Text(raw))) => Ok(raw),
        Ok(Some(Raw::TooLarge(bytes))) => Err(Verdict::Dead(
            ErrorClass::Malformed,
            format!("too-large:{bytes}"),
        )),
        Ok(None) => Err(Verdict::Dead(ErrorClass::Malformed, "raw-missing".into())),
        Err(e) => Err(Verdict::Failed(
            ErrorClass::Infra,
            format!("cannot read raw message: {e}"),
        )),
    }
}

/// Step 2: the decoded message, or MALFORMED → DEAD (no retry),
/// CODEC_ERROR → FAILED (backoff).
pub fn decoded(decoded: Result<DecodedMessage, DecodeError>) -> Result<DecodedMessage, Verdict> {
    match decoded {
        Ok(msg) => Ok(msg),
        Err(e @ DecodeError::Malformed { .. }) => {
            Err(Verdict::Dead(ErrorClass::Malformed, e.to_string()))
        }
        Err(e @ DecodeError::Codec { .. }) => {
            Err(Verdict::Failed(ErrorClass::CodecError, e.to_string()))
        }
    }
}

/// A database error of the message's own statement (step 3's identity
/// binding, step 5's transaction, rolled back whole, §9.2): FAILED with the
/// class its SQLSTATE gives ([`database_error_class`]: INFRA for an outage,
/// waited out; DATA for what the message provokes every time, which
/// exhausts). The reason starts with the SQLSTATE, so `LAST_ERROR` keeps it
/// through the cut and into DEAD(EXHAUSTED).
pub fn database_failure(during: &str, sqlstate: Option<&str>, error: &str) -> Verdict {
    let class = database_error_class(sqlstate);
    let reason = match sqlstate {
        Some(code) => format!("SQLSTATE {code}: database error while {during}: {error}"),
        None => format!("database error while {during}: {error}"),
    };
    Verdict::Failed(class, reason)
}

/// Steps 3–5 for a decoded message whose identity `binding` is known:
/// held by another message → SKIPPED(duplicate-of:<id>); an ignore rule →
/// SKIPPED(ignored:<rule>); then the processor by kind, or FAILED
/// (UNSUPPORTED) for a kind none handles.
pub fn decide<'m>(
    binding: &IdentityBinding,
    ignore: &[String],
    msg: &'m DecodedMessage,
) -> Step<'m> {
    if let IdentityBinding::DuplicateOf(other) = binding {
        return Step::Ends(Verdict::Skipped(format!("duplicate-of:{other}")));
    }
    if let Some(rule) = ignore_rule(ignore, &msg.meta) {
        return Step::Ends(Verdict::Skipped(format!("ignored:{rule}")));
    }
    let unsupported = |reason: String| Step::Ends(Verdict::Failed(ErrorClass::Unsupported, reason));
    let route = match &msg.kind {
        MsgKind::Schd(s) => match &s.styp {
            SchdStyp::Dnld => Route::Schedule(s),
            SchdStyp::Resp => Route::Resp,
            SchdStyp::Adft => Route::Adft(s),
            SchdStyp::Del => Route::ScheduleDelete(s),
            SchdStyp::Other(o) => return unsupported(format!("SCHD subtype {o} is not supported")),
        },
        MsgKind::Flop(_) => Route::Flop,
        MsgKind::Fdel(_) => Route::Fdel,
        MsgKind::RefData(r) => match &r.styp {
            RefStyp::Resp => Route::Resp,
            RefStyp::Other(o) => {
                return unsupported(format!("{} subtype {o} is not supported", r.rtype));
            }
            _ => Route::RefData(r),
        },
        MsgKind::Schs(s) => Route::Season(s),
        MsgKind::Unsupported(u) => return unsupported(format!("unsupported: {}", u.reason)),
    };
    Step::Dispatch(route)
}

/// Whether group commit may take a decoded message (group.rs): a FLOP or
/// FDEL (decided by the engine alone), or one an ignore rule ends.
pub fn groupable(ignore: &[String], msg: &DecodedMessage) -> bool {
    matches!(msg.kind, MsgKind::Flop(_) | MsgKind::Fdel(_))
        || ignore_rule(ignore, &msg.meta).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> DecodedMessage {
        let path = format!("{}/tests/fixtures/sis/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).expect("fixture");
        crate::codec::decode(&text).expect("decodes")
    }

    #[test]
    fn duplicate_then_ignore_then_the_processor_by_kind() {
        let flop = fixture("005-FLOP-PSDT-stand-plan.xml");
        let ignore = vec!["flop-psdt".to_string()];
        assert!(matches!(
            decide(&IdentityBinding::DuplicateOf(7), &ignore, &flop),
            Step::Ends(Verdict::Skipped(r)) if r == "duplicate-of:7"
        ));
        assert!(matches!(
            decide(&IdentityBinding::Ours, &ignore, &flop),
            Step::Ends(Verdict::Skipped(r)) if r == "ignored:flop-psdt"
        ));
        assert!(matches!(
            decide(&IdentityBinding::Ours, &[], &flop),
            Step::Dispatch(Route::Flop)
        ));
        assert!(groupable(&[], &flop));

        let schd = fixture("003-SCHD-DNLD-three-flights.xml");
        assert!(matches!(
            decide(&IdentityBinding::Ours, &[], &schd),
            Step::Dispatch(Route::Schedule(_))
        ));
        assert!(!groupable(&[], &schd));
        assert!(groupable(&["SCHD".to_string()], &schd));

        let unsupported = fixture("025-FLOP-ESTT-unsupported.xml");
        assert!(matches!(
            decide(&IdentityBinding::Ours, &[], &unsupported),
            Step::Ends(Verdict::Failed(ErrorClass::Unsupported, r)) if r.starts_with("unsupported: ")
        ));
    }

    #[test]
    fn a_database_error_keeps_its_sqlstate_and_is_classed_by_it() {
        assert_eq!(
            database_failure("processing", Some("54000"), "index row size 6016 exceeds"),
            Verdict::Failed(
                ErrorClass::Data,
                "SQLSTATE 54000: database error while processing: index row size 6016 exceeds"
                    .into()
            )
        );
        assert_eq!(
            database_failure("binding the identity", Some("40P01"), "deadlock detected"),
            Verdict::Failed(
                ErrorClass::Infra,
                "SQLSTATE 40P01: database error while binding the identity: deadlock detected"
                    .into()
            )
        );
        assert_eq!(
            database_failure("processing", None, "pool timed out"),
            Verdict::Failed(
                ErrorClass::Infra,
                "database error while processing: pool timed out".into()
            )
        );
    }

    #[test]
    fn no_raw_text_is_dead_or_failed_by_why() {
        let missing: Result<Option<Raw>, String> = Ok(None);
        assert_eq!(
            read(missing),
            Err(Verdict::Dead(ErrorClass::Malformed, "raw-missing".into()))
        );
        let large: Result<Option<Raw>, String> = Ok(Some(Raw::TooLarge(99)));
        assert_eq!(
            read(large),
            Err(Verdict::Dead(ErrorClass::Malformed, "too-large:99".into()))
        );
        let broken: Result<Option<Raw>, String> = Err("timeout".into());
        assert_eq!(
            read(broken),
            Err(Verdict::Failed(
                ErrorClass::Infra,
                "cannot read raw message: timeout".into()
            ))
        );
    }
}
