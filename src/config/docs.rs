//! The key reference (`msgx config docs`): every key of the file with its
//! type, its default and what it means, generated from the config types, so
//! the table in `docs/configuration.md` cannot drift from the code.
//!
//! The keys and types come from the JSON Schema of [`Config`] (schemars
//! reads the serde attributes, so a key is spelled as the parser spells it),
//! each default from `Config::default()`, and each meaning from the first
//! paragraph of the field's doc comment. Later paragraphs of a doc comment
//! are for developers and stay out of the table. Keys are listed in
//! alphabetical order; a field that is a table of its own (`[msgx.mailbox.tls]`)
//! is listed key by key, a free-form table (`msgx.kafka.properties`) as one key.

use super::{Config, Dur};
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The line before the generated table in a document.
pub const BEGIN_MARKER: &str = "<!-- BEGIN generated: msgx config docs -->";
/// The line after it.
pub const END_MARKER: &str = "<!-- END generated -->";

/// One key of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDoc {
    /// The dotted TOML key, e.g. `msgx.pipeline.claim-batch`.
    pub key: String,
    /// `integer`, `boolean`, `string`, `duration`, `[duration]`, `a | b`, …
    pub ty: String,
    /// The default as TOML (`500`, `"30s"`, `["LDM"]`), or `None` when the
    /// key is unset by default.
    pub default: Option<String>,
    /// The first paragraph of the field's doc comment, on one line.
    pub meaning: String,
}

/// Why a document's generated table could not be found.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DocsError {
    #[error("no line {BEGIN_MARKER:?} followed by a line {END_MARKER:?}")]
    NoMarkers,
}

/// Every key, in alphabetical order.
pub fn keys() -> Vec<KeyDoc> {
    let schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<Config>()
        .to_value();
    // Serializing the defaults cannot fail (string keys, no foreign
    // types); were it ever to, every default would show as unset and the
    // document test would say so.
    let defaults = serde_json::to_value(Config::default()).unwrap_or(Value::Null);
    let mut out = Vec::new();
    walk("", &schema, Some(&defaults), &mut out);
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// The markdown table of [`keys`], one row per key, with a final newline.
pub fn markdown() -> String {
    let mut out = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
    for k in keys() {
        let default = k
            .default
            .as_deref()
            .map_or_else(|| "unset".to_string(), |d| format!("`{d}`"));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.key,
            cell(&k.ty),
            cell(&default),
            cell(&k.meaning)
        ));
    }
    out
}

/// The text between the marker lines of `document` (without them).
pub fn generated_part(document: &str) -> Result<&str, DocsError> {
    let (start, end) = block(document)?;
    Ok(&document[start..end])
}

/// `document` with the text between its marker lines replaced by `table`.
pub fn replace_generated(document: &str, table: &str) -> Result<String, DocsError> {
    let (start, end) = block(document)?;
    Ok(format!("{}{table}{}", &document[..start], &document[end..]))
}

/// Byte range of the generated text: after the begin marker's line, up to
/// the start of the end marker's line.
fn block(document: &str) -> Result<(usize, usize), DocsError> {
    let begin = document.find(BEGIN_MARKER).ok_or(DocsError::NoMarkers)?;
    let start = document[begin..]
        .find('\n')
        .map(|n| begin + n + 1)
        .ok_or(DocsError::NoMarkers)?;
    let end = document[start..]
        .find(END_MARKER)
        .map(|n| start + n)
        .ok_or(DocsError::NoMarkers)?;
    Ok((start, end))
}

/// A table cell: pipes escaped, so a meaning may quote `a|b`.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Lists the keys under `prefix`: a schema with `properties` is a table of
/// keys, anything else one key.
fn walk(prefix: &str, schema: &Value, default: Option<&Value>, out: &mut Vec<KeyDoc>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        out.push(KeyDoc {
            key: prefix.to_string(),
            ty: type_name(schema),
            default: default
                .filter(|d| !d.is_null())
                .map(|d| default_text(schema, d)),
            meaning: meaning(schema),
        });
        return;
    };
    for (name, sub) in properties {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        walk(&key, sub, default.and_then(|d| d.get(name)), out);
    }
}

/// The first paragraph of the schema's description on one line.
fn meaning(schema: &Value) -> String {
    let text = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let first = text.split("\n\n").next().unwrap_or("");
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The type of a key in a few words: the JSON type, a string's format, a
/// list's element type in brackets, the values of an enumeration.
fn type_name(schema: &Value) -> String {
    let variants = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    if let Some(variants) = variants {
        let values: Vec<String> = variants
            .iter()
            .filter_map(|v| v.get("const"))
            .map(toml_text)
            .collect();
        if values.len() == variants.len() {
            return values.join(" | ");
        }
        let types: Vec<String> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .map(type_name)
            .collect();
        return types.join(" or ");
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(toml_text).collect::<Vec<_>>().join(" | ");
    }
    let json_type = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "any",
    };
    match json_type {
        "string" => match schema.get("format").and_then(Value::as_str) {
            Some("ip") => "IP address".into(),
            Some(format) => format.into(),
            None => "string".into(),
        },
        "array" => match schema.get("items") {
            Some(items) => format!("[{}]", type_name(items)),
            None => "array".into(),
        },
        "object" => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => format!("table of {}", type_name(values)),
            _ => "table".into(),
        },
        other => other.into(),
    }
}

/// A default as inline TOML, durations spelled as an operator writes them
/// (`"180d"`, not the `"5months 27days 19h 12m"` of their serialization).
fn default_text(schema: &Value, v: &Value) -> String {
    let is_duration = |s: &Value| s.get("format").and_then(Value::as_str) == Some("duration");
    let short = |v: &Value| match v.as_str().map(str::parse::<Dur>) {
        Some(Ok(d)) => toml_text(&Value::String(d.short())),
        _ => toml_text(v),
    };
    match v {
        Value::String(_) if is_duration(schema) => short(v),
        Value::Array(items) if schema.get("items").is_some_and(is_duration) => format!(
            "[{}]",
            items.iter().map(short).collect::<Vec<_>>().join(", ")
        ),
        _ => toml_text(v),
    }
}

/// A JSON value as an inline TOML value.
fn toml_text(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => toml::Value::String(s.clone()).to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{} = {}", toml_key(k), toml_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A TOML key, quoted unless bare.
fn toml_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        k.to_string()
    } else {
        toml::Value::String(k.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = include_str!("../../docs/configuration.md");
    const SAMPLE: &str = include_str!("../../config/msgx.toml");

    /// The key table of docs/configuration.md is exactly what the code
    /// generates, so a key, default or meaning changed in code changes the
    /// document in the same commit.
    #[test]
    fn the_document_table_is_the_generated_one() {
        let documented = generated_part(DOCUMENT).expect("docs/configuration.md has the markers");
        let generated = markdown();
        if documented != generated {
            let first = documented
                .lines()
                .zip(generated.lines())
                .find(|(d, g)| d != g)
                .map_or_else(
                    || "the tables differ in length".to_string(),
                    |(d, g)| format!("document: {d}\ncode:     {g}"),
                );
            panic!(
                "docs/configuration.md's key table differs from the code; regenerate it with\n  \
                 cargo run -q -- config docs --write docs/configuration.md\nfirst difference:\n{first}"
            );
        }
    }

    #[test]
    fn every_key_has_a_type_and_a_meaning() {
        let keys = keys();
        assert!(keys.len() > 100, "{} keys", keys.len());
        for k in &keys {
            assert!(k.key.starts_with("msgx."), "{k:?}");
            assert!(!k.ty.is_empty() && !k.ty.contains("any"), "{k:?}");
            assert!(
                k.meaning.len() > 10 && k.meaning.ends_with(['.', ')']),
                "{}: the first paragraph of its doc comment is its meaning: {:?}",
                k.key,
                k.meaning
            );
        }
        let key = |name: &str| keys.iter().find(|k| k.key == name).expect(name);
        assert_eq!(
            key("msgx.pipeline.claim-batch").default.as_deref(),
            Some("500")
        );
        assert_eq!(key("msgx.pipeline.claim-batch").ty, "integer");
        assert_eq!(
            key("msgx.archive.hst-retention").default.as_deref(),
            Some("\"180d\"")
        );
        assert_eq!(
            key("msgx.pipeline.backfill-backoff").default.as_deref(),
            Some("[\"30s\", \"2m\", \"10m\", \"1h\"]")
        );
        assert_eq!(key("msgx.pipeline.retry.infra.max-attempts").default, None);
        assert_eq!(key("msgx.http.trusted-proxies").ty, "[IP address]");
        assert_eq!(key("msgx.kafka.properties").ty, "table of string");
        assert_eq!(
            key("msgx.schd.absent-field-policy").ty,
            "\"preserve\" | \"clear\""
        );
        assert_eq!(key("msgx.telemetry.otlp-endpoint").ty, "string");
        assert!(
            !keys
                .iter()
                .any(|k| k.key.contains("flush-interval") || k.key == "msgx.pipeline.max-attempts"),
            "removed and deprecated keys are documented in prose, not listed"
        );
    }

    #[test]
    fn the_generated_block_is_replaced_in_place() {
        let doc = format!("intro\n{BEGIN_MARKER}\nold\n{END_MARKER}\nrest\n");
        assert_eq!(generated_part(&doc), Ok("old\n"));
        let new = replace_generated(&doc, "new\n").expect("markers");
        assert_eq!(
            new,
            format!("intro\n{BEGIN_MARKER}\nnew\n{END_MARKER}\nrest\n")
        );
        assert_eq!(generated_part("no markers"), Err(DocsError::NoMarkers));
        assert_eq!(
            generated_part(&format!("{END_MARKER}\n{BEGIN_MARKER}\n")),
            Err(DocsError::NoMarkers)
        );
    }

    /// The packaged sample `config/msgx.toml` is the local development
    /// config and shows every default. Rule: every key it sets is a key of
    /// the reference and carries the code's default, except the two
    /// connection URLs (`msgx.postgres.url`, `msgx.mailbox.url`), which have
    /// no default and which it points at the local services; and every key
    /// that has a default is set in it (a key unset by default appears only
    /// as a comment). Durations compare by value (`"24h"` = `"1d"`).
    #[test]
    fn the_sample_config_sets_known_keys_to_their_defaults() {
        const DELIBERATE: [&str; 2] = ["msgx.postgres.url", "msgx.mailbox.url"];
        let keys = keys();
        let sample: toml::Table = toml::from_str(SAMPLE).expect("config/msgx.toml is TOML");
        let mut set = Vec::new();
        flatten("", &toml::Value::Table(sample), &keys, &mut set);
        let mut problems = Vec::new();
        for (key, value) in &set {
            let Some(doc) = keys.iter().find(|k| &k.key == key) else {
                problems.push(format!("{key}: not a key of the reference"));
                continue;
            };
            if DELIBERATE.contains(&key.as_str()) {
                continue;
            }
            let default = doc.default.as_deref().map(|text| {
                let mut t: toml::Table =
                    toml::from_str(&format!("v = {text}")).expect("a default is TOML");
                t.remove("v").expect("v")
            });
            if default.map(|d| comparable(&d)) != Some(comparable(value)) {
                problems.push(format!(
                    "{key}: the sample says {value}, the code's default is {}",
                    doc.default.as_deref().unwrap_or("unset")
                ));
            }
        }
        for k in keys.iter().filter(|k| k.default.is_some()) {
            if !set.iter().any(|(key, _)| key == &k.key) {
                problems.push(format!("{}: has a default but is not in the sample", k.key));
            }
        }
        assert!(
            problems.is_empty(),
            "config/msgx.toml:\n{}",
            problems.join("\n")
        );
    }

    /// The sample's keys as dotted paths: a table is descended into unless
    /// its path is a key of the reference (`msgx.kafka.properties`).
    fn flatten(
        prefix: &str,
        v: &toml::Value,
        keys: &[KeyDoc],
        out: &mut Vec<(String, toml::Value)>,
    ) {
        match v {
            toml::Value::Table(t) if !keys.iter().any(|k| k.key == prefix) => {
                for (name, child) in t {
                    let path = if prefix.is_empty() {
                        name.clone()
                    } else {
                        format!("{prefix}.{name}")
                    };
                    flatten(&path, child, keys, out);
                }
            }
            _ => out.push((prefix.to_string(), v.clone())),
        }
    }

    /// A value with every duration string replaced by its length, so
    /// spellings of one duration compare equal.
    fn comparable(v: &toml::Value) -> toml::Value {
        match v {
            toml::Value::String(s) => match s.parse::<Dur>() {
                Ok(d) => toml::Value::String(format!("{:?}", d.std())),
                Err(_) => v.clone(),
            },
            toml::Value::Array(items) => toml::Value::Array(items.iter().map(comparable).collect()),
            other => other.clone(),
        }
    }
}
