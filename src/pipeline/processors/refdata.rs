//! Reference data into REF_MASTER (design §7.2), in the same
//! kind of transaction as the flight processors: DNLD/RESP replace the type's
//! rows, ADD/UPD upsert, DEL deletes by key.
//!
//! Decision (the design is silent, sis-format §7.2 shows wrong RECS in real
//! samples): a snapshot whose RECS differs from its record count is rejected
//! as PROTOCOL, because applying it could delete rows of a truncated package;
//! ADD/UPD/DEL apply the records present and note the mismatch.

use crate::codec::{Field, RefData, RefStyp};
use crate::jobs::{JobContext, JobError};
use crate::store::pg::ref_master;

use super::{FlightTxnResult, Processors, open, settle, succeeded};

impl Processors<'_> {
    /// The RefDataProcessor: applies one reference message (the caller
    /// handled RESP matching and unsupported subtypes) in its own
    /// transaction.
    #[doc(alias = "RefDataProcessor")]
    pub async fn refdata(&self, msg_id: i64, r: &RefData) -> Result<FlightTxnResult, JobError> {
        let mut tx = self.ctx.pg.begin().await?;
        let result = apply_in(self.ctx, &mut tx, msg_id, r).await?;
        settle(tx, &result).await?;
        Ok(result)
    }
}

/// The body of the transaction on `conn` (an open transaction the caller
/// commits only on `Succeeded`): used alone by [`Processors::refdata`]
/// and by the RESP processor, which closes the answered request in the
/// same transaction. On any other result nothing was written by this
/// call.
pub(crate) async fn apply_in(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    r: &RefData,
) -> Result<FlightTxnResult, JobError> {
    let recs_mismatch = match r.recs {
        Field::Value(n) => usize::try_from(n).ok() != Some(r.records.len()),
        _ => false,
    };
    let snapshot = matches!(r.styp, RefStyp::Dnld | RefStyp::Resp);
    if snapshot && recs_mismatch {
        return Ok(FlightTxnResult::Rejected(format!(
            "{} snapshot: RECS {} differs from {} record(s); not applied (could delete rows of a truncated package)",
            r.rtype,
            r.recs
                .value()
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            r.records.len()
        )));
    }
    let now = ctx.clock.now();
    let tx = conn;
    if let Some(done) = open(ctx, &mut *tx, msg_id).await? {
        return Ok(done);
    }
    let note = match &r.styp {
        RefStyp::Dnld | RefStyp::Resp => {
            let (written, removed) =
                ref_master::replace_all(&mut *tx, &r.rtype, &r.records, msg_id, now).await?;
            format!(
                "{}: {written} written, {removed} removed (snapshot)",
                r.rtype
            )
        }
        RefStyp::Add | RefStyp::Upd => {
            let written = ref_master::upsert(&mut *tx, &r.rtype, &r.records, msg_id, now).await?;
            format!("{}: {written} upserted", r.rtype)
        }
        RefStyp::Del => {
            let keys: Vec<&str> = r.records.iter().map(|x| x.key.as_str()).collect();
            let removed = ref_master::delete(&mut *tx, &r.rtype, &keys).await?;
            format!("{}: {removed} deleted", r.rtype)
        }
        RefStyp::Other(s) => {
            return Err(JobError::Other(format!(
                "unsupported reference subtype {s} reached the processor"
            )));
        }
    };
    let note = if recs_mismatch {
        format!(
            "{note}; RECS {} differs from the record count",
            r.recs
                .value()
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into())
        )
    } else {
        note
    };
    succeeded(&mut *tx, msg_id, Some(&note), now).await?;
    Ok(FlightTxnResult::Succeeded {
        flights_written: 0,
        events: 0,
        note: Some(note),
    })
}
