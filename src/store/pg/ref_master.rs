//! REF_MASTER (design §1.2, §7.2): static reference data, one row per
//! (RTYPE, RKEY) with the whole record as JSON.

use crate::codec::RefRecord;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// Upserts records (ADD/UPD; and each record of a snapshot).
pub async fn upsert(
    conn: &mut PgConnection,
    rtype: &str,
    records: &[RefRecord],
    msg_id: i64,
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let keys: Vec<&str> = records.iter().map(|r| r.key.as_str()).collect();
    let bodies: Vec<serde_json::Value> = records.iter().map(|r| r.body.clone()).collect();
    Ok(sqlx::query(
        "INSERT INTO ref_master (rtype, rkey, body, last_msg_id, updated_at) \
         SELECT $1, k, b, $4, $5 FROM UNNEST($2::text[], $3::jsonb[]) AS t(k, b) \
         ON CONFLICT (rtype, rkey) DO UPDATE SET body = EXCLUDED.body, \
           last_msg_id = EXCLUDED.last_msg_id, updated_at = EXCLUDED.updated_at",
    )
    .bind(rtype)
    .bind(&keys)
    .bind(&bodies)
    .bind(msg_id)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Deletes records by key (DEL).
pub async fn delete(
    conn: &mut PgConnection,
    rtype: &str,
    keys: &[&str],
) -> Result<u64, sqlx::Error> {
    Ok(
        sqlx::query("DELETE FROM ref_master WHERE rtype = $1 AND rkey = ANY($2)")
            .bind(rtype)
            .bind(keys)
            .execute(conn)
            .await?
            .rows_affected(),
    )
}

/// Snapshot (DNLD/RESP): the type's rows become exactly `records`.
pub async fn replace_all(
    conn: &mut PgConnection,
    rtype: &str,
    records: &[RefRecord],
    msg_id: i64,
    now: DateTime<Utc>,
) -> Result<(u64, u64), sqlx::Error> {
    let keys: Vec<&str> = records.iter().map(|r| r.key.as_str()).collect();
    let removed = sqlx::query("DELETE FROM ref_master WHERE rtype = $1 AND NOT (rkey = ANY($2))")
        .bind(rtype)
        .bind(&keys)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    let written = upsert(conn, rtype, records, msg_id, now).await?;
    Ok((written, removed))
}
