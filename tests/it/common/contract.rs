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

type Validators = HashMap<String, std::sync::Arc<jsonschema::Validator>>;

/// The validator of `schemas/<name>.schema.json`, compiled once per process.
fn validator(name: &str) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
    static CACHE: OnceLock<Mutex<Validators>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = cache.get(name) {
        return Ok(v.clone());
    }
    let path = format!("{}/schemas/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let schema: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let v = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .map_err(|e| format!("{path}: not a valid schema: {e}"))?;
    let v = std::sync::Arc::new(v);
    cache.insert(name.to_string(), v.clone());
    Ok(v)
}

fn validate_json(name: &str, bytes: &[u8]) -> Result<(), String> {
    let doc: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("{name}: not JSON ({e}): {}", String::from_utf8_lossy(bytes)))?;
    let v = validator(name)?;
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}: {}\nin {doc}", errors.join("; ")))
    }
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
