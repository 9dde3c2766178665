//! Domain events (design §8, §12.4; INV-13). Every written flight yields one
//! `KAFKA:msg` change notification and one `KAFKA:schd` full-state projection
//! (or a tombstone when it is DELETED). JSON layouts: docs/events.md.
//!
//! Serialisation is deterministic: fixed key order (struct order; scalars in
//! `ScalarTag::ALL` order), times as ISO-8601 with offset, audit times in UTC
//! with microsecond precision. The same state at the same STATE_VERSION
//! therefore always yields the same bytes.

use chrono::{DateTime, FixedOffset, Utc};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::codec::ScalarTag;
use crate::domain::changes::FieldChange;
use crate::domain::flight_state::{FlightState, FlightStatus};
use crate::domain::mafl::MaflEntry;
use crate::domain::milestones;

/// Outbox target (`MSG_EVENT.TARGET`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventTarget {
    KafkaMsg,
    KafkaSchd,
    /// The seasonal schedule's records, one per series key (`domain::season`).
    KafkaSeason,
    /// The audit trail: one CloudEvent per applied operator action, keyed by
    /// the acting user (`domain::audit`).
    KafkaAudit,
}

impl EventTarget {
    pub const ALL: [EventTarget; 4] = [
        EventTarget::KafkaMsg,
        EventTarget::KafkaSchd,
        EventTarget::KafkaSeason,
        EventTarget::KafkaAudit,
    ];

    /// The stored target name.
    pub const fn as_str(self) -> &'static str {
        match self {
            EventTarget::KafkaMsg => "KAFKA:msg",
            EventTarget::KafkaSchd => "KAFKA:schd",
            EventTarget::KafkaSeason => "KAFKA:season",
            EventTarget::KafkaAudit => "KAFKA:audit",
        }
    }
}

/// `MSG_EVENT.EVENT_TYPE`: a value, or a null-valued delete (`KAFKA:schd` only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventType {
    Upsert,
    Tombstone,
}

/// What happened to the flight, in the change notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChangeKind {
    /// Created or updated (still ACTIVE).
    Upsert,
    /// Became DELETED.
    Delete,
}

/// What kind of write a notification reports (docs/events.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventKind {
    /// The flight is new, or was DELETED and is ACTIVE again.
    Create,
    /// Content of an ACTIVE flight changed.
    Update,
    /// The flight became DELETED (by FDEL, SCHD DEL, a deleted master's
    /// cascade or flight-history-clean).
    Delete,
    /// Only the master/share relation changed: a master's MAFL after a share
    /// joined, left or was deleted, or a share's MAID.
    Merge,
    /// Re-sent on an operator's request (`msgx events republish`); nothing
    /// changed.
    Request,
}

impl EventKind {
    /// The kind of the write from `old` (`None`: never written) to `next`
    /// that changed `changed` (SIS names).
    pub fn of(old: Option<&FlightState>, next: &FlightState, changed: &[String]) -> EventKind {
        const RELATION: [&str; 2] = ["MAFL", "MAID"];
        if next.state == FlightStatus::Deleted {
            EventKind::Delete
        } else if !old.is_some_and(FlightState::is_active) {
            EventKind::Create
        } else if !changed.is_empty() && changed.iter().all(|f| RELATION.contains(&f.as_str())) {
            EventKind::Merge
        } else {
            EventKind::Update
        }
    }
}

/// The message that made a change (docs/events.md "Provenance").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Provenance {
    /// Mailbox ID (`CMINMSGS_ID`); 0 when no message caused it (`LIFECYCLE-CLEAN`).
    pub msg_id: i64,
    /// The message's SNDR; null when no message caused it.
    pub sndr: Option<String>,
    /// `TYPE-STYP`, e.g. `FLOP-GTDT`, `SCHD-DNLD`, `FLOP-FDEL`, `LIFECYCLE-CLEAN`.
    pub msg_kind: String,
    /// The message's DTTM with the airport's offset; null when not sent.
    pub dttm: Option<DateTime<FixedOffset>>,
    /// The message's SEQN as sent; null when not sent.
    pub seqn: Option<String>,
}

impl Provenance {
    /// A change no message caused (flight-history-clean's deletes).
    pub fn internal(msg_kind: &str) -> Provenance {
        Provenance {
            msg_id: 0,
            sndr: None,
            msg_kind: msg_kind.to_string(),
            dttm: None,
            seqn: None,
        }
    }
}

/// The `schd` value's keys added after release 0.1: optional in its schema,
/// so a 0.1 record still validates (issue 36 item 5, docs/events.md
/// "Compatibility").
pub const SCHD_FIELDS_ADDED_AFTER_0_1: [&str; 1] = ["milestones"];

/// The fields [`ChangeNotification`] gained after release 0.1.0 (issue 36): not
/// required by the published schema, so the records of the previous release
/// still validate against it (docs/events.md "Compatibility").
pub const FIELDS_ADDED_AFTER_0_1: [&str; 3] = ["event_kind", "changes", "provenance"];

fn optional_after_0_1(schema: &mut schemars::Schema) {
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|k| !FIELDS_ADDED_AFTER_0_1.iter().any(|f| k == f));
    }
}

/// `KAFKA:msg`: "this flight changed" (not authoritative state; read the
/// `schd` topic or msgx for the state). docs/events.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(title = "msg value: change notification", transform = optional_after_0_1)]
pub struct ChangeNotification {
    /// The flight (also the record key).
    pub flid: i64,
    /// The flight's STATE_VERSION after this write (also the `state-version` header).
    pub state_version: i64,
    /// Mailbox ID of the message that caused the change.
    pub msg_id: i64,
    /// `TYPE-STYP` of that message, e.g. `FLOP-GTDT`, `SCHD-DNLD`, `FLOP-FDEL`.
    pub msg_kind: String,
    /// `DELETE` when the flight became DELETED, else `UPSERT`.
    pub change: ChangeKind,
    /// CREATE, UPDATE, DELETE, MERGE or REQUEST (added after 0.1.0).
    pub event_kind: EventKind,
    /// Changed content fields (SIS names, `STATE`, `OPERATION_DAY`; `MAFL` when a master's share
    /// list changed), in the fixed order of docs/events.md.
    pub changed_fields: Vec<String>,
    /// Each changed path with its old and new value, in the order of
    /// `changed_fields` (added after 0.1.0; docs/events.md "Field-level changes").
    pub changes: Vec<FieldChange>,
    /// The message that made the change (added after 0.1.0).
    pub provenance: Provenance,
    /// UTC audit time of the write; consumers guard with `(flid, state_version, updated_at)`.
    pub updated_at: DateTime<Utc>,
}

/// What the notification of one write says beyond the flight itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFacts {
    pub provenance: Provenance,
    pub event_kind: EventKind,
    pub changed_fields: Vec<String>,
    pub changes: Vec<FieldChange>,
}

impl WriteFacts {
    /// The facts of the write from `old` (`None`: never written) to `next`,
    /// whose MAFL was `old_mafl` and is `new_mafl` (`None` for a share):
    /// its kind and its field-level changes (against an empty flight when
    /// it was never written or DELETED), with the `changed_fields` the
    /// engine listed.
    pub fn of_write(
        old: Option<&FlightState>,
        next: &FlightState,
        old_mafl: Option<&[MaflEntry]>,
        new_mafl: Option<&[MaflEntry]>,
        changed_fields: Vec<String>,
        provenance: Provenance,
    ) -> WriteFacts {
        // A flight that was never written or DELETED (a tombstone to the
        // consumer) is created anew: its changes are against an empty flight.
        let changes = match old.filter(|o| o.is_active()) {
            Some(o) => crate::domain::changes::changes(o, next, old_mafl, new_mafl),
            None => {
                let never_written = FlightState::new(next.flid, next.created_at);
                crate::domain::changes::changes(&never_written, next, old_mafl, new_mafl)
            }
        };
        WriteFacts {
            provenance,
            event_kind: EventKind::of(old, next, &changed_fields),
            changed_fields,
            changes,
        }
    }
}

/// `KAFKA:schd` full-state projection of one flight at one STATE_VERSION.
///
/// Kept as its JSON bytes (the Kafka value), serialised when built: a copy
/// of the whole flight per event tripled a large schedule's memory (a
/// 20,000-flight SCHD). The bytes are deterministic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchdProjection {
    json: Vec<u8>,
    /// `Some` for a master (possibly empty), `None` for a share.
    pub mafl: Option<Vec<MaflEntry>>,
}

/// Builds the projection of `state` with its derived `mafl` (§11.4).
pub fn schd_projection(state: &FlightState, mafl: Option<&[MaflEntry]>) -> SchdProjection {
    let view = ProjectionView {
        flight: state,
        mafl,
    };
    SchdProjection {
        // Serialising plain data with string keys into a Vec cannot fail.
        json: serde_json::to_vec(&view).unwrap_or_default(),
        mafl: mafl.map(<[MaflEntry]>::to_vec),
    }
}

impl SchdProjection {
    /// The projection as JSON bytes (the Kafka value).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.json.clone()
    }
    /// The projection as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.json).unwrap_or(serde_json::Value::Null)
    }
}

/// What a projection serialises: the flight and its MAFL, borrowed.
struct ProjectionView<'a> {
    flight: &'a FlightState,
    mafl: Option<&'a [MaflEntry]>,
}

impl Serialize for ProjectionView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.flight;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("flid", &f.flid)?;
        m.serialize_entry("state", &f.state)?;
        m.serialize_entry("state_version", &f.state_version)?;
        m.serialize_entry("operation_day", &f.operation_day)?;
        m.serialize_entry("last_msg_id", &f.last_msg_id)?;
        m.serialize_entry("created_at", &f.created_at)?;
        m.serialize_entry("updated_at", &f.updated_at)?;
        for tag in ScalarTag::ALL.iter().filter(|t| **t != ScalarTag::FLID) {
            m.serialize_entry(&tag.name().to_ascii_lowercase(), &f.scalar(*tag))?;
        }
        m.serialize_entry("fdiv", &f.fdiv)?;
        m.serialize_entry("fret", &f.fret)?;
        m.serialize_entry("flab", &f.flab)?;
        m.serialize_entry("mafl", &self.mafl)?;
        m.serialize_entry("rout", &f.rout)?;
        m.serialize_entry("erut", &f.erut)?;
        m.serialize_entry("psdt", &f.psdt)?;
        m.serialize_entry("gtdt", &f.gtdt)?;
        m.serialize_entry("ckdt", &f.ckdt)?;
        m.serialize_entry("cldt", &f.cldt)?;
        m.serialize_entry("chdt", &f.chdt)?;
        m.serialize_entry("chot", &f.chot)?;
        m.serialize_entry("abtm", &f.abtm)?;
        m.serialize_entry("dely", &f.dely)?;
        m.serialize_entry("srvt", &f.srvt)?;
        m.serialize_entry("vipf", &f.vipf)?;
        m.serialize_entry("port", &f.port)?;
        m.serialize_entry("tipt", &f.tipt)?;
        m.serialize_entry("psht", &f.psht)?;
        m.serialize_entry("milestones", &milestones::milestones(f))?;
        m.end()
    }
}

/// The JSON Schema of the projection's bytes (schemas/schd-value.schema.json),
/// beside [`ProjectionView`]'s serialiser and with the same keys: the
/// lifecycle columns, one key per scalar of [`ScalarTag::ALL`] but FLID
/// typed by its [`ScalarKind`], the exception objects, MAFL and the lists,
/// each from its Rust type. Tests validate every projection against it.
impl schemars::JsonSchema for SchdProjection {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SchdProjection".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use crate::codec::ScalarKind;
        use crate::domain::flight_state as fs;
        use chrono::{FixedOffset, NaiveDate};
        use serde_json::{Map, Value, json};
        let mut props = Map::new();
        let mut put = |key: &str, schema: schemars::Schema| {
            props.insert(key.to_string(), schema.to_value());
        };
        put("flid", g.subschema_for::<i64>());
        put(
            "state",
            schemars::json_schema!({"const": "ACTIVE", "description": "A DELETED flight is a tombstone (null value), never a projection."}),
        );
        put("state_version", g.subschema_for::<i64>());
        put("operation_day", g.subschema_for::<Option<NaiveDate>>());
        put("last_msg_id", g.subschema_for::<i64>());
        put("created_at", g.subschema_for::<DateTime<Utc>>());
        put("updated_at", g.subschema_for::<DateTime<Utc>>());
        for tag in ScalarTag::ALL.iter().filter(|t| **t != ScalarTag::FLID) {
            // The JSON of each FlightValue variant (its Serialize impl).
            let mut schema = match tag.kind() {
                ScalarKind::Text => g.subschema_for::<Option<String>>(),
                ScalarKind::Int => g.subschema_for::<Option<i64>>(),
                ScalarKind::Decimal => {
                    let mut s = g.subschema_for::<Option<String>>();
                    s.insert("pattern".into(), json!("^-?[0-9]+(\\.[0-9]+)?$"));
                    s
                }
                ScalarKind::Time => g.subschema_for::<Option<DateTime<FixedOffset>>>(),
                ScalarKind::Date => g.subschema_for::<Option<NaiveDate>>(),
                ScalarKind::Hhmm => {
                    let mut s = g.subschema_for::<Option<String>>();
                    s.insert("pattern".into(), json!("^[0-9]{4}$"));
                    s
                }
            };
            schema.insert("description".into(), json!(format!("SIS {}", tag.name())));
            put(&tag.name().to_ascii_lowercase(), schema);
        }
        put("fdiv", g.subschema_for::<Option<fs::DiversionInfo>>());
        put("fret", g.subschema_for::<Option<fs::ReturnInfo>>());
        put("flab", g.subschema_for::<Option<fs::LandingAbortInfo>>());
        let mut mafl = g.subschema_for::<Option<Vec<MaflEntry>>>();
        mafl.insert(
            "description".into(),
            json!(
                "A master's ACTIVE shares sorted by FLID (possibly []); null for a share (§11.4)."
            ),
        );
        put("mafl", mafl);
        put("rout", g.subschema_for::<Vec<fs::RouteItem>>());
        put("erut", g.subschema_for::<Vec<fs::RouteItem>>());
        put("psdt", g.subschema_for::<Vec<fs::StandItem>>());
        put("gtdt", g.subschema_for::<Vec<fs::GateItem>>());
        put("ckdt", g.subschema_for::<Vec<fs::CounterItem>>());
        put("cldt", g.subschema_for::<Vec<fs::CarouselItem>>());
        put("chdt", g.subschema_for::<Vec<fs::ChuteItem>>());
        put("chot", g.subschema_for::<Vec<fs::ChockItem>>());
        put("abtm", g.subschema_for::<Vec<fs::AirbridgeItem>>());
        put("dely", g.subschema_for::<Vec<fs::DelayItem>>());
        put("srvt", g.subschema_for::<Vec<fs::ServiceItem>>());
        put("vipf", g.subschema_for::<Vec<fs::VipItem>>());
        put("port", g.subschema_for::<Vec<fs::DoorItem>>());
        put("tipt", g.subschema_for::<Vec<fs::TractorItem>>());
        put("psht", g.subschema_for::<Vec<fs::PushItem>>());
        let mut codes = Map::new();
        let milestone = g.subschema_for::<milestones::Milestone>().to_value();
        for code in milestones::MilestoneCode::ALL {
            codes.insert(code.as_str().to_string(), milestone.clone());
        }
        put(
            "milestones",
            schemars::json_schema!({
                "description": "A-CDM milestones by code, derived from the fields (docs/events.md \"Milestones\"); only the codes the flight has. Added in 0.2: absent from 0.1 records.",
                "type": "object",
                "properties": codes,
                "additionalProperties": false,
            }),
        );
        let required: Vec<Value> = props
            .keys()
            .filter(|k| !SCHD_FIELDS_ADDED_AFTER_0_1.contains(&k.as_str()))
            .map(|k| json!(k))
            .collect();
        schemars::json_schema!({
            "title": "schd value: full-state projection",
            "description": "The complete state of one ACTIVE flight at one STATE_VERSION (docs/events.md). Every key is always present; unset values are null, empty lists [].",
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        })
    }
}

/// The `KAFKA:schd` payload of one write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchdPayload {
    /// Boxed: a projection is a whole flight.
    Upsert(Box<SchdProjection>),
    /// The flight is DELETED: a null-valued message keyed by FLID.
    Tombstone,
}

/// One `KAFKA:schd` row (upserted by FLID, newest STATE_VERSION wins, §8.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchdEvent {
    pub flid: i64,
    pub state_version: i64,
    pub payload: SchdPayload,
}

/// An event for the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainEvent {
    Msg(ChangeNotification),
    Schd(SchdEvent),
}

impl DomainEvent {
    /// `MSG_EVENT.TARGET`.
    pub fn target(&self) -> EventTarget {
        match self {
            DomainEvent::Msg(_) => EventTarget::KafkaMsg,
            DomainEvent::Schd(_) => EventTarget::KafkaSchd,
        }
    }
    /// `MSG_EVENT.PARTITION_KEY` (FLID, §8.1).
    pub fn partition_key(&self) -> i64 {
        match self {
            DomainEvent::Msg(n) => n.flid,
            DomainEvent::Schd(e) => e.flid,
        }
    }
    /// The flight's STATE_VERSION this event describes.
    pub fn state_version(&self) -> i64 {
        match self {
            DomainEvent::Msg(n) => n.state_version,
            DomainEvent::Schd(e) => e.state_version,
        }
    }
    /// `MSG_EVENT.EVENT_TYPE`: notifications are always UPSERT (they carry a
    /// value, also for a deletion); a schd tombstone is TOMBSTONE.
    pub fn event_type(&self) -> EventType {
        match self {
            DomainEvent::Schd(SchdEvent {
                payload: SchdPayload::Tombstone,
                ..
            }) => EventType::Tombstone,
            _ => EventType::Upsert,
        }
    }
    /// The Kafka value: JSON bytes, or `None` for a tombstone (null value).
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        match self {
            DomainEvent::Msg(n) => Some(serde_json::to_vec(n).unwrap_or_default()),
            DomainEvent::Schd(SchdEvent {
                payload: SchdPayload::Upsert(p),
                ..
            }) => Some(p.to_bytes()),
            DomainEvent::Schd(_) => None,
        }
    }
}

/// The events of one written flight (INV-13): notification, then projection
/// or tombstone.
pub fn events_for(
    next: &FlightState,
    mafl: Option<Vec<MaflEntry>>,
    facts: WriteFacts,
) -> [DomainEvent; 2] {
    let deleted = next.state == FlightStatus::Deleted;
    let note = ChangeNotification {
        flid: next.flid,
        state_version: next.state_version,
        msg_id: next.last_msg_id,
        msg_kind: facts.provenance.msg_kind.clone(),
        change: if deleted {
            ChangeKind::Delete
        } else {
            ChangeKind::Upsert
        },
        event_kind: facts.event_kind,
        changed_fields: facts.changed_fields,
        changes: facts.changes,
        provenance: facts.provenance,
        updated_at: next.updated_at,
    };
    let payload = if deleted {
        SchdPayload::Tombstone
    } else {
        SchdPayload::Upsert(Box::new(schd_projection(next, mafl.as_deref())))
    };
    let events = [
        DomainEvent::Msg(note),
        DomainEvent::Schd(SchdEvent {
            flid: next.flid,
            state_version: next.state_version,
            payload,
        }),
    ];
    // Every event a unit test builds is checked against schemas/; the
    // integration tests check the outbox and the topics.
    #[cfg(test)]
    for e in &events {
        let event_type = match e.event_type() {
            EventType::Upsert => "UPSERT",
            EventType::Tombstone => "TOMBSTONE",
        };
        contract_check::assert_record(
            contract_check::topic_of(e.target().as_str()),
            e.partition_key().to_string().as_bytes(),
            event_type,
            e.to_bytes().as_deref(),
        );
    }
    events
}

/// The `msg_kind` of the records `msgx events republish` re-sends.
pub const REQUEST_KIND: &str = "REQUEST";

/// The events that re-send `state` as it is, on an operator's request
/// (`msgx events republish`, issue 36 item 4): a REQUEST notification that
/// changes nothing, and its current projection (a DELETED flight's
/// tombstone). The same STATE_VERSION: a consumer that has it already may
/// ignore both; one that bootstraps takes the projection.
pub fn republished(state: &FlightState, mafl: Option<Vec<MaflEntry>>) -> [DomainEvent; 2] {
    let facts = WriteFacts {
        provenance: Provenance::internal(REQUEST_KIND),
        event_kind: EventKind::Request,
        changed_fields: Vec::new(),
        changes: Vec::new(),
    };
    events_for(state, mafl, facts)
}

/// The contract check the integration tests use too (one implementation).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../tests/it/common/contract.rs"]
pub(crate) mod contract_check;
