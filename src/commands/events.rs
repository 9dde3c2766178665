//! `msgx events dead|resend|discard`: the operator's view of the outbox DLQ
//! (design §8.3; issue 6, item 4). Exit 0 when every requested ID was a DEAD
//! row and was resolved, 1 otherwise (the others are named).

use crate::delivery::dead_letters::{self, Resolution};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::io::Write;

/// Rows `events dead` shows at most.
pub const DEAD_LIST_LIMIT: i64 = 1000;

/// `msgx events dead [--json]`.
pub async fn dead(pool: &PgPool, json: bool, out: &mut impl Write) -> i32 {
    let rows = match dead_letters::list(pool, DEAD_LIST_LIMIT).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("msgx events dead: {e}");
            return 1;
        }
    };
    let written = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into())
        )
    } else if rows.is_empty() {
        writeln!(out, "no DEAD events")
    } else {
        let mut r = writeln!(
            out,
            "{:>10} {:<11} {:>10} {:<9} {:>7} {:>8} {:<16}  LAST-ERROR",
            "EVENT-ID", "TARGET", "FLID", "TYPE", "VERSION", "ATTEMPTS", "CLASS"
        );
        for e in &rows {
            r = r.and_then(|_| {
                writeln!(
                    out,
                    "{:>10} {:<11} {:>10} {:<9} {:>7} {:>8} {:<16}  {}",
                    e.event_id,
                    e.target,
                    e.partition_key,
                    e.event_type,
                    e.state_version,
                    e.attempts,
                    e.error_class.as_deref().unwrap_or("-"),
                    e.last_error.as_deref().unwrap_or("")
                )
            });
        }
        r
    };
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("msgx events dead: {e}");
            1
        }
    }
}

/// `msgx events resend|discard <id>...`.
pub async fn resolve(
    pool: &PgPool,
    what: Resolution,
    ids: &[i64],
    actor: &str,
    reason: Option<&str>,
    at: DateTime<Utc>,
) -> i32 {
    let verb = match what {
        Resolution::Resend => "resend",
        Resolution::Discard => "discard",
    };
    match dead_letters::resolve(pool, what, ids, actor, reason, at).await {
        Ok(results) => {
            let mut code = 0;
            for r in results {
                if r.applied {
                    println!(
                        "{}: {verb} done (operator_action {})",
                        r.event_id,
                        r.action_id.unwrap_or_default()
                    );
                } else {
                    eprintln!("{}: not a DEAD event; nothing done", r.event_id);
                    code = 1;
                }
            }
            code
        }
        Err(e) => {
            eprintln!("msgx events {verb}: {e}");
            1
        }
    }
}

/// Who is acting: `--actor`, else `$USER`, else `unknown`.
pub fn actor(explicit: Option<&str>) -> String {
    explicit
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}
