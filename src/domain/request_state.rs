//! The upstream request lifecycle (REQ_TRACK.STATE, design §7.2): PENDING
//! (registered, not yet written to COUTMSGS) → SENT → DONE (a reply matched)
//! or EXPIRED (no reply in time, or superseded). DONE and EXPIRED are final:
//! the store's transitions are guarded by the state they leave.

use super::stored_name::stored_names;

stored_names! {
    /// REQ_TRACK.STATE.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum RequestState ("REQ_TRACK state") {
        Pending = "PENDING",
        Sent = "SENT",
        Done = "DONE",
        Expired = "EXPIRED",
    }
}

impl RequestState {
    /// PENDING or SENT: at most one open request per (type, day, sender).
    pub const fn is_open(self) -> bool {
        matches!(self, RequestState::Pending | RequestState::Sent)
    }
}
