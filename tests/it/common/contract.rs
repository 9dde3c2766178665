//! The consumer contract as tests check it (issue 18 item 5): every Kafka
//! record msgx produces in a test — an outbox row, a record read from the
//! mock cluster, an event the domain builds — is validated here against the
//! committed `schemas/<topic>-{key,value}.schema.json` (which
//! `tests/it/contract.rs` proves equal to what the code generates), with the
//! record rules of docs/asyncapi.yaml: a null value only for a TOMBSTONE, and
//! none on `msg`. Shared by the integration tests (`common::contract`) and
//! the library's unit tests (`src/domain/events.rs` includes this file), so
//! both check the same way.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The compiled schemas (boon), each `schemas/<name>.schema.json` compiled
/// once per process with format assertions on ("date-time", "date").
#[derive(Default)]
struct Compiled {
    schemas: boon::Schemas,
    index: HashMap<String, boon::SchemaIndex>,
}

fn validate_json(name: &str, bytes: &[u8]) -> Result<(), String> {
    static CACHE: OnceLock<Mutex<Compiled>> = OnceLock::new();
    let doc: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("{name}: not JSON ({e}): {}", String::from_utf8_lossy(bytes)))?;
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    let Compiled { schemas, index } = &mut *cache;
    let sch = match index.get(name) {
        Some(i) => *i,
        None => {
            let path = format!("{}/schemas/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
            let i = compile(&path, schemas)?;
            index.insert(name.to_string(), i);
            i
        }
    };
    schemas
        .validate(&doc, sch)
        .map_err(|e| format!("{name}: {e}\nin {doc}"))
}

/// Compiles the JSON Schema file at `path` into `schemas`, format
/// assertions on (the draft 2020-12 default leaves "format" an annotation).
pub fn compile(path: &str, schemas: &mut boon::Schemas) -> Result<boon::SchemaIndex, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let schema: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    let url = format!("file://{path}");
    compiler
        .add_resource(&url, schema)
        .map_err(|e| format!("{path}: {e:#}"))?;
    compiler
        .compile(&url, schemas)
        .map_err(|e| format!("{path}: not a valid schema: {e:#}"))
}

/// Checks one record of logical topic `topic` (`msg`, `schd`, `season`): its key, its
/// value (`None` = a null value) and the `event-type` it carries.
pub fn check_record(
    topic: &str,
    key: &[u8],
    event_type: &str,
    value: Option<&[u8]>,
) -> Result<(), String> {
    // Keys are raw bytes: the FLID's digits are JSON text already; a key
    // that is not JSON (the season series key) is checked as a JSON string.
    let quoted;
    let key_json = if serde_json::from_slice::<serde_json::Value>(key).is_ok() {
        key
    } else {
        quoted = serde_json::to_vec(&String::from_utf8_lossy(key)).unwrap_or_default();
        &quoted[..]
    };
    validate_json(&format!("{topic}-key"), key_json)?;
    match (event_type, value) {
        ("UPSERT", Some(v)) => validate_json(&format!("{topic}-value"), v),
        ("TOMBSTONE", None) if topic != "msg" => Ok(()),
        (t, v) => Err(format!(
            "{topic} record {}: event-type {t} with {} value (a null value is a TOMBSTONE, \
             and `msg` has none)",
            String::from_utf8_lossy(key),
            if v.is_some() { "a" } else { "a null" }
        )),
    }
}

/// [`check_record`], panicking with the reason (for test helpers).
pub fn assert_record(topic: &str, key: &[u8], event_type: &str, value: Option<&[u8]>) {
    if let Err(e) = check_record(topic, key, event_type, value) {
        panic!("a record breaks the consumer contract: {e}");
    }
}

/// The logical topic of an outbox target (`KAFKA:msg` → `msg`).
pub fn topic_of(target: &str) -> &str {
    target.strip_prefix("KAFKA:").unwrap_or(target)
}
