//! Statistics that keep up with a young table's growth, so the plans
//! sessions cache stay right (docs/configuration.md "Planning").
//!
//! A pooled session keeps a prepared statement's generic plan until
//! something invalidates it, and an `ANALYZE` of a table it reads is what
//! does. A plan made while a table was small scans it, rightly; made on a
//! fresh install or before the first schedule, it kept scanning while the
//! table grew by thousands of rows a second, because autovacuum looks at a
//! database once per `autovacuum_naptime` (a minute by default, a server
//! setting) and its thresholds are fractions of a size the planner has not
//! yet seen. So the pump analyzes, after it wrote, every table of msgx's
//! schema that now holds at least twice the rows the planner last counted
//! (and [`GROWN_MIN_ROWS`]): from then on the cached plans are made for the
//! table's real size. Each table is analyzed a handful of times while it
//! grows from empty (1,000, 2,000, 4,000 … rows); a table whose size is
//! stable never again, which leaves drift to autovacuum (migration 0021).

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::sync::Mutex;

/// Below this many live rows a table is never analyzed here: scanning it is
/// as cheap as any index lookup.
pub const GROWN_MIN_ROWS: i64 = 1000;

/// How often, at most, the tables' sizes are looked at.
pub const CHECK_INTERVAL: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// The tables of the current schema that hold at least twice the rows the
/// planner last saw (`pg_class.reltuples`, -1 for never analyzed) and at
/// least [`GROWN_MIN_ROWS`], as quoted `schema.table` names. Only tables
/// this role may analyze (it owns them, or is a superuser) are listed.
/// Live rows are the statistics system's count, current to within a second.
pub async fn grown_tables(pool: &PgPool) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT format('%I.%I', s.schemaname, s.relname) \
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid \
         WHERE s.schemaname = current_schema() \
           AND s.n_live_tup >= greatest($1, 2 * c.reltuples) \
           AND pg_has_role(c.relowner, 'USAGE') \
         ORDER BY s.relname",
    )
    .bind(GROWN_MIN_ROWS)
    .fetch_all(pool)
    .await
}

/// Analyzes the [`grown_tables`] in one statement and returns their names.
/// `SKIP_LOCKED`: a table autovacuum or a DBA is analyzing now is left to
/// them, never waited for.
pub async fn analyze_grown_tables(pool: &PgPool) -> Result<Vec<String>, sqlx::Error> {
    let tables = grown_tables(pool).await?;
    if !tables.is_empty() {
        // The names come quoted from `format('%I.%I')` above.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ANALYZE (SKIP_LOCKED) {}",
            tables.join(", ")
        )))
        .execute(pool)
        .await?;
    }
    Ok(tables)
}

/// [`analyze_grown_tables`] at most once per [`CHECK_INTERVAL`] of the
/// caller's clock: the pump's job state, kept across its runs.
#[derive(Debug, Default)]
pub struct GrowthAnalyzer {
    next_check: Mutex<Option<DateTime<Utc>>>,
}

impl GrowthAnalyzer {
    /// Whether a check is due at `now`; if so, the next one is due
    /// [`CHECK_INTERVAL`] later.
    fn due(&self, now: DateTime<Utc>) -> bool {
        let Ok(mut next) = self.next_check.lock() else {
            return false;
        };
        if next.is_some_and(|t| now < t) {
            return false;
        }
        *next = Some(now + CHECK_INTERVAL);
        true
    }

    /// Analyzes the grown tables when a check is due. A failure (a lost
    /// connection, a lock or statement timeout) is logged and counted,
    /// never the caller's: statistics are an optimisation, and the next
    /// check tries again.
    pub async fn after_writes(&self, pool: &PgPool, now: DateTime<Utc>) {
        if !self.due(now) {
            return;
        }
        match analyze_grown_tables(pool).await {
            Ok(tables) => {
                for table in &tables {
                    tracing::info!(%table, "Analyzed a table that doubled since its last statistics");
                }
                metrics::counter!("msgx_pipeline_tables_analyzed_total")
                    .increment(tables.len() as u64);
            }
            Err(e) => {
                tracing::warn!(error = %e, "Could not analyze the grown tables; their cached plans may lag until the next check");
                metrics::counter!("msgx_pipeline_analyze_failures_total").increment(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_is_due_once_per_interval_of_the_callers_clock() {
        let a = GrowthAnalyzer::default();
        let t0 = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        assert!(a.due(t0), "the first check is due at once");
        assert!(!a.due(t0));
        assert!(!a.due(t0 + CHECK_INTERVAL - chrono::TimeDelta::milliseconds(1)));
        assert!(a.due(t0 + CHECK_INTERVAL));
        assert!(!a.due(t0 + CHECK_INTERVAL));
        assert!(a.due(t0 + CHECK_INTERVAL * 5), "a long pause: due at once");
    }
}
