//! SCHS DNLD and RESP: the seasonal schedule (sis-format
//! §2.5; docs/season.md), with the transaction shape of the flight
//! processors (design §5.3, §7.1): package validation first (a rejection
//! writes nothing; the caller records DEAD(PROTOCOL) in one UPDATE), then one
//! PostgreSQL transaction holding PIPELINE_LOCK that replaces the season,
//! drops the seasons past `msgx.season.keep`, appends the `season` records
//! and tombstones to the outbox and writes SUCCEEDED with the backfill intent.
//!
//! RESP is applied like DNLD: SCHS cannot be requested (sis-format §2.5,
//! there is no RQRD for it), so no open request could ever match one, and the
//! G-RESP-GUARD of SCHD/reference RESP does not apply.

use chrono::SubsecRound;

use super::{FlightTxnResult, Processors, open, settle, succeeded};
use crate::codec::Schs;
use crate::domain::season::{self, Season};
use crate::jobs::{JobContext, JobError};
use crate::store::pg::{msg_event, season as store};

impl Processors<'_> {
    /// The SeasonProcessor: validates and, when valid, stores one SCHS in
    /// its own transaction.
    #[doc(alias = "SeasonProcessor")]
    pub async fn season(&self, msg_id: i64, schs: &Schs) -> Result<FlightTxnResult, JobError> {
        let new = match season::validate(schs, self.engine.config()) {
            Ok(s) => s,
            Err(e) => return Ok(FlightTxnResult::Rejected(e.to_string())),
        };
        let mut tx = self.ctx.pg.begin().await?;
        let result = apply_in(self.ctx, &mut tx, msg_id, &new, self.settings.season_keep).await?;
        settle(tx, &result).await?;
        Ok(result)
    }
}

async fn apply_in(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    new: &Season,
    keep: usize,
) -> Result<FlightTxnResult, JobError> {
    if let Some(done) = open(ctx, &mut *conn, msg_id).await? {
        return Ok(done);
    }
    // Microseconds, the precision of timestamptz: the record's
    // `updated_at` is what the store reads back.
    let now = ctx.clock.now().trunc_subsecs(6);
    let stored = store::stored_keys(&mut *conn).await?;
    let plan = season::plan_replacement(&stored, new, keep);
    let revision = store::next_revision(&mut *conn).await?;
    store::delete(&mut *conn, &plan.delete).await?;
    if plan.store_new {
        store::insert(&mut *conn, new, revision, msg_id, now).await?;
    }
    let events = season::events(new, &plan, revision, msg_id, now);
    msg_event::append_season(&mut *conn, &events, msg_id, now).await?;
    let note = note(new, &plan, revision, keep);
    succeeded(&mut *conn, msg_id, Some(&note), now).await?;
    tracing::info!(msg_id, season = %new.id, revision, series = new.series.len(), tombstones = plan.tombstones.len(), "Season stored");
    Ok(FlightTxnResult::Succeeded {
        flights_written: 0,
        events: events.len(),
        note: Some(note),
    })
}

/// The SUCCEEDED note: what was stored, replaced, pushed out and ignored.
fn note(new: &Season, plan: &season::Replacement, revision: i64, keep: usize) -> String {
    let mut s = if plan.store_new {
        format!(
            "season {}: {} series stored (revision {revision})",
            new.id,
            new.series.len()
        )
    } else {
        format!(
            "season {}: older than the {keep} most recent seasons (msgx.season.keep): not stored",
            new.id
        )
    };
    let others: Vec<String> = plan
        .delete
        .iter()
        .filter(|id| **id != new.id)
        .map(ToString::to_string)
        .collect();
    if plan.delete.contains(&new.id) {
        s += "; replaced the stored copy";
    }
    if !others.is_empty() {
        s += &format!("; removed (keep {keep}): {}", others.join(", "));
    }
    if !plan.tombstones.is_empty() {
        s += &format!("; {} series tombstoned", plan.tombstones.len());
    }
    if !new.ignored.is_empty() {
        s += &format!(
            "; not kept in a season: {} (sis-format §2.5)",
            new.ignored.join(", ")
        );
    }
    s
}
