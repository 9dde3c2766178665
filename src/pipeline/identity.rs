//! Business identity and ignore rules (design §2). Pure, except
//! [`ensure_recorded`], which holds the identity algorithm to the one this
//! database recorded at its first start.

use crate::codec::Meta;
use crate::store::pg::setting::{self, Recorded};
use chrono::{DateTime, Utc};

/// `Identity.of`: `SNDR|TYPE|STYP|SEQN`, plus `|yyyyMMdd` of DTTM when
/// `msgx.identity.include-day-boundary` is on (C-20, Q11). Never change the
/// algorithm after go-live: old identities would stop matching.
pub fn identity_of(meta: &Meta, include_day_boundary: bool) -> String {
    let mut key = format!(
        "{}|{}|{}|{}",
        meta.sndr, meta.msg_type, meta.styp, meta.seqn
    );
    if include_day_boundary {
        match meta.dttm {
            Some(t) => key.push_str(&format!("|{}", t.format("%Y%m%d"))),
            None => key.push_str("|-"),
        }
    }
    key
}

/// The identity a message binds: [`identity_of`], scoped to its compat
/// client when it was written through `POST /cminmsgs/send`
/// (`compat:<principal>|SNDR|TYPE|STYP|SEQN`; docs/pipeline.md "Compat
/// identities"). A compat message dedups against
/// the same client's other messages (a client's retry is still a
/// `duplicate-of`, §4.4), but never holds the identity of a message the
/// AODB writes into the mailbox itself, before or after it: the shared
/// mailbox's own writers keep the plain identity space.
pub fn scoped_identity(meta: &Meta, include_day_boundary: bool, compat: Option<&str>) -> String {
    let key = identity_of(meta, include_day_boundary);
    match compat {
        Some(principal) => format!("compat:{principal}|{key}"),
        None => key,
    }
}

/// The MSGX_SETTING key of the identity algorithm.
pub const SETTING: &str = "identity.include-day-boundary";

/// Why the configured identity algorithm may not run on this database.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// There is no `msgx identity migrate`: the day boundary needs each
    /// message's DTTM, which PROC_STATE does not keep (the raw text may be
    /// purged), and dropping it would merge identities that differ only by
    /// day into unique-key conflicts. So the only safe way is a new database.
    #[error(
        "msgx.identity.include-day-boundary is {configured} in the configuration, but this \
         database recorded {recorded} ({by}, {at}). The identity algorithm may not change after \
         go-live (design §2): every stored IDENTITY_KEY was made with the recorded one, so \
         duplicates of messages already processed would no longer be recognised, and there is \
         no safe in-place migration. Set msgx.identity.include-day-boundary = {recorded} again; \
         to really change it, start from a new, empty state database (create it, run \
         `msgx migrate`, cut over as in docs/operations.md §2).",
        at = .at.format("%Y-%m-%d %H:%M:%S UTC")
    )]
    Changed {
        configured: bool,
        recorded: bool,
        at: DateTime<Utc>,
        by: String,
    },
    #[error("msgx_setting {SETTING} holds {0:?}, neither true nor false; fix or delete the row")]
    Unreadable(String),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
}

/// Whether `configured` may run on a database that recorded `recorded`.
pub fn check(configured: bool, recorded: &Recorded) -> Result<(), IdentityError> {
    let value = match recorded.value.as_str() {
        "true" => true,
        "false" => false,
        other => return Err(IdentityError::Unreadable(other.into())),
    };
    if value == configured {
        return Ok(());
    }
    Err(IdentityError::Changed {
        configured,
        recorded: value,
        at: recorded.recorded_at,
        by: recorded.recorded_by.clone(),
    })
}

/// Records `configured` as this database's identity algorithm if none is
/// recorded yet (the first daemon start or pump-drain run), else checks it
/// against the recorded one. `by` names the recorder (`daemon host:pid`).
pub async fn ensure_recorded(
    pool: &sqlx::PgPool,
    configured: bool,
    now: DateTime<Utc>,
    by: &str,
) -> Result<Recorded, IdentityError> {
    let recorded = setting::record_once(pool, SETTING, &configured.to_string(), now, by).await?;
    check(configured, &recorded)?;
    Ok(recorded)
}

/// The first ignore rule (`TYPE`, `TYPE-*` or `TYPE-STYP`, case-insensitive)
/// that matches, as written in the config (for `ignored:<rule>`).
pub fn ignore_rule<'a>(rules: &'a [String], meta: &Meta) -> Option<&'a str> {
    rules.iter().map(String::as_str).find(|rule| {
        let (t, s) = rule.split_once('-').unwrap_or((rule, "*"));
        t.eq_ignore_ascii_case(&meta.msg_type) && (s == "*" || s.eq_ignore_ascii_case(&meta.styp))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn meta(t: &str, s: &str) -> Meta {
        Meta {
            sndr: "AODB".into(),
            seqn: "1243".into(),
            dttm: NaiveDate::from_ymd_opt(2026, 12, 1).and_then(|d| d.and_hms_opt(8, 0, 0)),
            msg_type: t.into(),
            styp: s.into(),
        }
    }

    #[test]
    fn a_compat_identity_is_scoped_to_its_client() {
        let m = meta("FLOP", "APPT");
        let plain = identity_of(&m, false);
        assert_eq!(scoped_identity(&m, false, None), plain);
        let scoped = scoped_identity(&m, false, Some("bridge"));
        assert_eq!(scoped, format!("compat:bridge|{plain}"));
        assert_ne!(scoped, scoped_identity(&m, false, Some("other")));
    }

    #[test]
    fn identity_is_sender_type_subtype_sequence() {
        assert_eq!(
            identity_of(&meta("FLOP", "APPT"), false),
            "AODB|FLOP|APPT|1243"
        );
        assert_eq!(
            identity_of(&meta("FLOP", "APPT"), true),
            "AODB|FLOP|APPT|1243|20261201"
        );
    }

    #[test]
    fn a_changed_algorithm_is_refused_saying_how_to_proceed() {
        let recorded = |v: &str| Recorded {
            value: v.into(),
            recorded_at: DateTime::UNIX_EPOCH,
            recorded_by: "daemon h:1".into(),
        };
        assert!(check(true, &recorded("true")).is_ok());
        assert!(check(false, &recorded("false")).is_ok());
        let e = check(true, &recorded("false")).unwrap_err().to_string();
        assert!(
            e.contains("is true in the configuration")
                && e.contains("recorded false (daemon h:1, 1970-01-01 00:00:00 UTC)")
                && e.contains("new, empty state database"),
            "{e}"
        );
        assert!(matches!(
            check(true, &recorded("yes")),
            Err(IdentityError::Unreadable(_))
        ));
    }

    #[test]
    fn ignore_rules_match_case_insensitively() {
        let rules: Vec<String> = ["ldm", "REGN", "FLOP-psht"].map(String::from).to_vec();
        assert_eq!(ignore_rule(&rules, &meta("LDM", "UPD")), Some("ldm"));
        assert_eq!(ignore_rule(&rules, &meta("REGN", "DNLD")), Some("REGN"));
        assert_eq!(
            ignore_rule(&rules, &meta("FLOP", "PSHT")),
            Some("FLOP-psht")
        );
        assert_eq!(ignore_rule(&rules, &meta("FLOP", "GTDT")), None);
        assert_eq!(
            ignore_rule(&rules, &meta("ERROR", "X")),
            None,
            "EROR is not ERROR"
        );
    }
}
