//! `msgx dev …` (hidden): the checks of the chaos drain (scripts/chaos.sh,
//! docs/RESILIENCE.md) that the harness scripts call. Development and tests
//! only; none of them writes to a database.
//!
//! - `drained`: exit 0 when the run is drained, else 1 with what is left on
//!   one line;
//! - `snapshot --out FILE`: the run's outcome as JSON: PostgreSQL, and the
//!   `msg` and `schd` topics read back from their beginning;
//! - `compare-runs CLEAN CHAOS [--after-rollback]`: the differences of two
//!   snapshots, then the `compare: {…}` line; exit 1 on any difference
//!   (scripts/chaos.sh; with `--after-rollback`, scripts/failover.sh);
//! - `purge-report CLEAN RUN [--raw-missing IDS] [--holes RANGES]`
//!   (scripts/failover.sh `--purge`): the PROC_STATE differences sorted,
//!   `DIFF …` lines for the failing ones, then `purge: {…}`; exit 1 on any;
//! - `caught-up --upto N` (scripts/soak.sh): `caught up to ID N` (exit 0),
//!   what is awaited (exit 1) or `FATAL …` (exit 3);
//! - `verify [--w-log FILE]` (scripts/soak.sh): `FAIL …` lines, then
//!   `verify: {…}`; exit 1 on any failure;
//! - `broker-verify` (scripts/real-broker.sh): `FAIL …` lines, then
//!   `broker-verify: {…}`; exit 1 on any failure.
//!
//! The rules are [`crate::domain::run_compare`]'s (`purge-report`:
//! [`crate::domain::run_compare::purge`]; the last three:
//! [`crate::domain::run_compare::verify`]); the reads are
//! [`crate::store::pg::run_snapshot`]'s and the mailbox's.

use crate::commands::tail::{self, TailError, TailOptions, TailRecord};
use crate::commands::{connect_current, emit, open_mailbox};
use crate::config::{self, Config};
use crate::domain::run_compare::purge::{self, PurgeFacts};
use crate::domain::run_compare::verify::{
    self as checks, BrokerFacts, CatchUpFacts, Verdict, VerifyFacts,
};
use crate::domain::run_compare::{self, DrainFacts, MsgRecord, RecordPlace, Rules, Snapshot};
use crate::exit::Exit;
use crate::store::mailbox::{Mailbox, MailboxError};
use crate::store::pg::run_snapshot;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A topic read back ends after this long without a record (normally it
/// ends earlier, once every partition is at its end).
const TOPIC_IDLE: Duration = Duration::from_secs(5);

/// Why a check could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] sqlx::Error),
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    #[error("reading topic {topic}: {source}")]
    Tail { topic: String, source: TailError },
    #[error("a record of topic {topic} is not JSON: {source}")]
    Record {
        topic: String,
        source: serde_json::Error,
    },
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a snapshot: {source}", path.display())]
    Snapshot {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// `msgx dev drained`: prints `drained` (exit 0), or what is still to do,
/// or why it could not be read, on one line (exit 1).
pub async fn drained(config: &Config) -> Exit {
    let pool = match connect_current(config, "dev drained").await {
        Ok(pool) => pool,
        Err(code) => return code,
    };
    let mailbox = match open_mailbox(config, "dev drained") {
        Ok(m) => m,
        Err(code) => {
            pool.close().await;
            return code;
        }
    };
    let facts = drain_facts(&pool, &mailbox).await;
    pool.close().await;
    mailbox.close().await;
    let (line, code) = match facts {
        Err(e) => (format!("not reachable: {e}"), Exit::Failure),
        Ok(f) => match f.problems() {
            p if p.is_empty() => ("drained".to_string(), Exit::Ok),
            p => (p.join("; "), Exit::Failure),
        },
    };
    let line = line.replace('\n', " ");
    match emit(&mut std::io::stdout().lock(), &format!("{line}\n")) {
        Exit::Ok => code,
        failed => failed,
    }
}

async fn drain_facts(pool: &PgPool, mailbox: &Mailbox) -> Result<DrainFacts, DevError> {
    let stats = mailbox.stats().await?;
    let state = run_snapshot::state_counts(pool).await?;
    Ok(DrainFacts {
        mailbox_rows: stats.rows,
        mailbox_last_id: stats.max_id.unwrap_or(0),
        state,
    })
}

/// `msgx dev snapshot --out FILE`: writes the snapshot and prints one line
/// saying what it holds; exit 1 when it cannot be taken or written.
pub async fn snapshot(config: &Config, path: &Path) -> Exit {
    let pool = match connect_current(config, "dev snapshot").await {
        Ok(pool) => pool,
        Err(code) => return code,
    };
    let taken = take(&config.msgx.kafka, &pool).await;
    pool.close().await;
    let written = taken.and_then(|snap| write(path, &snap).map(|()| snap));
    match written {
        Ok(snap) => emit(
            &mut std::io::stdout().lock(),
            &format!("snapshot: {} → {}\n", snap.describe(), path.display()),
        ),
        Err(e) => {
            eprintln!("msgx dev snapshot: {e}");
            Exit::Failure
        }
    }
}

/// PostgreSQL first (the run is over), then both topics from their beginning.
async fn take(kafka: &config::Kafka, pool: &PgPool) -> Result<Snapshot, DevError> {
    let flights = run_snapshot::flight_tables(pool)
        .await?
        .into_iter()
        .map(|(table, rows)| {
            let rows = run_compare::flight_rows(&table, rows);
            (table, rows)
        })
        .collect();
    let proc_state = run_snapshot::outcomes(pool).await?;
    let outbox = run_snapshot::outbox_counts(pool).await?;
    let holes_released = run_snapshot::holes_released(pool).await?;

    let not_json = |topic: &str| {
        let topic = topic.to_string();
        move |source| DevError::Record { topic, source }
    };
    let msg_records = read_topic(kafka, &kafka.topic_msg)
        .await?
        .into_iter()
        .map(|r| {
            let place = RecordPlace {
                partition: r.partition,
                offset: r.offset,
                state_version: r.header_i64("state-version"),
                event_id: r.header_i64("event-id"),
            };
            MsgRecord::new(r.key, place, r.value.as_deref())
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(not_json(&kafka.topic_msg))?;
    // In the order read: offset order within a key's partition, so the last
    // one read is the key's last record.
    let mut schd_last = BTreeMap::new();
    for r in read_topic(kafka, &kafka.topic_schd).await? {
        let value =
            run_compare::record_value(r.value.as_deref()).map_err(not_json(&kafka.topic_schd))?;
        schd_last.insert(r.key.unwrap_or_else(|| "null".into()), value);
    }
    Ok(Snapshot {
        proc_state,
        flights,
        outbox,
        holes_released,
        msg_records,
        schd_last,
    })
}

/// Every record of `topic` now, from its beginning.
async fn read_topic(kafka: &config::Kafka, topic: &str) -> Result<Vec<TailRecord>, DevError> {
    let opts = TailOptions {
        from_beginning: true,
        max: None,
        follow: false,
        idle: TOPIC_IDLE,
    };
    let mut records = Vec::new();
    tail::tail(kafka, topic, &opts, |r| records.push(r.clone()))
        .await
        .map_err(|source| DevError::Tail {
            topic: topic.to_string(),
            source,
        })?;
    Ok(records)
}

fn write(path: &Path, snap: &Snapshot) -> Result<(), DevError> {
    let file_error = |source| DevError::File {
        path: path.to_path_buf(),
        source,
    };
    let text = serde_json::to_vec(snap).map_err(|source| DevError::Snapshot {
        path: path.to_path_buf(),
        source,
    })?;
    std::fs::write(path, text).map_err(file_error)
}

fn read(path: &Path) -> Result<Snapshot, DevError> {
    let text = std::fs::read(path).map_err(|source| DevError::File {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&text).map_err(|source| DevError::Snapshot {
        path: path.to_path_buf(),
        source,
    })
}

/// `msgx dev compare-runs CLEAN CHAOS [--after-rollback]`: prints the
/// differences under `rules` and the `compare: {…}` line; exit 0 when the
/// runs agree, 1 on any difference or an unreadable snapshot.
pub fn compare_runs(clean: &Path, chaos: &Path, rules: Rules, out: &mut dyn Write) -> Exit {
    let (clean, chaos) = match read_both(clean, chaos) {
        Ok(both) => both,
        Err(e) => {
            eprintln!("msgx dev compare-runs: {e}");
            return Exit::Failure;
        }
    };
    let found = run_compare::compare(&clean, &chaos, rules);
    match emit(out, &found.text()) {
        Exit::Ok if found.summary.differences == 0 => Exit::Ok,
        Exit::Ok => Exit::Failure,
        failed => failed,
    }
}

/// `msgx dev purge-report CLEAN RUN [--raw-missing IDS] [--holes RANGES]`:
/// prints the failing differences and the `purge: {…}` line
/// ([`purge::purge_report`]); exit 0 when it passed, 1 when not or a
/// snapshot is unreadable.
pub fn purge_report(clean: &Path, run: &Path, facts: &PurgeFacts, out: &mut dyn Write) -> Exit {
    let (clean, run) = match read_both(clean, run) {
        Ok(both) => both,
        Err(e) => {
            eprintln!("msgx dev purge-report: {e}");
            return Exit::Failure;
        }
    };
    let report = purge::purge_report(&clean, &run, facts);
    match emit(out, &report.text()) {
        Exit::Ok => Exit::from_success(report.passed()),
        failed => failed,
    }
}

fn read_both(a: &Path, b: &Path) -> Result<(Snapshot, Snapshot), DevError> {
    Ok((read(a)?, read(b)?))
}

/// What `caught-up` found.
enum CatchUp {
    /// Outcomes waiting cannot mend, one phrase each.
    Fatal(Vec<String>),
    /// How far the run got.
    Facts(CatchUpFacts),
}

/// The fatal outcomes first (nothing else is read when there is one), then
/// the mailbox's rows up to `upto` and PostgreSQL's progress on them.
async fn catch_up(pool: &PgPool, mailbox: &Mailbox, upto: i64) -> Result<CatchUp, DevError> {
    let fatal = run_snapshot::fatal_facts(pool).await?.problems();
    if !fatal.is_empty() {
        return Ok(CatchUp::Fatal(fatal));
    }
    let marks = mailbox.mark_counts(Some(upto)).await?;
    let (done, unsent) = run_snapshot::catch_up_counts(pool, upto).await?;
    Ok(CatchUp::Facts(CatchUpFacts {
        upto,
        mailbox_rows: marks.rows,
        unmarked: marks.unmarked,
        done,
        unsent,
    }))
}

/// `msgx dev caught-up --upto N`: prints `caught up to ID N` (exit 0), what
/// is still awaited or why it could not be read (exit 1), or `FATAL …`
/// naming the outcomes waiting cannot mend ([`Exit::Fatal`]), on one line.
pub async fn caught_up(config: &Config, upto: i64) -> Exit {
    let found = with_stores(
        config,
        "dev caught-up",
        async |pool: &PgPool, mailbox: &Mailbox| catch_up(pool, mailbox, upto).await,
    )
    .await;
    let found = match found {
        Ok(found) => found,
        Err(code) => return code,
    };
    let (line, code) = match found {
        Err(e) => (format!("not reachable: {e}"), Exit::Failure),
        Ok(CatchUp::Fatal(problems)) => (format!("FATAL {}", problems.join("; ")), Exit::Fatal),
        Ok(CatchUp::Facts(f)) => (f.line(), Exit::from_success(f.waiting().is_empty())),
    };
    let line = line.replace('\n', " ");
    match emit(&mut std::io::stdout().lock(), &format!("{line}\n")) {
        Exit::Ok => code,
        failed => failed,
    }
}

/// Prints a check's report; exit 0 when it passed, 1 on any failure.
fn report<S: Serialize>(verdict: &Verdict<S>, name: &str) -> Exit {
    match emit(&mut std::io::stdout().lock(), &verdict.text(name)) {
        Exit::Ok => Exit::from_success(verdict.passed()),
        failed => failed,
    }
}

/// Opens both stores for `what`, runs `check` on them and closes them.
async fn with_stores<T>(
    config: &Config,
    what: &str,
    check: impl AsyncFnOnce(&PgPool, &Mailbox) -> Result<T, DevError>,
) -> Result<Result<T, DevError>, Exit> {
    let pool = connect_current(config, what).await?;
    let mailbox = match open_mailbox(config, what) {
        Ok(m) => m,
        Err(code) => {
            pool.close().await;
            return Err(code);
        }
    };
    let found = check(&pool, &mailbox).await;
    pool.close().await;
    mailbox.close().await;
    Ok(found)
}

/// `msgx dev verify [--w-log FILE]`: the soak's invariants after the run
/// ([`checks::verify`]); `FAIL …` lines, then `verify: {…}`; exit 1 on any
/// failure or when the facts cannot be read.
pub async fn verify(config: &Config, w_log: Option<&Path>) -> Exit {
    let kafka = &config.msgx.kafka;
    let facts = with_stores(
        config,
        "dev verify",
        async |pool: &PgPool, mailbox: &Mailbox| -> Result<VerifyFacts, DevError> {
            let w_log = match w_log {
                Some(path) => {
                    Some(
                        std::fs::read_to_string(path).map_err(|source| DevError::File {
                            path: path.to_path_buf(),
                            source,
                        })?,
                    )
                }
                None => None,
            };
            Ok(VerifyFacts {
                drain: drain_facts(pool, mailbox).await?.problems(),
                mailbox_ids: mailbox.ids().await?,
                msg_ids: run_snapshot::msg_ids(pool).await?,
                unmarked: mailbox.mark_counts(None).await?.unmarked,
                fatal: run_snapshot::fatal_facts(pool).await?,
                msg_events: run_snapshot::msg_events(pool).await?,
                msg_records: topic_records(kafka, &kafka.topic_msg, run_compare::record_value)
                    .await?,
                w_log,
            })
        },
    )
    .await;
    match facts {
        Err(code) => code,
        Ok(Err(e)) => {
            eprintln!("msgx dev verify: {e}");
            Exit::Failure
        }
        Ok(Ok(facts)) => report(&checks::verify(&facts), "verify"),
    }
}

/// `msgx dev broker-verify`: after a drain, the topics hold exactly the
/// outbox ([`checks::broker_verify`]); `FAIL …` lines, then
/// `broker-verify: {…}`; exit 1 on any failure or when the facts cannot be
/// read.
pub async fn broker_verify(config: &Config) -> Exit {
    let kafka = &config.msgx.kafka;
    let facts = with_stores(
        config,
        "dev broker-verify",
        async |pool: &PgPool, mailbox: &Mailbox| -> Result<BrokerFacts, DevError> {
            Ok(BrokerFacts {
                drain: drain_facts(pool, mailbox).await?.problems(),
                fatal: run_snapshot::fatal_facts(pool).await?,
                msg_events: run_snapshot::msg_events(pool).await?,
                schd_events: run_snapshot::schd_events(pool).await?,
                msg_records: topic_records(kafka, &kafka.topic_msg, checks::raw_value).await?,
                schd_records: topic_records(kafka, &kafka.topic_schd, checks::raw_value).await?,
            })
        },
    )
    .await;
    match facts {
        Err(code) => code,
        Ok(Err(e)) => {
            eprintln!("msgx dev broker-verify: {e}");
            Exit::Failure
        }
        Ok(Ok(facts)) => report(&checks::broker_verify(&facts), "broker-verify"),
    }
}

/// Every record of `topic` from its beginning, its value parsed by `parse`.
async fn topic_records(
    kafka: &config::Kafka,
    topic: &str,
    parse: fn(Option<&str>) -> Result<Option<Value>, serde_json::Error>,
) -> Result<Vec<MsgRecord>, DevError> {
    read_topic(kafka, topic)
        .await?
        .into_iter()
        .map(|r| -> Result<MsgRecord, DevError> {
            let value = parse(r.value.as_deref()).map_err(|source| DevError::Record {
                topic: topic.to_string(),
                source,
            })?;
            Ok(MsgRecord {
                state_version: r.header_i64("state-version").unwrap_or(-1),
                event_id: r.header_i64("event-id").unwrap_or(-1),
                partition: r.partition,
                offset: r.offset,
                key: r.key,
                value,
            })
        })
        .collect()
}
