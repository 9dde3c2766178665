//! `msgx events republish` (issue 36 item 4): re-sends the current `msg` +
//! `schd` records of selected flights through the outbox, as REQUEST records
//! ([`republished`]), for a consumer that bootstraps. One transaction: the
//! selected `flight_schd` rows are read `FOR SHARE`, so a pump writing one of
//! them waits until the REQUEST rows are appended (per-flight order on the
//! topics: a REQUEST never follows a newer version), and the action is
//! recorded in OPERATOR_ACTION (`EVENT_REPUBLISH`) with the same commit.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::PgPool;

use crate::domain::events::republished;
use crate::domain::{FlightSet, mafl};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::{msg_event, operator_action};

/// Which flights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The ACTIVE flights of this operation day.
    Day(NaiveDate),
    /// These FLIDs (ACTIVE or DELETED: a DELETED one re-sends its tombstone).
    Flids(Vec<i64>),
    /// Every ACTIVE flight.
    AllActive,
}

impl Selection {
    /// How the audit row names it.
    pub fn describe(&self) -> String {
        match self {
            Selection::Day(d) => format!("flights:day={d}"),
            Selection::Flids(f) => format!("flights:flid={}", join(f)),
            Selection::AllActive => "flights:all-active".into(),
        }
    }
}

fn join(flids: &[i64]) -> String {
    flids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Why nothing was re-sent.
#[derive(Debug, thiserror::Error)]
pub enum RepublishError {
    #[error("{found} flights selected, more than the bound of {limit} (--max)")]
    TooMany { found: usize, limit: usize },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// What was (or, dry, would be) re-sent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Republished {
    /// The flights, in FLID order (their records in this order).
    pub flids: Vec<i64>,
    /// The OPERATOR_ACTION row; `None` on a dry run or when none matched.
    pub action_id: Option<i64>,
}

/// The audit facts of a republish.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub selection: &'a Selection,
    pub limit: usize,
    pub actor: &'a str,
    pub reason: &'a str,
    pub at: DateTime<Utc>,
    pub dry_run: bool,
}

/// Selects the flights, and unless `dry_run` appends their REQUEST records
/// and the audit row; more than `limit` flights refuse it whole.
pub async fn republish(
    pool: &PgPool,
    store: &FlightStore,
    r: &Request<'_>,
) -> Result<Republished, RepublishError> {
    let mut tx = pool.begin().await?;
    // One more than the bound tells "too many" without reading them all.
    let fetch = i64::try_from(r.limit.saturating_add(1)).unwrap_or(i64::MAX);
    let flids: Vec<i64> = match r.selection {
        Selection::Day(d) => {
            sqlx::query_scalar(
                "SELECT flid FROM flight_schd WHERE state = 'ACTIVE' AND operation_day = $1 \
                 ORDER BY flid LIMIT $2 FOR SHARE",
            )
            .bind(d)
            .bind(fetch)
            .fetch_all(&mut *tx)
            .await?
        }
        Selection::Flids(f) => sqlx::query_scalar(
            "SELECT flid FROM flight_schd WHERE flid = ANY($1) ORDER BY flid LIMIT $2 FOR SHARE",
        )
        .bind(f)
        .bind(fetch)
        .fetch_all(&mut *tx)
        .await?,
        Selection::AllActive => sqlx::query_scalar(
            "SELECT flid FROM flight_schd WHERE state = 'ACTIVE' ORDER BY flid LIMIT $1 FOR SHARE",
        )
        .bind(fetch)
        .fetch_all(&mut *tx)
        .await?,
    };
    if flids.len() > r.limit {
        return Err(RepublishError::TooMany {
            found: flids.len(),
            limit: r.limit,
        });
    }
    if r.dry_run || flids.is_empty() {
        return Ok(Republished {
            flids,
            action_id: None,
        });
    }
    // The masters' MAFL needs their ACTIVE shares: loaded with them.
    let mut set = FlightSet::new();
    for f in store.load_with_children(&mut tx, &flids).await? {
        set.insert(f);
    }
    let links = mafl::Links::of_set(&set);
    let mut events = Vec::with_capacity(flids.len() * 2);
    for flid in &flids {
        if let Some(state) = set.get(*flid) {
            events.extend(republished(state, links.mafl(*flid)));
        }
    }
    msg_event::append(&mut tx, &events, None, r.at).await?;
    let action_id = operator_action::insert(
        &mut tx,
        &operator_action::NewAction {
            at: r.at,
            actor: r.actor,
            action: "EVENT_REPUBLISH",
            target: &r.selection.describe(),
            reason: Some(r.reason),
            detail: serde_json::json!({ "flights": flids.len(), "flids": flids }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Republished {
        flids,
        action_id: Some(action_id),
    })
}
