//! The authoritative flight current state in PostgreSQL (design §11.1,
//! §11.3): one `flight_schd` row per FLID plus one detail table per list
//! (`flight_route_point` holds ROUT and ERUT apart by `route_kind`).
//!
//! Technique: a [`FlightState`] travels as one JSON document whose top-level
//! keys are the `flight_schd` column names (lower-case SIS tags, `fdiv_*`,
//! `fret_*`, `flab_*`, lifecycle columns) plus one key per list (`rout`,
//! `gtdt`, …) holding the items as the domain serialises them. PostgreSQL maps
//! it with `json_populate_recordset`; loading is one round trip that
//! aggregates the row and every list with `to_json` / `json_agg`.
//!
//! Both directions use `json`, never `jsonb`: a `jsonb` value is built by
//! sorting and de-duplicating every object's keys, which was a quarter of
//! PostgreSQL's CPU in the pump (`qsort_arg` and `memcmp` at the top of a
//! `perf` profile; a 50-flight load 13–15 ms as `jsonb`, 5–6 ms as `json`;
//! docs/BENCHMARKS.md). Nothing is stored as JSON but VIPF's `vipt` and
//! the `milestone_msgs` map, neither queried inside, so nothing needs
//! `jsonb`'s binary form.
//!
//! A write is at most two statements, for one flight or many: (1) upsert of
//! the rows (a JSON array of row documents) together with the `DELETE` of
//! every list that changed, per stored FLID (one `bigint[]` per list), (2)
//! the INSERT of those lists (one JSON array of table rows per list).
//! Changed lists are thus rewritten delete-then-insert per FLID (INV-14);
//! unchanged detail rows are not touched. Each JSON value is sent and parsed
//! once, and each list statement reads only its own part of it (a
//! 20,000-flight SCHD spent most of its time searching one large array per
//! list).
//!
//! Read rules for stored data (never a panic; anything else is a
//! [`FlightStoreError`] inside `sqlx::Error::Decode`):
//! - times are rebuilt with [`DomainConfig::airport_time`], so a reloaded state
//!   serialises byte-identically (docs/events.md). A stored offset with seconds
//!   (pre-1901 LMT) cannot be parsed and is a decode error;
//! - LBWT (`numeric`) is read as PostgreSQL's numeric text: equal to the written
//!   text for canonical decimals (`12.5`, `12.50`, `-0.25`), but `.5` reads back
//!   as `0.5`, `-0` as `0` and `007` as `7`;
//! - a NULL `last_msg_id` reads as 0, a NULL `milestone_msgs` as `{}`;
//! - FDIV/FRET/FLAB: all columns NULL → `None`; mandatory column (DDES+DDIR,
//!   REID, ARES) NULL while another is set → decode error.

pub mod cache;

use std::sync::{Arc, LazyLock, Mutex};

pub use cache::CacheUpdate;
use cache::FlightCache;

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sqlx::{AssertSqlSafe, PgConnection};

use crate::codec::{ScalarKind, ScalarTag};
use crate::domain::flight_state::{DiversionInfo, LandingAbortInfo, ReturnInfo};
use crate::domain::{DomainConfig, FlightState, FlightStatus, FlightValue};

/// Stored flight data that cannot be read back into a [`FlightState`].
/// Returned as `sqlx::Error::Decode(Box<FlightStoreError>)`.
#[derive(Debug, thiserror::Error)]
pub enum FlightStoreError {
    #[error("flight {flid}: column or list `{column}`: {reason}")]
    Column {
        flid: i64,
        column: String,
        reason: String,
    },
    #[error("a loaded flight document is not an object with an integer flid")]
    Document,
}

impl FlightStoreError {
    fn column(flid: i64, column: &str, reason: impl ToString) -> Self {
        FlightStoreError::Column {
            flid,
            column: column.to_string(),
            reason: reason.to_string(),
        }
    }
}

impl From<FlightStoreError> for sqlx::Error {
    fn from(e: FlightStoreError) -> Self {
        sqlx::Error::Decode(Box::new(e))
    }
}

/// One detail list: its document key (the `FlightState` field), its table and,
/// for ROUT/ERUT, its `route_kind`.
struct DetailList {
    key: &'static str,
    table: &'static str,
    route_kind: Option<&'static str>,
}

impl DetailList {
    /// `" AND {alias}route_kind = '…'"` for ROUT/ERUT, empty otherwise.
    fn kind_filter(&self, alias: &str) -> String {
        self.route_kind
            .map(|k| format!(" AND {alias}route_kind = '{k}'"))
            .unwrap_or_default()
    }

    /// One item of this list as a complete row of its table: the item's
    /// fields plus `flid` (and `route_kind` for ROUT/ERUT).
    fn table_row(&self, flid: i64, item: Value) -> Value {
        match item {
            Value::Object(mut row) => {
                row.insert("flid".into(), flid.into());
                if let Some(kind) = self.route_kind {
                    row.insert("route_kind".into(), kind.into());
                }
                Value::Object(row)
            }
            other => other,
        }
    }
}

/// Declares the 15 lists once: the [`LISTS`] table, the changed-list document
/// writer and the reader (with the time fields to rebuild in the airport zone).
macro_rules! detail_lists {
    (@kind) => { None };
    (@kind $k:literal) => { Some($k) };
    ($( $field:ident => $table:literal $(($kind:literal))? [$($time:ident),*] ),* $(,)?) => {
        const LISTS: &[DetailList] = &[$(
            DetailList { key: stringify!($field), table: $table, route_kind: detail_lists!(@kind $($kind)?) }
        ),*];

        /// Adds every list of `after` that differs from `before` (all lists
        /// when `before` is `None`) to `doc`, under its key.
        fn put_lists(
            before: Option<&FlightState>,
            after: &FlightState,
            doc: &mut Map<String, Value>,
        ) -> Result<(), serde_json::Error> {
            $(
                if before.is_none_or(|b| b.$field != after.$field) {
                    doc.insert(stringify!($field).into(), serde_json::to_value(&after.$field)?);
                }
            )*
            Ok(())
        }

        /// Moves every list out of a loaded document into `state`, rebuilding
        /// item times with `zone`.
        fn take_lists(
            state: &mut FlightState,
            doc: &mut Map<String, Value>,
            zone: impl Fn(DateTime<FixedOffset>) -> DateTime<FixedOffset>,
        ) -> Result<(), FlightStoreError> {
            $(
                state.$field = take_list(state.flid, doc, stringify!($field))?;
                for _item in &mut state.$field {
                    $( _item.$time = _item.$time.map(&zone); )*
                }
            )*
            for vip in &mut state.vipf {
                for s in &mut vip.vipt {
                    s.vtst = s.vtst.map(&zone);
                    s.vtet = s.vtet.map(&zone);
                }
            }
            Ok(())
        }
    };
}

detail_lists! {
    rout => "flight_route_point" ("ROUT") [scat, scdt],
    erut => "flight_route_point" ("ERUT") [scat, scdt],
    psdt => "flight_stand" [stst, stet],
    gtdt => "flight_gate" [pgot, pgct, gotm, gctm],
    ckdt => "flight_counter" [pcot, pcct, cotm, cctm],
    cldt => "flight_carousel" [pcot, pcct, fbag, lbag],
    chdt => "flight_chute" [pcbt, pcet, cbtm, cetm],
    chot => "flight_chock" [chtm],
    abtm => "flight_airbridge" [aotm],
    dely => "flight_delay" [strt],
    srvt => "flight_service" [srst, sret],
    vipf => "flight_vip" [],
    port => "flight_door" [potm],
    tipt => "flight_tractor" [trtm],
    psht => "flight_push" [pstm],
}

/// `flight_schd` lifecycle columns (besides `flid`).
const LIFECYCLE_COLUMNS: [&str; 7] = [
    "state",
    "state_version",
    "operation_day",
    "last_msg_id",
    "created_at",
    "updated_at",
    "milestone_msgs",
];

/// `flight_schd` columns of the FDIV/FRET/FLAB objects.
const EXCEPTION_COLUMNS: [&str; 7] = [
    "fdiv_ddes",
    "fdiv_ddir",
    "fdiv_reason",
    "fret_reid",
    "fret_reason",
    "flab_ares",
    "flab_reason",
];

/// Every stored scalar with its column name (`ScalarTag::ALL` order, FLID excluded).
static SCALAR_COLUMNS: LazyLock<Vec<(ScalarTag, String)>> = LazyLock::new(|| {
    ScalarTag::ALL
        .iter()
        .filter(|t| **t != ScalarTag::FLID)
        .map(|t| (*t, t.name().to_ascii_lowercase()))
        .collect()
});

/// One document per flight of `flight_schd` rows matching `filter` (on
/// alias `f`), in FLID order: `{"row": <the row>, <decimal column>: <its
/// exact text>, <list key>: [items]}` ([`FlightStore::read`] flattens it; a
/// `json` object cannot have a key replaced in SQL as `jsonb ||` did). The
/// row carries `row_xmin` and `content_version`, its [`RowStamp`]. Each
/// list is aggregated once per statement for all the selected
/// flights (one grouped scan per detail table), not once per flight: a
/// correlated subquery per list and flight cost 4.3 s of a re-sent
/// 20,000-flight SCHD.
fn load_select(filter: &str) -> String {
    let decimals = SCALAR_COLUMNS
        .iter()
        .filter(|(t, _)| t.kind() == ScalarKind::Decimal)
        .map(|(_, c)| format!("'{c}', f.{c}::text"));
    let lists = LISTS
        .iter()
        .map(|l| format!("'{k}', COALESCE(l_{k}.items, '[]'::json)", k = l.key));
    let pairs: Vec<String> = decimals.chain(lists).collect();
    let aggregates: Vec<String> = LISTS
        .iter()
        .map(|l| {
            format!(
                "l_{k} AS (SELECT x.flid, json_agg(x ORDER BY x.ordinal) AS items \
                 FROM {t} x WHERE x.flid IN (SELECT flid FROM f){kind} GROUP BY x.flid)",
                k = l.key,
                t = l.table,
                kind = l.kind_filter("x.")
            )
        })
        .collect();
    let joins: Vec<String> = LISTS
        .iter()
        .map(|l| format!("LEFT JOIN l_{k} ON l_{k}.flid = f.flid", k = l.key))
        .collect();
    format!(
        "WITH f AS MATERIALIZED (SELECT *, xmin::text::bigint AS row_xmin FROM flight_schd f WHERE {filter}), {} \
         SELECT json_build_object('row', to_json(f), {}) FROM f {} ORDER BY f.flid",
        aggregates.join(", "),
        pairs.join(", "),
        joins.join(" ")
    )
}

static LOAD_BY_FLID: LazyLock<String> = LazyLock::new(|| load_select("f.flid = ANY($1)"));

static LOAD_WITH_CHILDREN: LazyLock<String> =
    LazyLock::new(|| load_select("f.flid = ANY($1) OR (f.maid = ANY($1) AND f.state = 'ACTIVE')"));

static LOAD_ACTIVE_CHILDREN: LazyLock<String> =
    LazyLock::new(|| load_select("f.maid = ANY($1) AND f.state = 'ACTIVE'"));

/// Statement 1 of a write: deletes the stored detail rows of the lists
/// that changed, per list the FLIDs in `$2`, `$3`, … (one `bigint[]` per
/// list, [`LISTS`] order), and upserts the `flight_schd` rows of the JSON
/// array `$1` (row columns only, sent as text and read as `json`). The FLIDs come from Rust: a flight never
/// stored has no detail rows to delete, and searching the JSON documents
/// once per list cost 3.7 s of a 20,000-flight SCHD.
/// `content_version` is not written: a new row takes the default 0, a stored
/// one keeps its count (it is not part of a [`FlightState`]).
static UPSERT_AND_DELETE: LazyLock<String> = LazyLock::new(|| {
    let deletes: Vec<String> = LISTS
        .iter()
        .enumerate()
        .map(|(i, l)| {
            format!(
                "d_{key} AS (DELETE FROM {table} WHERE flid = ANY(${n}::bigint[]){kind})",
                key = l.key,
                table = l.table,
                n = i + 2,
                kind = l.kind_filter("")
            )
        })
        .collect();
    let columns: Vec<String> = LIFECYCLE_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(SCALAR_COLUMNS.iter().map(|(_, c)| c.clone()))
        .chain(EXCEPTION_COLUMNS.iter().map(|c| c.to_string()))
        .collect();
    let excluded: Vec<String> = columns.iter().map(|c| format!("EXCLUDED.{c}")).collect();
    format!(
        "WITH {deletes} INSERT INTO flight_schd (flid, {columns}) SELECT flid, {columns} \
         FROM json_populate_recordset(NULL::flight_schd, $1::text::json) \
         ON CONFLICT (flid) DO UPDATE SET ({columns}) = ROW({excluded}) \
         RETURNING flid, xmin::text::bigint, content_version",
        deletes = deletes.join(", "),
        columns = columns.join(", "),
        excluded = excluded.join(", ")
    )
});

/// Statement 2 of a write: inserts the detail rows of each list from its own
/// parameter (`$1`, `$2`, … in [`LISTS`] order), a JSON array of complete
/// table rows (with `flid`, and `route_kind` for ROUT/ERUT); `[]` inserts
/// nothing. Each list reads only its own array: searching every flight
/// document once per list cost most of a 20,000-flight SCHD
/// (docs/BENCHMARKS.md), and a `json` value would be parsed again per lookup.
static INSERT_LISTS: LazyLock<String> = LazyLock::new(|| {
    let inserts: Vec<String> = LISTS
        .iter()
        .enumerate()
        .map(|(i, l)| {
            format!(
                "i_{key} AS (INSERT INTO {table} SELECT * FROM \
                 json_populate_recordset(NULL::{table}, ${n}::text::json))",
                key = l.key,
                table = l.table,
                n = i + 1,
            )
        })
        .collect();
    format!("WITH {} SELECT 1", inserts.join(", "))
});

/// One stored flight's link and operation day ([`FlightStore::load_links`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlightLink {
    pub flid: i64,
    pub maid: Option<i64>,
    pub operation_day: Option<chrono::NaiveDate>,
    /// The row's version (the pump's flight cache checks it).
    pub version: StoredVersion,
}

/// Which version of a flight (its `flight_schd` row and every detail list)
/// is stored: the row's `xmin` and `content_version` ([`RowStamp`]) and its
/// `updated_at`. Every write of a flight changes the row: msgx's writes upsert
/// it ([`FlightStore::write_many`]), and any other write of a detail row adds
/// to its `content_version` (migration 0013). So a state
/// read or written at this version is still the stored one while the row
/// shows it (the pump's flight cache; `updated_at` and
/// `content_version` as well guard against a transaction ID seen again after
/// wraparound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredVersion {
    pub flid: i64,
    pub row: RowStamp,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// What a `flight_schd` row shows of its last change: the transaction that
/// wrote it (`xmin`, as a number) and the count of detail changes made
/// outside msgx's flight writes (`content_version`, migration 0013).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowStamp {
    pub xmin: i64,
    pub content_version: i64,
}

impl StoredVersion {
    /// The version of `state` as a row showing `row`.
    pub fn of(state: &FlightState, row: RowStamp) -> Self {
        Self {
            flid: state.flid,
            row,
            updated_at: state.updated_at,
        }
    }
}

/// The links and versions of what [`FlightStore::load_with_children`] returns.
const LINKS_WITH_CHILDREN: &str = "SELECT flid, maid, operation_day, xmin::text::bigint, content_version, updated_at \
     FROM flight_schd WHERE flid = ANY($1) OR (maid = ANY($1) AND state = 'ACTIVE') ORDER BY flid";

/// Reads and writes complete flight states (design §11.1, INV-14), with a
/// read-through cache of the states it loaded or wrote ([`cache`]), shared
/// by its clones.
#[derive(Debug, Clone)]
pub struct FlightStore {
    config: DomainConfig,
    cache: Arc<Mutex<FlightCache>>,
}

/// What [`FlightStore::load_cached`] found.
#[derive(Debug, Default)]
pub struct CachedLoad {
    /// States taken from the cache (their rows are at the cached version).
    pub hits: Vec<FlightState>,
    /// States read from the database, with their versions: hand them to
    /// [`FlightStore::remember`] once the transaction committed.
    pub read: Vec<(StoredVersion, FlightState)>,
}

impl FlightStore {
    /// A store whose loaded times carry the offset of `config.timezone`,
    /// with an empty cache.
    pub fn new(config: &crate::domain::DomainConfig) -> Self {
        Self {
            config: config.clone(),
            cache: Arc::default(),
        }
    }

    /// The current states of `flids` and of their ACTIVE children, as
    /// [`load_with_children`](Self::load_with_children) returns them, read
    /// through the cache: the rows' versions first (one statement, no
    /// content), then the content of those not cached at that version (one
    /// more, if any). FLIDs for which `known(flid)` holds are skipped (the
    /// caller has a newer copy).
    pub async fn load_cached(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
        known: impl Fn(i64) -> bool,
    ) -> Result<CachedLoad, sqlx::Error> {
        let links = self.load_links(&mut *conn, flids).await?;
        let mut out = CachedLoad::default();
        let mut to_load = Vec::new();
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for v in links.into_iter().map(|l| l.version) {
                if known(v.flid) {
                    continue;
                }
                match cache.get(&v) {
                    Some(s) => out.hits.push(s.clone()),
                    None => to_load.push(v.flid),
                }
            }
        }
        out.read = self.load_versioned(conn, &to_load).await?;
        Ok(out)
    }

    /// Keeps what a committed transaction read and wrote (call only after
    /// its COMMIT: a state of a transaction that rolled back never exists).
    pub fn remember(&self, update: CacheUpdate) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .apply(update);
    }

    /// Call once at the start of each transaction that loads flights: makes
    /// timestamptz values come back with the airport offset (SET LOCAL TIME ZONE).
    ///
    /// Uses `set_config('TimeZone', <tz>, true)`: it lasts until the
    /// transaction ends and does nothing outside one. `load` does not depend
    /// on it: every loaded time is rebuilt with [`DomainConfig::airport_time`].
    pub async fn prepare(&self, conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT set_config('TimeZone', $1, true)")
            .bind(self.config.timezone.name())
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Complete states (scalars + every list) of these FLIDs, any STATE; missing FLIDs are simply absent.
    pub async fn load(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<Vec<FlightState>, sqlx::Error> {
        self.fetch(conn, &LOAD_BY_FLID, flids).await
    }

    /// Complete states of every ACTIVE flight whose MAID is in `maids` (uses the MAID index).
    pub async fn load_active_children(
        &self,
        conn: &mut sqlx::PgConnection,
        maids: &[i64],
    ) -> Result<Vec<FlightState>, sqlx::Error> {
        self.fetch(conn, &LOAD_ACTIVE_CHILDREN, maids).await
    }

    /// [`load`](Self::load) and [`load_active_children`](Self::load_active_children)
    /// of the same FLIDs in one round trip: these flights (any STATE) and every
    /// ACTIVE flight whose MAID is one of them.
    pub async fn load_with_children(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<Vec<FlightState>, sqlx::Error> {
        self.fetch(conn, &LOAD_WITH_CHILDREN, flids).await
    }

    /// [`load`](Self::load), each state with the version it was read at.
    pub async fn load_versioned(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<Vec<(StoredVersion, FlightState)>, sqlx::Error> {
        self.fetch_versioned(conn, &LOAD_BY_FLID, flids).await
    }

    /// The light form of [`load_with_children`](Self::load_with_children):
    /// FLID, stored MAID and operation day of the flights `flids` (any state)
    /// and of the ACTIVE flights whose MAID is one of them, without their
    /// content. A large schedule is sliced by these links and validated with
    /// these days before any flight is loaded whole. Each
    /// link carries the row's [`StoredVersion`]: the pump's group commit checks
    /// its flight cache against them.
    pub async fn load_links(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<Vec<FlightLink>, sqlx::Error> {
        if flids.is_empty() {
            return Ok(Vec::new());
        }
        type Row = (
            i64,
            Option<i64>,
            Option<chrono::NaiveDate>,
            i64,
            i64,
            DateTime<chrono::Utc>,
        );
        let rows: Vec<Row> = sqlx::query_as(LINKS_WITH_CHILDREN)
            .bind(flids)
            .fetch_all(conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(
                |(flid, maid, operation_day, xmin, content_version, updated_at)| FlightLink {
                    flid,
                    maid,
                    operation_day,
                    version: StoredVersion {
                        flid,
                        row: RowStamp {
                            xmin,
                            content_version,
                        },
                        updated_at,
                    },
                },
            )
            .collect())
    }

    /// Persists `after`: upserts the flight_schd row; rewrites (DELETE then INSERT for that FLID, INV-14)
    /// every detail list that differs from `before`, the stored state. `None`
    /// means the flight has no row: every list is inserted, nothing deleted.
    pub async fn write(
        &self,
        conn: &mut sqlx::PgConnection,
        before: Option<&FlightState>,
        after: &FlightState,
    ) -> Result<(), sqlx::Error> {
        self.write_many(conn, &[(before, after)]).await
    }

    /// [`write`](Self::write) for several flights (distinct FLIDs) in the
    /// same two statements: the pump's group commit writes every flight the
    /// group changed at once.
    pub async fn write_many(
        &self,
        conn: &mut sqlx::PgConnection,
        flights: &[(Option<&FlightState>, &FlightState)],
    ) -> Result<(), sqlx::Error> {
        self.write_many_versioned(conn, flights).await.map(|_| ())
    }

    /// [`write_many`](Self::write_many), returning the FLID and [`RowStamp`]
    /// of each written row (`xmin` is this transaction's ID: a
    /// [`StoredVersion`] once it commits). In a transaction not opened by
    /// msgx's PIPELINE_LOCK statement the detail writes add to
    /// `content_version` after it was returned (migration 0013): that
    /// version is then never seen stored, a cache only misses.
    pub async fn write_many_versioned(
        &self,
        conn: &mut sqlx::PgConnection,
        flights: &[(Option<&FlightState>, &FlightState)],
    ) -> Result<Vec<(i64, RowStamp)>, sqlx::Error> {
        if flights.is_empty() {
            return Ok(Vec::new());
        }
        let encode = |e: serde_json::Error| sqlx::Error::Encode(Box::new(e));
        let mut rows = Vec::with_capacity(flights.len());
        let mut items: Vec<Vec<Value>> = vec![Vec::new(); LISTS.len()];
        let mut stale: Vec<Vec<i64>> = vec![Vec::new(); LISTS.len()];
        for (before, after) in flights {
            rows.push(Value::Object(row_document(after).map_err(encode)?));
            let mut changed = Map::new();
            put_lists(*before, after, &mut changed).map_err(encode)?;
            for (i, list) in LISTS.iter().enumerate() {
                let Some(Value::Array(list_items)) = changed.remove(list.key) else {
                    continue;
                };
                // A stored flight's changed list is deleted first (INV-14);
                // a flight never stored has no detail rows to delete.
                if before.is_some() {
                    stale[i].push(after.flid);
                }
                items[i].extend(
                    list_items
                        .into_iter()
                        .map(|item| list.table_row(after.flid, item)),
                );
            }
        }
        let rows = serde_json::to_string(&rows).map_err(encode)?;
        let mut upsert = sqlx::query(AssertSqlSafe(UPSERT_AND_DELETE.as_str())).bind(rows);
        for flids in &stale {
            upsert = upsert.bind(flids);
        }
        let written: Vec<(i64, RowStamp)> = upsert
            .try_map(|row: sqlx::postgres::PgRow| {
                use sqlx::Row as _;
                let stamp = RowStamp {
                    xmin: row.try_get(1)?,
                    content_version: row.try_get(2)?,
                };
                Ok((row.try_get(0)?, stamp))
            })
            .fetch_all(&mut *conn)
            .await?;
        if items.iter().any(|list| !list.is_empty()) {
            let mut insert = sqlx::query(AssertSqlSafe(INSERT_LISTS.as_str()));
            for list in &items {
                insert = insert.bind(serde_json::to_string(list).map_err(encode)?);
            }
            insert.execute(&mut *conn).await?;
        }
        Ok(written)
    }

    /// Removes the flight (row + details via ON DELETE CASCADE). Returns rows deleted (0 or 1).
    pub async fn delete(
        &self,
        conn: &mut sqlx::PgConnection,
        flid: i64,
        expected_version: i64,
    ) -> Result<u64, sqlx::Error> {
        let done = sqlx::query("DELETE FROM flight_schd WHERE flid = $1 AND state_version = $2")
            .bind(flid)
            .bind(expected_version)
            .execute(conn)
            .await?;
        Ok(done.rows_affected())
    }

    /// The last STATE_VERSION published for each of `flids` that
    /// flight-history-clean moved to `flight_history`: an archived
    /// DELETED row's own version, or an archived ACTIVE row's version + 1 (the
    /// lifecycle tombstone it got when cleaned). FLIDs never archived, or
    /// whose rows `hst-retention` purged, are absent.
    pub async fn retired_versions(
        &self,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<Vec<(i64, i64)>, sqlx::Error> {
        if flids.is_empty() {
            return Ok(Vec::new());
        }
        sqlx::query_as(
            "SELECT flid, max(CASE WHEN state = 'ACTIVE' THEN state_version + 1 \
                                   ELSE state_version END) \
             FROM flight_history WHERE flid = ANY($1) GROUP BY flid",
        )
        .bind(flids)
        .fetch_all(conn)
        .await
    }

    /// The complete state as one JSON document (row + all lists), for the flight history store.
    ///
    /// Keys: the `flight_schd` column names (every scalar column present,
    /// `null` when unset) and one array per list (`rout`, `erut`, `gtdt`, …).
    pub fn snapshot_json(&self, state: &FlightState) -> serde_json::Value {
        // Serialising plain data with string keys cannot fail.
        document(state).map_or(Value::Null, Value::Object)
    }

    async fn fetch(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        ids: &[i64],
    ) -> Result<Vec<FlightState>, sqlx::Error> {
        let versioned = self.fetch_versioned(conn, sql, ids).await?;
        Ok(versioned.into_iter().map(|(_, s)| s).collect())
    }

    async fn fetch_versioned(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        ids: &[i64],
    ) -> Result<Vec<(StoredVersion, FlightState)>, sqlx::Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let docs: Vec<Value> = sqlx::query_scalar(AssertSqlSafe(sql))
            .bind(ids)
            .fetch_all(conn)
            .await?;
        docs.into_iter()
            .map(|d| {
                let number = |key: &str| {
                    d.get("row")
                        .and_then(|r| r.get(key))
                        .and_then(Value::as_i64)
                        .ok_or(FlightStoreError::Document)
                };
                let stamp = RowStamp {
                    xmin: number("row_xmin")?,
                    content_version: number("content_version")?,
                };
                let state = self.read(d)?;
                Ok((StoredVersion::of(&state, stamp), state))
            })
            .collect::<Result<_, FlightStoreError>>()
            .map_err(sqlx::Error::from)
    }

    /// Rebuilds a stored time in the airport zone.
    fn zone(&self, t: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
        self.config.airport_time(t.to_utc())
    }

    /// One loaded document → a [`FlightState`] (the read rules of the module doc).
    fn read(&self, doc: Value) -> Result<FlightState, FlightStoreError> {
        let Value::Object(mut doc) = doc else {
            return Err(FlightStoreError::Document);
        };
        // Flatten `{"row": {...}, overrides…}` (load_select): the row's
        // columns, except where the document gives a column its exact text.
        if let Some(Value::Object(row)) = doc.remove("row") {
            for (k, v) in row {
                doc.entry(k).or_insert(v);
            }
        }
        let flid = doc
            .get("flid")
            .and_then(Value::as_i64)
            .ok_or(FlightStoreError::Document)?;
        let row = Row { flid, doc: &doc };
        let created_at: DateTime<FixedOffset> = row.required("created_at")?;
        let mut s = FlightState::new(flid, created_at.to_utc());
        s.state = match row.required::<String>("state")?.as_str() {
            "ACTIVE" => FlightStatus::Active,
            "DELETED" => FlightStatus::Deleted,
            other => return Err(row.error("state", format!("unknown state {other:?}"))),
        };
        s.state_version = row.required("state_version")?;
        s.operation_day = row.get::<NaiveDate>("operation_day")?;
        s.last_msg_id = row.get("last_msg_id")?.unwrap_or(0);
        s.milestone_msgs = row.get("milestone_msgs")?.unwrap_or_default();
        s.updated_at = row
            .required::<DateTime<FixedOffset>>("updated_at")?
            .to_utc();
        for (tag, col) in SCALAR_COLUMNS.iter() {
            let value = match tag.kind() {
                ScalarKind::Text => row.get(col)?.map(FlightValue::Text),
                ScalarKind::Hhmm => row.get(col)?.map(FlightValue::Hhmm),
                ScalarKind::Decimal => row.get(col)?.map(FlightValue::Decimal),
                ScalarKind::Int => row.get(col)?.map(FlightValue::Int),
                ScalarKind::Date => row.get(col)?.map(FlightValue::Date),
                ScalarKind::Time => row.get(col)?.map(|t| FlightValue::Time(self.zone(t))),
            };
            s.set_scalar(*tag, value);
        }
        s.fdiv = match (
            row.get("fdiv_ddes")?,
            row.get("fdiv_ddir")?,
            row.get("fdiv_reason")?,
        ) {
            (None, None, None) => None,
            (Some(ddes), Some(ddir), reason) => Some(DiversionInfo { ddes, ddir, reason }),
            _ => return Err(row.error("fdiv_ddes", "FDIV without DDES and DDIR")),
        };
        s.fret = match (row.get("fret_reid")?, row.get("fret_reason")?) {
            (None, None) => None,
            (Some(reid), reason) => Some(ReturnInfo { reid, reason }),
            _ => return Err(row.error("fret_reid", "FRET without REID")),
        };
        s.flab = match (row.get("flab_ares")?, row.get("flab_reason")?) {
            (None, None) => None,
            (Some(ares), reason) => Some(LandingAbortInfo { ares, reason }),
            _ => return Err(row.error("flab_ares", "FLAB without ARES")),
        };
        take_lists(&mut s, &mut doc, |t| self.zone(t))?;
        Ok(s)
    }
}

/// The complete document of `state`: every `flight_schd` column and every list.
fn document(state: &FlightState) -> Result<Map<String, Value>, serde_json::Error> {
    let mut doc = row_document(state)?;
    put_lists(None, state, &mut doc)?;
    Ok(doc)
}

/// Every `flight_schd` column of `after`, keyed by column name.
fn row_document(after: &FlightState) -> Result<Map<String, Value>, serde_json::Error> {
    let mut doc = Map::new();
    let mut put = |k: &str, v: Value| {
        doc.insert(k.to_string(), v);
    };
    put("flid", after.flid.into());
    put("state", serde_json::to_value(after.state)?);
    put("state_version", after.state_version.into());
    put("operation_day", serde_json::to_value(after.operation_day)?);
    put("last_msg_id", after.last_msg_id.into());
    put("created_at", serde_json::to_value(after.created_at)?);
    put("updated_at", serde_json::to_value(after.updated_at)?);
    put(
        "milestone_msgs",
        serde_json::to_value(&after.milestone_msgs)?,
    );
    for (tag, col) in SCALAR_COLUMNS.iter() {
        put(col, serde_json::to_value(after.scalar(*tag))?);
    }
    let fdiv = after.fdiv.as_ref();
    let fret = after.fret.as_ref();
    let flab = after.flab.as_ref();
    let text = |v: Option<&String>| v.map_or(Value::Null, |s| Value::String(s.clone()));
    put("fdiv_ddes", text(fdiv.map(|d| &d.ddes)));
    put("fdiv_ddir", text(fdiv.map(|d| &d.ddir)));
    put("fdiv_reason", text(fdiv.and_then(|d| d.reason.as_ref())));
    put("fret_reid", text(fret.map(|r| &r.reid)));
    put("fret_reason", text(fret.and_then(|r| r.reason.as_ref())));
    put("flab_ares", text(flab.map(|a| &a.ares)));
    put("flab_reason", text(flab.and_then(|a| a.reason.as_ref())));
    Ok(doc)
}

/// Typed column access on one loaded `flight_schd` document.
struct Row<'a> {
    flid: i64,
    doc: &'a Map<String, Value>,
}

impl Row<'_> {
    fn error(&self, column: &str, reason: impl ToString) -> FlightStoreError {
        FlightStoreError::column(self.flid, column, reason)
    }

    /// The column's value; a missing key or JSON null is `None`.
    fn get<T: DeserializeOwned>(&self, column: &str) -> Result<Option<T>, FlightStoreError> {
        match self.doc.get(column) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::deserialize(v)
                .map(Some)
                .map_err(|e| self.error(column, e)),
        }
    }

    /// A NOT NULL column.
    fn required<T: DeserializeOwned>(&self, column: &str) -> Result<T, FlightStoreError> {
        self.get(column)?
            .ok_or_else(|| self.error(column, "unexpected NULL"))
    }
}

/// Removes list `key` from a loaded document (missing or null → empty).
fn take_list<T: DeserializeOwned>(
    flid: i64,
    doc: &mut Map<String, Value>,
    key: &str,
) -> Result<Vec<T>, FlightStoreError> {
    match doc.remove(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => Vec::<T>::deserialize(v).map_err(|e| FlightStoreError::column(flid, key, e)),
    }
}
