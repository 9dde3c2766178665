//! SEASON, SEASON_SERIES, SEASON_ROUTE_POINT (migration 0008): the statements of the SCHS processor and of `msgx season`. The rules
//! (which seasons a new one replaces, what is published) are
//! `domain::season`'s; here only reads and writes.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};

use crate::domain::season::{Season, SeasonId, SeasonRoutePoint, SeasonSeries, StoredKeys};

/// Every stored season with the record keys of its series (the replacement
/// decision's input; a handful of seasons of a few thousand series).
pub async fn stored_keys(conn: &mut PgConnection) -> Result<Vec<StoredKeys>, sqlx::Error> {
    let rows: Vec<(String, NaiveDate, NaiveDate, Option<String>)> = sqlx::query_as(
        "SELECT s.snam, s.sdat, s.edat, x.series_key FROM season s \
         LEFT JOIN season_series x ON x.season_id = s.season_id \
         ORDER BY s.snam, s.sdat, s.edat, x.series_key",
    )
    .fetch_all(conn)
    .await?;
    let mut out: BTreeMap<SeasonId, BTreeSet<String>> = BTreeMap::new();
    for (snam, sdat, edat, key) in rows {
        let keys = out.entry(SeasonId { snam, sdat, edat }).or_default();
        keys.extend(key);
    }
    Ok(out
        .into_iter()
        .map(|(id, keys)| StoredKeys { id, keys })
        .collect())
}

/// The next season revision (`season_revision_seq`).
pub async fn next_revision(conn: &mut PgConnection) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT nextval('season_revision_seq')")
        .fetch_one(conn)
        .await
}

/// Deletes seasons (their series and route points cascade). Returns the
/// seasons deleted.
pub async fn delete(conn: &mut PgConnection, ids: &[SeasonId]) -> Result<u64, sqlx::Error> {
    if ids.is_empty() {
        return Ok(0);
    }
    let snam: Vec<&str> = ids.iter().map(|i| i.snam.as_str()).collect();
    let sdat: Vec<NaiveDate> = ids.iter().map(|i| i.sdat).collect();
    let edat: Vec<NaiveDate> = ids.iter().map(|i| i.edat).collect();
    Ok(sqlx::query(
        "DELETE FROM season s USING UNNEST($1::text[], $2::date[], $3::date[]) AS d(n, a, b) \
         WHERE s.snam = d.n AND s.sdat = d.a AND s.edat = d.b",
    )
    .bind(&snam)
    .bind(&sdat)
    .bind(&edat)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Inserts `season` (not stored: the caller deleted any old copy) with its
/// series and route points, in three statements.
pub async fn insert(
    conn: &mut PgConnection,
    season: &Season,
    revision: i64,
    msg_id: i64,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO season (snam, sdat, edat, apcd, revision, msg_id, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING season_id",
    )
    .bind(&season.id.snam)
    .bind(season.id.sdat)
    .bind(season.id.edat)
    .bind(&season.apcd)
    .bind(revision)
    .bind(msg_id)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    let s = &season.series;
    let col = |f: fn(&SeasonSeries) -> Option<&String>| -> Vec<Option<String>> {
        s.iter().map(|x| f(x).cloned()).collect()
    };
    let ordinals: Vec<i32> = (1..=s.len() as i32).collect();
    sqlx::query(
        "INSERT INTO season_series (season_id, ordinal, series_key, alcd, flno, mvin, stdt, eddt, dyop, \
           scht, flty, flin, acft, alsc, reno, taop, tafl, trml, maxp, csop, csft, other) \
         SELECT $1, o, k, alcd, flno, mvin, stdt, eddt, dyop, scht, flty, flin, acft, alsc, reno, taop, \
           tafl, trml, maxp, csop, csft, other \
         FROM UNNEST($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[], $8::date[], \
           $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], \
           $16::text[], $17::text[], $18::text[], $19::bigint[], $20::text[], $21::text[], $22::jsonb[]) \
           AS t(o, k, alcd, flno, mvin, stdt, eddt, dyop, scht, flty, flin, acft, alsc, reno, taop, tafl, \
                trml, maxp, csop, csft, other)",
    )
    .bind(id)
    .bind(&ordinals)
    .bind(s.iter().map(|x| x.key(&season.id.snam)).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.alcd.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.flno.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.mvin.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.stdt).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.eddt).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.dyop.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.scht.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.flty.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.flin.as_str()).collect::<Vec<_>>())
    .bind(s.iter().map(|x| x.acft.as_str()).collect::<Vec<_>>())
    .bind(col(|x| x.alsc.as_ref()))
    .bind(col(|x| x.reno.as_ref()))
    .bind(col(|x| x.taop.as_ref()))
    .bind(col(|x| x.tafl.as_ref()))
    .bind(col(|x| x.trml.as_ref()))
    .bind(s.iter().map(|x| x.maxp).collect::<Vec<_>>())
    .bind(col(|x| x.csop.as_ref()))
    .bind(col(|x| x.csft.as_ref()))
    .bind(
        s.iter()
            .map(|x| serde_json::to_value(&x.other).unwrap_or_default())
            .collect::<Vec<_>>(),
    )
    .execute(&mut *conn)
    .await?;
    let points: Vec<(i32, &str, &SeasonRoutePoint)> = s
        .iter()
        .zip(1i32..)
        .flat_map(|(x, n)| {
            let rout = x.rout.iter().map(move |p| (n, "ROUT", p));
            rout.chain(x.erut.iter().map(move |p| (n, "ERUT", p)))
        })
        .collect();
    if points.is_empty() {
        return Ok(());
    }
    let text = |f: fn(&SeasonRoutePoint) -> Option<&String>| -> Vec<Option<String>> {
        points.iter().map(|(_, _, p)| f(p).cloned()).collect()
    };
    sqlx::query(
        "INSERT INTO season_route_point (season_id, series, route_kind, ordinal, source_seq, apcd, \
           scat, sadc, scdt, sddc) \
         SELECT $1, n, k, o, q, a, sa, sd, da, dd \
         FROM UNNEST($2::int[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::text[], \
           $8::text[], $9::text[], $10::text[]) AS t(n, k, o, q, a, sa, sd, da, dd)",
    )
    .bind(id)
    .bind(points.iter().map(|p| p.0).collect::<Vec<_>>())
    .bind(points.iter().map(|p| p.1).collect::<Vec<_>>())
    .bind(points.iter().map(|p| p.2.ordinal).collect::<Vec<_>>())
    .bind(points.iter().map(|p| p.2.rtno).collect::<Vec<_>>())
    .bind(text(|p| p.apcd.as_ref()))
    .bind(text(|p| p.scat.as_ref()))
    .bind(text(|p| p.sadc.as_ref()))
    .bind(text(|p| p.scdt.as_ref()))
    .bind(text(|p| p.sddc.as_ref()))
    .execute(conn)
    .await?;
    Ok(())
}

/// One stored season as `msgx season list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SeasonSummary {
    #[serde(skip)]
    pub season_id: i64,
    pub snam: String,
    pub sdat: NaiveDate,
    pub edat: NaiveDate,
    pub apcd: Option<String>,
    pub revision: i64,
    pub msg_id: i64,
    pub updated_at: DateTime<Utc>,
    pub series: i64,
}

/// The stored seasons, most recent first (the `msgx.season.keep` order).
pub async fn list(pool: &PgPool) -> Result<Vec<SeasonSummary>, sqlx::Error> {
    sqlx::query_as(
        "SELECT s.season_id, s.snam, s.sdat, s.edat, s.apcd, s.revision, s.msg_id, s.updated_at, \
                (SELECT count(*) FROM season_series x WHERE x.season_id = s.season_id) AS series \
         FROM season s ORDER BY s.sdat DESC, s.edat DESC, s.snam",
    )
    .fetch_all(pool)
    .await
}

/// A stored season with its series, as `msgx season show` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredSeason {
    #[serde(flatten)]
    pub summary: SeasonSummary,
    pub series: Vec<SeasonSeries>,
}

/// The seasons named `snam` (optionally only the one starting `sdat`), most
/// recent first, with their series in message order.
pub async fn load(
    pool: &PgPool,
    snam: &str,
    sdat: Option<NaiveDate>,
) -> Result<Vec<StoredSeason>, sqlx::Error> {
    let mut out = Vec::new();
    let wanted = list(pool)
        .await?
        .into_iter()
        .filter(|s| s.snam == snam && sdat.is_none_or(|d| d == s.sdat));
    for summary in wanted {
        let rows: Vec<SeriesRow> = sqlx::query_as(
            "SELECT ordinal, alcd, flno, mvin, stdt, eddt, dyop, scht, flty, flin, acft, alsc, reno, \
                    taop, tafl, trml, maxp, csop, csft, other \
             FROM season_series WHERE season_id = $1 ORDER BY ordinal",
        )
        .bind(summary.season_id)
        .fetch_all(pool)
        .await?;
        let points: Vec<RoutePointRow> = sqlx::query_as(
            "SELECT series, route_kind, ordinal, source_seq, apcd, scat, sadc, scdt, sddc \
             FROM season_route_point WHERE season_id = $1 ORDER BY series, route_kind, ordinal",
        )
        .bind(summary.season_id)
        .fetch_all(pool)
        .await?;
        let series = rows
            .into_iter()
            .map(|r| {
                let route = |kind: &str| -> Vec<SeasonRoutePoint> {
                    points
                        .iter()
                        .filter(|p| p.series == r.ordinal && p.route_kind == kind)
                        .map(RoutePointRow::point)
                        .collect()
                };
                SeasonSeries {
                    rout: route("ROUT"),
                    erut: route("ERUT"),
                    alcd: r.alcd,
                    flno: r.flno,
                    mvin: r.mvin,
                    stdt: r.stdt,
                    eddt: r.eddt,
                    dyop: r.dyop,
                    scht: r.scht,
                    flty: r.flty,
                    flin: r.flin,
                    acft: r.acft,
                    alsc: r.alsc,
                    reno: r.reno,
                    taop: r.taop,
                    tafl: r.tafl,
                    trml: r.trml,
                    maxp: r.maxp,
                    csop: r.csop,
                    csft: r.csft,
                    other: serde_json::from_value(r.other).unwrap_or_default(),
                }
            })
            .collect();
        out.push(StoredSeason { summary, series });
    }
    Ok(out)
}

#[derive(sqlx::FromRow)]
struct SeriesRow {
    ordinal: i32,
    alcd: String,
    flno: String,
    mvin: String,
    stdt: NaiveDate,
    eddt: NaiveDate,
    dyop: String,
    scht: String,
    flty: String,
    flin: String,
    acft: String,
    alsc: Option<String>,
    reno: Option<String>,
    taop: Option<String>,
    tafl: Option<String>,
    trml: Option<String>,
    maxp: Option<i64>,
    csop: Option<String>,
    csft: Option<String>,
    other: serde_json::Value,
}

#[derive(sqlx::FromRow)]
struct RoutePointRow {
    series: i32,
    route_kind: String,
    ordinal: i32,
    source_seq: Option<i64>,
    apcd: Option<String>,
    scat: Option<String>,
    sadc: Option<String>,
    scdt: Option<String>,
    sddc: Option<String>,
}

impl RoutePointRow {
    fn point(&self) -> SeasonRoutePoint {
        SeasonRoutePoint {
            ordinal: self.ordinal,
            rtno: self.source_seq,
            apcd: self.apcd.clone(),
            scat: self.scat.clone(),
            sadc: self.sadc.clone(),
            scdt: self.scdt.clone(),
            sddc: self.sddc.clone(),
        }
    }
}
