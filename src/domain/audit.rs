//! The audit trail as events (issue 37 item 3; docs/events.md "KAFKA:audit"):
//! an applied operator action as a CloudEvents 1.0 record in structured
//! mode, the value of the `audit` topic. Pure: the store builds one per
//! OPERATOR_ACTION row and appends it in the same statement.
//!
//! The record key (MSG_EVENT.PARTITION_KEY) is the acting user, so one
//! operator's actions stay in one partition, in the order they were applied.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

/// CloudEvents `specversion`.
pub const SPEC_VERSION: &str = "1.0";
/// CloudEvents `source`: the audit trail of msgx (one per installation; the
/// `id` is unique within it).
pub const SOURCE: &str = "/msgx/operator-action";
/// The prefix of `type`; the action follows in lower case with hyphens.
pub const TYPE_PREFIX: &str = "io.msgx.operator-action.";
/// The `result` of every recorded action: a row is only written when the
/// action was applied (a refusal or a no-op writes none).
pub const APPLIED: &str = "applied";

/// What the store knows of one action when it records it.
#[derive(Debug, Clone, Copy)]
pub struct ActionFacts<'a> {
    /// OPERATOR_ACTION.ID.
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: &'a str,
    /// The role the user acted with; `cli` for a command, `system` for
    /// msgx's own actions.
    pub role: &'a str,
    pub action: &'a str,
    pub target: &'a str,
    pub reason: Option<&'a str>,
    /// The request's trace-id (32 hex digits), when the action ran in one.
    pub trace_id: Option<&'a str>,
    pub detail: &'a serde_json::Value,
}

/// `KAFKA:audit`: one applied operator action as a CloudEvent (structured
/// mode, `datacontenttype` `application/json`). docs/events.md.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(title = "audit value: operator action (CloudEvents 1.0)")]
pub struct AuditEvent<'a> {
    /// Always `1.0`.
    #[schemars(extend("const" = "1.0"))]
    pub specversion: &'static str,
    /// `operator-action-<OPERATOR_ACTION.ID>`: unique per `source`, so a
    /// redelivered record is recognised as the same event.
    pub id: String,
    /// Always `/msgx/operator-action`.
    #[schemars(extend("const" = "/msgx/operator-action"))]
    pub source: &'static str,
    /// `io.msgx.operator-action.<action>`, e.g. `io.msgx.operator-action.event-resend`.
    #[serde(rename = "type")]
    #[schemars(regex(pattern = r"^io\.msgx\.operator-action\.[a-z0-9-]+$"))]
    pub kind: String,
    /// When the action was applied, RFC 3339 in UTC with microseconds.
    #[schemars(extend("format" = "date-time"))]
    pub time: String,
    /// The row acted on, e.g. `msg_event:4711`, `proc_state:17,18`.
    pub subject: &'a str,
    /// Always `application/json`.
    #[schemars(extend("const" = "application/json"))]
    pub datacontenttype: &'static str,
    pub data: AuditData<'a>,
}

/// The action itself.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AuditData<'a> {
    /// OPERATOR_ACTION.ID (the console's Audit page lists it).
    pub operator_action_id: i64,
    /// Who acted: the console user, the CLI's `--actor`/`$USER`, or `msgx`.
    pub user: &'a str,
    /// The role acted with: a console role, `cli` or `system`.
    pub role: &'a str,
    /// The action's name as OPERATOR_ACTION stores it, e.g. `EVENT_RESEND`.
    pub action: &'a str,
    /// The rows acted on (the `subject`, as a list).
    #[schemars(length(min = 1))]
    pub targets: Vec<&'a str>,
    /// The operator's reason; `null` when none was required.
    pub reason: Option<&'a str>,
    /// Always `applied` (only applied actions are recorded).
    #[schemars(extend("const" = "applied"))]
    pub result: &'static str,
    /// What the action found or did (OPERATOR_ACTION.DETAIL), per action.
    #[schemars(extend("type" = "object"))]
    pub detail: &'a serde_json::Value,
    /// The trace-id of the request that applied it (W3C, 32 hex digits);
    /// `null` for msgx's own actions.
    #[schemars(regex(pattern = r"^[0-9a-f]{32}$"))]
    pub trace_id: Option<&'a str>,
}

impl<'a> AuditEvent<'a> {
    /// The event of `f`.
    pub fn of(f: &ActionFacts<'a>) -> AuditEvent<'a> {
        AuditEvent {
            specversion: SPEC_VERSION,
            id: format!("operator-action-{}", f.id),
            source: SOURCE,
            kind: event_type(f.action),
            time: f.at.to_rfc3339_opts(SecondsFormat::Micros, true),
            subject: f.target,
            datacontenttype: "application/json",
            data: AuditData {
                operator_action_id: f.id,
                user: f.actor,
                role: f.role,
                action: f.action,
                targets: vec![f.target],
                reason: f.reason,
                result: APPLIED,
                detail: f.detail,
                trace_id: f.trace_id,
            },
        }
    }

    /// The record value: the event's JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// `io.msgx.operator-action.<action>`, the action in lower case with hyphens.
pub fn event_type(action: &str) -> String {
    format!(
        "{TYPE_PREFIX}{}",
        action.to_ascii_lowercase().replace('_', "-")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_becomes_a_structured_cloud_event() {
        let detail = serde_json::json!({ "sessions_ended": 2 });
        let at = DateTime::parse_from_rfc3339("2026-12-06T12:00:00.5Z")
            .map(|t| t.to_utc())
            .unwrap_or_default();
        let e = AuditEvent::of(&ActionFacts {
            id: 42,
            at,
            actor: "alice",
            role: "operator",
            action: "SESSION_REVOKE",
            target: "console_user:bob",
            reason: Some("left the company"),
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736"),
            detail: &detail,
        });
        let v: serde_json::Value = serde_json::from_slice(&e.to_bytes()).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({
                "specversion": "1.0",
                "id": "operator-action-42",
                "source": "/msgx/operator-action",
                "type": "io.msgx.operator-action.session-revoke",
                "time": "2026-12-06T12:00:00.500000Z",
                "subject": "console_user:bob",
                "datacontenttype": "application/json",
                "data": {
                    "operator_action_id": 42,
                    "user": "alice",
                    "role": "operator",
                    "action": "SESSION_REVOKE",
                    "targets": ["console_user:bob"],
                    "reason": "left the company",
                    "result": "applied",
                    "detail": { "sessions_ended": 2 },
                    "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"
                }
            })
        );
    }
}
