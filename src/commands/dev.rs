//! `msgx dev …` (hidden): the checks of the chaos drain (scripts/chaos.sh,
//! docs/RESILIENCE.md) that the harness scripts call. Development and tests
//! only; none of them writes to a database.
//!
//! - `drained`: exit 0 when the run is drained, else 1 with what is left on
//!   one line;
//! - `snapshot --out FILE`: the run's outcome as JSON: PostgreSQL, and the
//!   `msg` and `schd` topics read back from their beginning;
//! - `compare-runs CLEAN CHAOS`: the differences of two snapshots, then the
//!   `compare: {…}` line; exit 1 on any difference.
//!
//! The rules are [`crate::domain::run_compare`]'s; the reads are
//! [`crate::store::pg::run_snapshot`]'s.

use crate::commands::tail::{self, TailError, TailOptions, TailRecord};
use crate::commands::{connect_current, emit, open_mailbox};
use crate::config::{self, Config};
use crate::domain::run_compare::{self, DrainFacts, MsgRecord, RecordPlace, Snapshot};
use crate::exit::Exit;
use crate::store::mailbox::{Mailbox, MailboxError};
use crate::store::pg::run_snapshot;
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

/// `msgx dev compare-runs CLEAN CHAOS`: prints the differences and the
/// `compare: {…}` line; exit 0 when the runs agree, 1 on any difference or
/// an unreadable snapshot.
pub fn compare_runs(clean: &Path, chaos: &Path, out: &mut dyn Write) -> Exit {
    let (clean, chaos) = match (read(clean), read(chaos)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("msgx dev compare-runs: {e}");
            return Exit::Failure;
        }
    };
    let found = run_compare::compare(&clean, &chaos);
    match emit(out, &found.text()) {
        Exit::Ok if found.summary.differences == 0 => Exit::Ok,
        Exit::Ok => Exit::Failure,
        failed => failed,
    }
}
