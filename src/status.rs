//! `msgx status`: what an operator checks first — schema, which instance is
//! active, the watermark, backlog by state, outbox, and each job's last run.

use crate::clock::SharedClock;
use crate::config::Config;
use crate::domain::evidence::{EvidenceState, Replication};
use crate::instance_lock::{self, Holder, LockKey};
use crate::store::mailbox::{Mailbox, MailboxStats};
use crate::store::pg::backfill::BackfillStats;
pub use crate::store::pg::facts::Cursor;
use crate::store::pg::{self, StoreError, facts, job_run};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;

/// The whole status report (`--json` prints it as is).
#[derive(Debug, Serialize)]
pub struct Status {
    pub now: DateTime<Utc>,
    pub schema_version: Option<i64>,
    pub schema_expected: i64,
    /// The process holding the instance lock, if any.
    pub active_instance: Option<Holder>,
    /// `msgx.mailbox.shadow`: msgx never writes to the mailbox.
    pub shadow_mode: bool,
    /// Mailbox row count and highest ID; `None` when unreachable.
    pub mailbox: Option<MailboxStats>,
    /// Why the mailbox could not be read.
    pub mailbox_error: Option<String>,
    /// Highest mailbox ID − W.
    pub watermark_lag: Option<i64>,
    pub cursor: Cursor,
    pub holes_released: i64,
    /// Released holes by the rule that released them.
    pub holes_by_reason: BTreeMap<String, i64>,
    pub late_rows: i64,
    /// Whether holes are released on transaction evidence.
    pub hole_evidence: HoleEvidence,
    /// PROC_STATE counts by state (ARCHIVED shown apart from the backlog).
    pub proc_state: BTreeMap<String, i64>,
    /// `msgx.pipeline.backlog.oldest_unprocessed_seconds` (design §5.1).
    pub oldest_unprocessed_seconds: Option<i64>,
    /// Outbox rows by target and status.
    pub outbox: BTreeMap<String, BTreeMap<String, i64>>,
    /// Age in seconds of the oldest PENDING event, by target.
    pub oldest_unsent_seconds: BTreeMap<String, i64>,
    /// Backfill (design §6): pending, due, overdue (past R), abandoned by reason.
    pub backfill: BackfillStats,
    pub jobs: Vec<job_run::LastRun>,
}

/// Whether transaction evidence releases holes on the configured mailbox,
/// read now (`msgx status`, `msgx doctor`; the daemon's own finding is the
/// metric `msgx_ingest_hole_evidence`).
#[derive(Debug, Clone, Serialize)]
pub struct HoleEvidence {
    /// `EvidenceState::as_str`: `valid`, or why not.
    pub state: &'static str,
    pub valid: bool,
    pub detail: String,
}

/// Reads [`HoleEvidence`]: one evidence read with the server's role
/// (`Mailbox::transaction_evidence`), unless the setting turns it off.
pub async fn hole_evidence(config: &Config, mailbox: Option<&Mailbox>) -> HoleEvidence {
    let (state, detail) = if !config.msgx.pipeline.hole_evidence {
        (EvidenceState::Disabled, None)
    } else {
        match mailbox {
            None => (
                EvidenceState::Unknown,
                Some("the mailbox URL is invalid".to_string()),
            ),
            Some(m) => match m.transaction_evidence(None).await {
                Ok(read) => match read.role {
                    Some(role) => {
                        let state = role.state();
                        let detail = match &role.replication {
                            Replication::Sources(s) if state == EvidenceState::Replica => {
                                Some(format!("{} (source {})", state.explain(), s.join(", ")))
                            }
                            _ => None,
                        };
                        (state, detail)
                    }
                    None => (EvidenceState::Unknown, None),
                },
                Err(e) if e.is_access_denied() => (EvidenceState::NoPrivilege, None),
                Err(e) => (
                    EvidenceState::Unknown,
                    Some(format!(
                        "the open transactions cannot be read ({e}): holes wait \
                         msgx.pipeline.max-commit-delay"
                    )),
                ),
            },
        }
    };
    HoleEvidence {
        state: state.as_str(),
        valid: state.is_valid(),
        detail: detail.unwrap_or_else(|| state.explain().to_string()),
    }
}

/// What msgx's own PostgreSQL says about the pipeline: the part of the
/// status that `/metrics` refreshes on every scrape, so both read
/// the same queries. No mailbox call, no schema check.
#[derive(Debug, Default)]
pub struct PgFacts {
    pub cursor: Cursor,
    pub holes_released: i64,
    /// `max-commit-delay` / `no-live-transaction` → count.
    pub holes_by_reason: BTreeMap<String, i64>,
    pub late_rows: i64,
    pub proc_state: BTreeMap<String, i64>,
    pub oldest_unprocessed_seconds: Option<i64>,
    pub outbox: BTreeMap<String, BTreeMap<String, i64>>,
    /// Age of the oldest PENDING event, by target.
    pub oldest_unsent_seconds: BTreeMap<String, i64>,
    pub backfill: BackfillStats,
    /// When each job last succeeded (any process: daemon or cron `msgx run`).
    pub last_success: BTreeMap<String, DateTime<Utc>>,
}

/// Reads [`PgFacts`] at `now`.
pub async fn pg_facts(
    pool: &PgPool,
    now: DateTime<Utc>,
    config: &Config,
) -> Result<PgFacts, sqlx::Error> {
    let cursor = facts::cursor(pool).await?;
    let holes_by_reason = facts::holes_by_reason(pool).await?;
    let holes_released = holes_by_reason.values().sum();
    let late_rows = facts::late_rows_count(pool).await?;
    let proc_state = facts::states_count(pool).await?;
    // The backlog's age (§5.1).
    let oldest = facts::backlog_oldest(pool).await?;
    let outbox = facts::events_count(pool).await?;
    let oldest_unsent_seconds = facts::events_oldest_pending(pool)
        .await?
        .into_iter()
        .map(|(target, oldest)| (target, (now - oldest).num_seconds().max(0)))
        .collect();
    let p = &config.msgx.pipeline;
    let backfill = pg::backfill::stats(
        pool,
        now,
        now - p.backfill_deadline.chrono(),
        i32::try_from(p.backfill_max_attempts).unwrap_or(i32::MAX),
    )
    .await?;
    Ok(PgFacts {
        cursor,
        holes_released,
        holes_by_reason,
        late_rows,
        proc_state,
        oldest_unprocessed_seconds: oldest.map(|t| (now - t).num_seconds().max(0)),
        outbox,
        oldest_unsent_seconds,
        backfill,
        last_success: job_run::last_successes(pool).await?,
    })
}

/// Reads the status. Fails with [`StoreError::SchemaMismatch`] on an
/// unmigrated database.
pub async fn collect(
    pool: &PgPool,
    mailbox: Option<&Mailbox>,
    clock: &SharedClock,
    config: &Config,
) -> Result<Status, StoreError> {
    let shadow = config.msgx.mailbox.shadow;
    let schema_version = pg::ensure_schema_current(pool).await?;
    let now = clock.now();
    let facts = pg_facts(pool, now, config).await?;
    let (mailbox_stats, mailbox_error) = match mailbox {
        Some(m) => match m.stats().await {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e.to_string())),
        },
        None => (None, Some("mailbox URL is invalid".to_string())),
    };
    let watermark_lag = mailbox_stats
        .and_then(|s| s.max_id)
        .map(|max| watermark_lag(max, facts.cursor.w));
    // An unreachable mailbox is not asked twice.
    let hole_evidence = match &mailbox_error {
        Some(e) if config.msgx.pipeline.hole_evidence => HoleEvidence {
            state: EvidenceState::Unknown.as_str(),
            valid: false,
            detail: format!("the mailbox cannot be read: {e}"),
        },
        _ => hole_evidence(config, mailbox).await,
    };
    Ok(Status {
        now,
        mailbox: mailbox_stats,
        mailbox_error,
        watermark_lag,
        schema_version: Some(schema_version),
        schema_expected: pg::expected_version(),
        active_instance: instance_lock::holder(pool, LockKey::instance()).await?,
        shadow_mode: shadow,
        cursor: facts.cursor,
        holes_released: facts.holes_released,
        holes_by_reason: facts.holes_by_reason,
        late_rows: facts.late_rows,
        hole_evidence,
        proc_state: facts.proc_state,
        oldest_unprocessed_seconds: facts.oldest_unprocessed_seconds,
        outbox: facts.outbox,
        oldest_unsent_seconds: facts.oldest_unsent_seconds,
        backfill: facts.backfill,
        jobs: job_run::last_runs(pool).await?,
    })
}

/// Highest mailbox ID − W, never negative (a seeded W may sit above it).
pub fn watermark_lag(max_id: i64, w: i64) -> i64 {
    (max_id - w).max(0)
}

/// The human-readable form.
pub fn render(s: &Status) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "msgx status at {}",
        s.now.format("%Y-%m-%d %H:%M:%S UTC")
    );
    let _ = writeln!(o, "  schema:          v{} (current)", s.schema_expected);
    let _ = writeln!(
        o,
        "  active instance: {}",
        s.active_instance
            .as_ref()
            .map(|h| h.to_string())
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        o,
        "  mailbox mode:    {}",
        if s.shadow_mode {
            "SHADOW (no writes)"
        } else {
            "normal"
        }
    );
    let _ = writeln!(
        o,
        "  watermark W:     {}{}",
        s.cursor.w,
        s.cursor
            .hole_since
            .map(|t| format!("  (hole at W+1 since {t})"))
            .unwrap_or_default()
    );
    match (&s.mailbox, &s.mailbox_error) {
        (Some(m), _) => {
            let _ = writeln!(
                o,
                "  mailbox:         {} row(s), max ID {}, watermark lag {}",
                m.rows,
                m.max_id
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
                s.watermark_lag
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into())
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(o, "  mailbox:         UNREACHABLE: {e}");
        }
        (None, None) => {}
    }
    let by_reason: Vec<String> = s
        .holes_by_reason
        .iter()
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect();
    let _ = writeln!(
        o,
        "  holes released:  {}{}   late rows: {}",
        s.holes_released,
        if by_reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_reason.join(", "))
        },
        s.late_rows
    );
    let e = &s.hole_evidence;
    let _ = if e.valid {
        writeln!(o, "  hole evidence:   valid")
    } else {
        writeln!(o, "  hole evidence:   NOT USED ({}): {}", e.state, e.detail)
    };
    let states: Vec<String> = s
        .proc_state
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(
        o,
        "  messages:        {}",
        if states.is_empty() {
            "none".to_string()
        } else {
            states.join(" ")
        }
    );
    let _ = writeln!(
        o,
        "  oldest unprocessed: {}",
        s.oldest_unprocessed_seconds
            .map(|n| format!("{n}s"))
            .unwrap_or_else(|| "-".into())
    );
    for (target, by) in &s.outbox {
        let parts: Vec<String> = by.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let oldest = s
            .oldest_unsent_seconds
            .get(target)
            .map(|n| format!("  (oldest unsent {n}s)"))
            .unwrap_or_default();
        let _ = writeln!(o, "  outbox {target}: {}{oldest}", parts.join(" "));
    }
    if s.outbox.is_empty() {
        let _ = writeln!(o, "  outbox:          empty");
    }
    let b = &s.backfill;
    let abandoned: Vec<String> = b
        .abandoned
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(
        o,
        "  backfill:        pending={} due={} overdue(>R)={} over-max-attempts={} confirmed={}{}",
        b.pending,
        b.due,
        b.overdue,
        b.over_max_attempts,
        b.confirmed,
        if s.shadow_mode {
            "  (SHADOW: no marks written)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "  backfill abandoned: {} (unreconciled {})",
        abandoned.join(" "),
        b.abandoned_unreconciled
    );
    let _ = writeln!(o, "  jobs (last run):");
    if s.jobs.is_empty() {
        let _ = writeln!(o, "    none yet");
    }
    for j in &s.jobs {
        let _ = writeln!(
            o,
            "    {:<22} {:<15} items={:<7} {} ({}){}",
            j.job,
            j.outcome,
            j.items,
            j.started_at.format("%Y-%m-%d %H:%M:%S"),
            j.trigger,
            j.error
                .as_ref()
                .map(|e| format!("  error: {e}"))
                .unwrap_or_default()
        );
    }
    o
}
