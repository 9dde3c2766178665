//! The published contract for consumers: JSON Schemas
//! (draft 2020-12) of every Kafka record key and value msgx produces,
//! generated from the Rust types that build them, and committed in
//! `schemas/` so consumers can read them and a test can prove they are what
//! the code generates (`msgx contract export --check`). The AsyncAPI
//! document `docs/asyncapi.yaml` refers to these files.
//!
//! Pure: no I/O except [`export`] and [`check`], which read or write the
//! directory they are given. Documents of upper layers (the ACRIS API's
//! OpenAPI document, src/acris/openapi.rs) are handed in as [`Published`]
//! files by `msgx contract export` ([`export_with`], [`check_with`]).

use std::path::{Path, PathBuf};

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use crate::domain::audit::AuditEvent;
use crate::domain::events::{ChangeNotification, SchdProjection};
use crate::domain::season::SeasonRecord;

/// Which part of a Kafka record a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Key,
    Value,
}

impl Part {
    fn as_str(self) -> &'static str {
        match self {
            Part::Key => "key",
            Part::Value => "value",
        }
    }
}

/// One published schema.
#[derive(Debug, Clone)]
pub struct RecordSchema {
    /// The logical topic (`msg`, `schd`; the Kafka names are configurable,
    /// `msgx.kafka.topic-*`).
    pub topic: &'static str,
    pub part: Part,
    pub schema: Value,
}

impl RecordSchema {
    /// Its file in `schemas/`: `<topic>-<part>.schema.json`.
    pub fn file_name(&self) -> String {
        format!("{}-{}.schema.json", self.topic, self.part.as_str())
    }

    /// The file's text: pretty JSON with a final newline.
    pub fn text(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.schema).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// Every published schema, in file order. A new topic adds its key and
/// value here, one line each (as the `season` topic did).
pub fn schemas() -> Vec<RecordSchema> {
    vec![
        flid_key("msg"),
        value::<ChangeNotification>("msg"),
        flid_key("schd"),
        value::<SchdProjection>("schd"),
        series_key("season"),
        value::<SeasonRecord<'static>>("season"),
        user_key("audit"),
        value::<AuditEvent<'static>>("audit"),
    ]
}

fn settings() -> SchemaSettings {
    // The schemas describe what msgx writes: every field is required.
    SchemaSettings::draft2020_12().for_serialize()
}

/// The schema of a record value whose JSON is `T`'s serialisation.
fn value<T: JsonSchema>(topic: &'static str) -> RecordSchema {
    let schema: Schema = settings().into_generator().into_root_schema_for::<T>();
    let mut schema = schema.to_value();
    close_objects(&mut schema);
    RecordSchema {
        topic,
        part: Part::Value,
        schema,
    }
}

/// The key of the flight topics: `MSG_EVENT.PARTITION_KEY`, the FLID in
/// decimal ASCII, whose bytes are also its JSON text (§8.1).
fn flid_key(topic: &'static str) -> RecordSchema {
    let mut schema = settings().into_generator().into_root_schema_for::<i64>();
    schema.insert("title".into(), json!(format!("{topic} key: FLID")));
    schema.insert(
        "description".into(),
        json!(
            "The FLID in decimal ASCII digits (e.g. `9001`), which is also its JSON text. \
             One FLID is always in one partition, so its records keep their order."
        ),
    );
    RecordSchema {
        topic,
        part: Part::Key,
        schema: schema.to_value(),
    }
}

/// The key of the `season` topic: `SNAM|ALCD|FLNO|MVIN|STDT` as raw text
/// (docs/season.md). Keys are raw bytes; one that is not JSON text is
/// checked as the JSON string of its bytes.
fn series_key(topic: &'static str) -> RecordSchema {
    text_key(
        topic,
        "series",
        "`SNAM|ALCD|FLNO|MVIN|STDT` (STDT as YYYY-MM-DD) in UTF-8, not JSON-quoted. \
         One series is always in one partition, so its records keep their order.",
        (
            "pattern",
            json!("^[^|]+\\|[^|]+\\|[^|]+\\|[^|]+\\|[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
        ),
    )
}

/// The key of the `audit` topic: the acting user's name as raw UTF-8 text
/// (not JSON-quoted), so one operator's actions stay in order.
fn user_key(topic: &'static str) -> RecordSchema {
    text_key(
        topic,
        "user",
        "The acting user (the console user, the CLI's `--actor` or `$USER`, or `msgx`) \
         in UTF-8, not JSON-quoted. One user is always in one partition, so their \
         actions keep their order.",
        ("minLength", json!(1)),
    )
}

/// A raw-text key schema (a string, checked as the JSON string of its
/// bytes) with one constraint.
fn text_key(
    topic: &'static str,
    what: &str,
    description: &str,
    (constraint, value): (&str, Value),
) -> RecordSchema {
    let mut schema = settings().into_generator().into_root_schema_for::<String>();
    schema.insert("title".into(), json!(format!("{topic} key: {what}")));
    schema.insert("description".into(), json!(description));
    schema.insert(constraint.into(), value);
    RecordSchema {
        topic,
        part: Part::Key,
        schema: schema.to_value(),
    }
}

/// Makes every object schema with `properties` exact: msgx writes exactly
/// these keys, so a key added in code without the schema fails validation
/// (consumers should still ignore unknown keys, docs/asyncapi.yaml).
fn close_objects(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for child in map.values_mut() {
                close_objects(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// Why [`export`] or [`check`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ContractError + '_ {
    move |source| ContractError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One generated file of the contract: its name in `schemas/` and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub file_name: String,
    pub text: String,
}

/// Every Kafka record schema as a [`Published`] file, then `extra`.
fn published(extra: Vec<Published>) -> Vec<Published> {
    schemas()
        .into_iter()
        .map(|s| Published {
            file_name: s.file_name(),
            text: s.text(),
        })
        .chain(extra)
        .collect()
}

/// Writes every schema into `dir` (created if missing); returns the paths.
pub fn export(dir: &Path) -> Result<Vec<PathBuf>, ContractError> {
    export_with(dir, Vec::new())
}

/// [`export`] and the files `extra`.
pub fn export_with(dir: &Path, extra: Vec<Published>) -> Result<Vec<PathBuf>, ContractError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut written = Vec::new();
    for s in published(extra) {
        let path = dir.join(&s.file_name);
        std::fs::write(&path, &s.text).map_err(io(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// The differences between `dir` and what the code generates: a missing or
/// different file, or a `*.schema.json` no topic generates. Empty = in sync.
pub fn check(dir: &Path) -> Result<Vec<String>, ContractError> {
    check_with(dir, Vec::new())
}

/// [`check`], the files `extra` included.
pub fn check_with(dir: &Path, extra: Vec<Published>) -> Result<Vec<String>, ContractError> {
    let mut problems = Vec::new();
    let expected = published(extra);
    for s in &expected {
        let path = dir.join(&s.file_name);
        match std::fs::read_to_string(&path) {
            Ok(text) if text == s.text => {}
            Ok(_) => problems.push(format!(
                "{} differs from the code (run `msgx contract export`)",
                path.display()
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                problems.push(format!("{} is missing", path.display()))
            }
            Err(e) => return Err(io(&path)(e)),
        }
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(problems),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut stale: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.ends_with(".schema.json"))
        .filter(|n| !expected.iter().any(|s| s.file_name == *n))
        .collect();
    stale.sort();
    for n in stale {
        problems.push(format!(
            "{} is not generated by any topic",
            dir.join(n).display()
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_draft_2020_12_with_a_title() {
        for s in schemas() {
            assert_eq!(
                s.schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema",
                "{}",
                s.file_name()
            );
            assert!(s.schema["title"].is_string(), "{}", s.file_name());
        }
    }

    #[test]
    fn the_projection_schema_has_every_scalar_and_closed_items() {
        let schd = schemas()
            .into_iter()
            .find(|s| s.file_name() == "schd-value.schema.json")
            .expect("schd value");
        let props = schd.schema["properties"].as_object().expect("properties");
        for tag in crate::codec::ScalarTag::ALL {
            let key = tag.name().to_ascii_lowercase();
            assert_eq!(
                props.contains_key(&key),
                key != "flid" || props.contains_key("flid")
            );
        }
        let gate = &schd.schema["$defs"]["GateItem"];
        assert_eq!(gate["additionalProperties"], false, "{gate}");
        assert!(
            gate["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("pgct"))),
            "serialize contract: nullable keys are required too: {gate}"
        );
    }
}
