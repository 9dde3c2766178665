//! Resolving the configured mailbox table names against the server's actual
//! tables.
//!
//! MySQL and MariaDB compare table names case-sensitively on Linux
//! (`lower_case_table_names = 0`), and the predecessor's DDL spells them
//! `cminmsgs` / `coutmsgs` while its documentation writes `CMINMSGS`. msgx
//! therefore looks the configured name up in `information_schema` without
//! regard to case and uses the spelling the server has, and it checks the
//! columns it needs before the first read, so a wrong schema is one clear
//! start-up error instead of `ERROR 1146` on every ingest tick. Column names
//! are case-insensitive in MySQL and need no resolution.

use std::fmt;

/// The columns msgx reads or writes in the inbound table (sis-format §1.6);
/// the processing-mark column is configured and added by the caller.
pub const INBOX_COLUMNS: &[&str] = &["CMINMSGS_ID", "CMINMSGS_CLOB_MSG", "CMINMSGS_DATE_RECEIVED"];

/// The columns msgx writes in the outbound table (sis-format §5).
pub const OUTBOX_COLUMNS: &[&str] = &[
    "COUTMSGS_ID",
    "COUTMSGS_CLOB_MSG",
    "COUTMSGS_DATE_INSERTED",
    "ROUTINGID",
    "COUTMSGS_TRUEFALS_GROUP",
    "COUTMSGS_FINAL_GROUP_IND",
    "COUTMSGS_ACK_REQD",
    "COUTMSGS_ACK_RESEND_TIMES",
    "COUTMSGS_ENCRYPT",
    "COUTMSGS_ERROR",
];

/// Why a configured mailbox table cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "the mailbox URL names no database (schema); add it to msgx.mailbox.url, e.g. mysql://user@host:3306/mailbox"
    )]
    NoDatabase,
    #[error(
        "mailbox schema `{schema}` has no table `{wanted}` (msgx.mailbox.{key}; compared case-insensitively); tables visible to this user: {}",
        list(.found)
    )]
    MissingTable {
        schema: String,
        key: &'static str,
        wanted: String,
        found: Vec<String>,
    },
    #[error(
        "mailbox schema `{schema}` has several tables matching `{wanted}` case-insensitively ({}); set msgx.mailbox.{key} to the exact name",
        list(.candidates)
    )]
    Ambiguous {
        schema: String,
        key: &'static str,
        wanted: String,
        candidates: Vec<String>,
    },
    #[error(
        "mailbox table `{schema}`.`{table}` lacks column(s) {}; it has: {}",
        list(.missing),
        list(.found)
    )]
    MissingColumns {
        schema: String,
        table: String,
        missing: Vec<String>,
        found: Vec<String>,
    },
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".into()
    } else {
        items.join(", ")
    }
}

/// The server's spelling of `wanted`: the exact name when it exists, else
/// the one name equal to it ignoring ASCII case.
pub fn pick_table(
    schema: &str,
    key: &'static str,
    wanted: &str,
    tables: &[String],
) -> Result<String, SchemaError> {
    if tables.iter().any(|t| t == wanted) {
        return Ok(wanted.to_string());
    }
    let candidates: Vec<String> = tables
        .iter()
        .filter(|t| t.eq_ignore_ascii_case(wanted))
        .cloned()
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(SchemaError::MissingTable {
            schema: schema.into(),
            key,
            wanted: wanted.into(),
            found: tables.to_vec(),
        }),
        _ => Err(SchemaError::Ambiguous {
            schema: schema.into(),
            key,
            wanted: wanted.into(),
            candidates,
        }),
    }
}

/// The required columns absent from `found` (ASCII case ignored), in the
/// order of `required`.
pub fn missing_columns(required: &[&str], found: &[String]) -> Vec<String> {
    required
        .iter()
        .filter(|r| !found.iter().any(|f| f.eq_ignore_ascii_case(r)))
        .map(|r| r.to_string())
        .collect()
}

/// A resolved table: where it is and how to write it in SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTable {
    pub schema: String,
    /// The server's spelling.
    pub name: String,
    /// Every column the table has, in ordinal order.
    pub columns: Vec<String>,
}

impl ResolvedTable {
    /// The identifier quoted for SQL (names were validated as plain
    /// identifiers at load, and come from the server here).
    pub fn sql(&self) -> String {
        format!("`{}`", self.name)
    }
}

impl fmt::Display for ResolvedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn either_spelling_finds_the_servers_table() {
        let lower = names(&["cminmsgs", "coutmsgs"]);
        assert_eq!(
            pick_table("mb", "inbox-table", "CMINMSGS", &lower),
            Ok("cminmsgs".into())
        );
        assert_eq!(
            pick_table("mb", "inbox-table", "cminmsgs", &lower),
            Ok("cminmsgs".into())
        );
        let upper = names(&["CMINMSGS"]);
        assert_eq!(
            pick_table("mb", "inbox-table", "cminmsgs", &upper),
            Ok("CMINMSGS".into())
        );
    }

    #[test]
    fn an_exact_match_wins_over_case_variants() {
        let both = names(&["CMINMSGS", "cminmsgs"]);
        assert_eq!(
            pick_table("mb", "inbox-table", "cminmsgs", &both),
            Ok("cminmsgs".into())
        );
        let err = pick_table("mb", "inbox-table", "CminMsgs", &both).unwrap_err();
        assert!(err.to_string().contains("several tables"), "{err}");
    }

    #[test]
    fn a_missing_table_names_the_schema_and_what_exists() {
        let err = pick_table("site_mb", "inbox-table", "cminmsgs", &names(&["other"])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`site_mb`") && text.contains("`cminmsgs`"),
            "{text}"
        );
        assert!(
            text.contains("other") && text.contains("msgx.mailbox.inbox-table"),
            "{text}"
        );
    }

    #[test]
    fn columns_compare_without_case() {
        let found = names(&["cminmsgs_id", "CMINMSGS_CLOB_MSG"]);
        assert_eq!(
            missing_columns(
                &["CMINMSGS_ID", "CMINMSGS_CLOB_MSG", "CMINMSGS_DATE_RECEIVED"],
                &found
            ),
            vec!["CMINMSGS_DATE_RECEIVED".to_string()]
        );
    }
}
