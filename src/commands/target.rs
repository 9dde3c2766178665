//! Which databases a command acts on: no silent wrong target. The connection
//! URLs have no built-in default: a command that needs one refuses (exit 2)
//! and says what to set, and every command that writes first names the
//! PostgreSQL host/database and the mailbox host/schema, credentials left out,
//! on stderr and in its `--json`.

use crate::config::Config;
use serde::Serialize;

/// The connections a command needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    pub postgres: bool,
    pub mailbox: bool,
}

impl Needs {
    pub const NONE: Needs = Needs {
        postgres: false,
        mailbox: false,
    };
    pub const POSTGRES: Needs = Needs {
        postgres: true,
        mailbox: false,
    };
    pub const MAILBOX: Needs = Needs {
        postgres: false,
        mailbox: true,
    };
    pub const BOTH: Needs = Needs {
        postgres: true,
        mailbox: true,
    };
}

/// Where a command acts: `host:port/database` per connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mailbox: Option<String>,
}

/// The settings that are missing for `needs`, each naming the key and the
/// environment variable that set it.
pub fn missing(config: &Config, needs: Needs) -> Vec<&'static str> {
    let mut out = Vec::new();
    if needs.postgres && config.msgx.postgres.url.trim().is_empty() {
        out.push("msgx.postgres.url (or MSGX_DATABASE_URL): msgx's own PostgreSQL");
    }
    if needs.mailbox && config.msgx.mailbox.url.trim().is_empty() {
        out.push("msgx.mailbox.url (or MSGX_MAILBOX_URL): the shared MySQL mailbox");
    }
    out
}

impl Target {
    /// The target of a command with `needs`.
    pub fn of(config: &Config, needs: Needs) -> Target {
        Target {
            postgres: needs.postgres.then(|| location(&config.msgx.postgres.url)),
            mailbox: needs.mailbox.then(|| location(&config.msgx.mailbox.url)),
        }
    }

    /// One line for stderr: `PostgreSQL h:5432/msgx · mailbox h:3306/mb`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.postgres {
            parts.push(format!("PostgreSQL {p}"));
        }
        if let Some(m) = &self.mailbox {
            parts.push(format!("mailbox {m}"));
        }
        parts.join(" · ")
    }

    /// `value` (a JSON object) with a `target` member added.
    pub fn into_json(&self, value: impl Serialize) -> serde_json::Value {
        let mut v = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = &mut v {
            map.insert(
                "target".into(),
                serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
            );
        }
        v
    }
}

/// `scheme://user:pw@host:port/db?opts` → `host:port/db`: where, never who
/// or with what secret. A `host=` query parameter (a socket directory) is
/// used when the authority has none.
pub fn location(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let (authority, db) = rest.split_once('/').unwrap_or((rest, ""));
    let host = if authority.is_empty() {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix("host="))
            .unwrap_or("localhost")
    } else {
        authority
    };
    format!("{host}/{db}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_names_host_and_database_without_credentials() {
        assert_eq!(
            location("postgres://msgx:secret@db.example:5432/msgx?sslmode=verify-full"),
            "db.example:5432/msgx"
        );
        assert_eq!(
            location("mysql://u:p@ss@mb:3306/mailbox"),
            "mb:3306/mailbox"
        );
        assert_eq!(
            location("postgres:///msgx?host=/run/postgresql"),
            "/run/postgresql/msgx"
        );
    }

    #[test]
    fn missing_urls_are_named_with_their_variable() {
        let c = Config::default();
        let m = missing(&c, Needs::BOTH);
        assert_eq!(m.len(), 2);
        assert!(m[0].contains("MSGX_DATABASE_URL") && m[1].contains("MSGX_MAILBOX_URL"));
        assert!(missing(&c, Needs::NONE).is_empty());
    }
}
