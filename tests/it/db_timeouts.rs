//! Database timeouts (issue 17, item 5) against the real servers: every
//! PostgreSQL session of the job pool carries `statement_timeout`,
//! `lock_timeout` and `idle_in_transaction_session_timeout` from
//! `[msgx.postgres]`, the instance-lock session has no idle limit, and every
//! mailbox session has the server-side `msgx.mailbox.statement-timeout`.
//! Each timeout is a recorded failure, never a hang. A plan cached on an
//! empty table does not keep scanning it once it has grown: the pump
//! analyzes tables that doubled since their statistics.

use crate::common;

use common::jobs::run_ok;
use common::sis::flop;
use common::*;
use msgx::scheduler::runner::RunOptions;
use msgx::store::mailbox::{Mailbox, MailboxError};
use msgx::store::pg;
use mysql_async::prelude::Queryable;

fn ms(text: &str) -> msgx::config::Dur {
    text.parse().expect("duration")
}

async fn show(conn: &mut sqlx::PgConnection, setting: &str) -> String {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SHOW {setting}")))
        .fetch_one(conn)
        .await
        .expect("SHOW")
}

#[tokio::test]
async fn pooled_sessions_carry_the_timeouts_and_the_lock_session_has_no_idle_limit() {
    let db = TestDb::migrated().await;
    // A database-level idle limit, as a DBA might set one: the lock session
    // must still not be ended by it.
    for setting in [
        "idle_in_transaction_session_timeout",
        "idle_session_timeout",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE \"{}\" SET {setting} = '1s'",
            db.name
        )))
        .execute(&db.pool)
        .await
        .unwrap();
    }
    let mut cfg = db.config().msgx.postgres;
    cfg.statement_timeout = ms("45s");
    cfg.lock_timeout = ms("7s");
    cfg.idle_in_transaction_timeout = ms("90s");
    let pool = pg::connect(&cfg).await.expect("pool");
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(show(&mut conn, "statement_timeout").await, "45s");
    assert_eq!(show(&mut conn, "lock_timeout").await, "7s");
    assert_eq!(
        show(&mut conn, "idle_in_transaction_session_timeout").await,
        "90s"
    );

    let mut lock = pg::connect_session(&db.url).await.expect("lock session");
    assert_eq!(
        show(&mut lock, "idle_in_transaction_session_timeout").await,
        "0"
    );
    assert_eq!(show(&mut lock, "idle_session_timeout").await, "0");
}

/// Prepares the pump's kind of key lookup on `proc_state` on `conn` and
/// runs it six times while the table is empty (a session may switch to a
/// cached generic plan after five), then grows the table to 20,000 rows
/// without an ANALYZE (autovacuum is off for the table here, as it may
/// simply not have come round yet).
async fn prepare_then_grow(pool: &sqlx::PgPool, conn: &mut sqlx::PgConnection) {
    sqlx::raw_sql(
        "PREPARE by_msg_id(bigint[]) AS SELECT msg_id, state FROM proc_state \
         WHERE msg_id = ANY($1) ORDER BY msg_id",
    )
    .execute(&mut *conn)
    .await
    .expect("PREPARE");
    for _ in 0..6 {
        sqlx::raw_sql("EXECUTE by_msg_id('{1,2,3}')")
            .execute(&mut *conn)
            .await
            .expect("EXECUTE");
    }
    sqlx::raw_sql(
        "INSERT INTO proc_state (msg_id, state, enqueued_at, updated_at) \
         SELECT g, 'SUCCEEDED', now(), now() FROM generate_series(1, 20000) g",
    )
    .execute(pool)
    .await
    .expect("grow proc_state");
}

/// The plan `conn`'s prepared lookup ([`prepare_then_grow`]) uses now.
async fn cached_plan(conn: &mut sqlx::PgConnection) -> String {
    let lines: Vec<String> = sqlx::query_scalar("EXPLAIN EXECUTE by_msg_id('{1,2,3}')")
        .fetch_all(&mut *conn)
        .await
        .expect("EXPLAIN");
    lines.join("\n")
}

/// Waits (bounded) until the statistics system counts `rows` live rows in
/// `table`: what the growth check reads, current within about a second.
async fn counted(pool: &sqlx::PgPool, table: &str, rows: i64) {
    wait_until(
        &format!("{rows} live rows counted in {table}"),
        std::time::Duration::from_secs(15),
        || async {
            let live: i64 =
                sqlx::query_scalar("SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = $1")
                    .bind(table)
                    .fetch_one(pool)
                    .await
                    .unwrap_or(0);
            live >= rows
        },
    )
    .await;
}

#[tokio::test]
async fn a_plan_cached_on_an_empty_table_uses_the_index_once_the_grown_table_is_analyzed() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql("ALTER TABLE proc_state SET (autovacuum_enabled = false)")
        .execute(&db.pool)
        .await
        .unwrap();
    let pool = pg::connect(&db.config().msgx.postgres).await.expect("pool");
    let mut conn = pool.acquire().await.unwrap();
    // The generic plan forced here; `auto` makes it when it looks no dearer.
    sqlx::raw_sql("SET plan_cache_mode = force_generic_plan")
        .execute(&mut *conn)
        .await
        .unwrap();
    prepare_then_grow(&db.pool, &mut conn).await;
    // Made on the empty table, the cached plan scans the grown one.
    let plan = cached_plan(&mut conn).await;
    assert!(plan.contains("Seq Scan"), "before: {plan}");
    counted(&db.pool, "proc_state", 20_000).await;
    let analyzed = pg::statistics::analyze_grown_tables(&pool)
        .await
        .expect("analyze");
    assert_eq!(analyzed, vec!["public.proc_state".to_string()]);
    // The ANALYZE invalidated the cached plan; made again for the table's
    // real size, it is the index lookup.
    let plan = cached_plan(&mut conn).await;
    assert!(
        plan.contains("Index") && !plan.contains("Seq Scan"),
        "after: {plan}"
    );
    // Analyzed, the table is not analyzed again until it doubles.
    assert!(
        pg::statistics::grown_tables(&pool)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Runs ingest and the pump over one FLOP after `proc_state_hst` grew to
/// 3,000 rows, with `analyze` as `msgx.postgres.analyze-grown-tables`, and
/// returns the table's row count as the planner sees it afterwards.
async fn planner_rows_after_a_pump_run(analyze: bool) -> f32 {
    let db = TestDb::migrated().await;
    let mb = TestMailbox::new().await;
    sqlx::raw_sql(
        "INSERT INTO proc_state_hst (msg_id, state, enqueued_at, updated_at, archived_at) \
         SELECT g, 'SUCCEEDED', now(), now(), now() FROM generate_series(1000001, 1003000) g",
    )
    .execute(&db.pool)
    .await
    .expect("grow proc_state_hst");
    counted(&db.pool, "proc_state_hst", 3000).await;
    mb.insert(&flop(1, 7001, "REMC", "<REMC>r</REMC>")).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.postgres.analyze_grown_tables = analyze
    });
    run_ok(&r, "ingest-sweep").await;
    let pumped = run_ok(&r, "pump-drain").await;
    assert_eq!(pumped.items, 1, "{pumped:?}");
    sqlx::query_scalar("SELECT reltuples FROM pg_class WHERE relname = 'proc_state_hst'")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_pump_analyzes_a_table_that_doubled_since_its_statistics_unless_told_not_to() {
    assert_eq!(planner_rows_after_a_pump_run(true).await, 3000.0);
    assert_eq!(
        planner_rows_after_a_pump_run(false).await,
        -1.0,
        "never analyzed"
    );
}

#[tokio::test]
async fn the_growing_tables_keep_their_statistics_current() {
    let db = TestDb::migrated().await;
    let options: Vec<String> = sqlx::query_scalar(
        "SELECT array_to_string(reloptions, ',') FROM pg_class \
         WHERE relname IN ('proc_state', 'msg_event', 'flight_schd') ORDER BY relname",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(options.len(), 3);
    for o in &options {
        assert!(
            o.contains("autovacuum_analyze_scale_factor=0.02")
                && o.contains("autovacuum_vacuum_scale_factor=0.05"),
            "{o}"
        );
    }
}

#[tokio::test]
async fn a_statement_past_statement_timeout_fails_naming_the_key() {
    let db = TestDb::migrated().await;
    let mut cfg = db.config().msgx.postgres;
    cfg.statement_timeout = ms("200ms");
    let pool = pg::connect(&cfg).await.expect("pool");
    let e = sqlx::query("SELECT pg_sleep(5)")
        .execute(&pool)
        .await
        .expect_err("cancelled by the server");
    assert_eq!(
        pg::timeout_setting(&e),
        Some("msgx.postgres.statement-timeout"),
        "{e}"
    );
    let job_error = msgx::jobs::JobError::from(e).to_string();
    assert!(
        job_error.contains("statement timeout")
            && job_error.contains("msgx.postgres.statement-timeout"),
        "{job_error}"
    );
    // `msgx migrate` runs without it (a migration may rewrite a large table).
    let fresh = TestDb::empty().await;
    let mut cfg = fresh.config().msgx.postgres;
    cfg.statement_timeout = ms("1ms");
    let pool = pg::connect(&cfg).await.expect("pool");
    pg::migrate(&pool)
        .await
        .expect("migrations are not cut short");
}

#[tokio::test]
async fn a_lock_held_elsewhere_fails_the_job_run_after_lock_timeout() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert("<MSG/>").await;
    // Another session holds the cursor row the ingest must update.
    let mut holder = db.pool.begin().await.unwrap();
    sqlx::query("SELECT w FROM inbox_cursor WHERE id = 1 FOR UPDATE")
        .execute(&mut *holder)
        .await
        .unwrap();
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.postgres.lock_timeout = ms("300ms");
    });
    let out = msgx(cfg.path(), &["run", "ingest-sweep"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    holder.rollback().await.unwrap();
    let (outcome, error): (String, Option<String>) =
        sqlx::query_as("SELECT outcome, error FROM job_run WHERE job = 'ingest-sweep'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    let error = error.unwrap_or_default();
    assert_eq!(outcome, "FAILED");
    assert!(
        error.contains("lock timeout") && error.contains("msgx.postgres.lock-timeout"),
        "{error}"
    );
    let w: i64 = sqlx::query_scalar("SELECT w FROM inbox_cursor")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(w, 0, "nothing was enqueued");
}

#[tokio::test]
async fn every_mailbox_session_has_the_server_side_statement_timeout() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let mut cfg = db.config().msgx.mailbox;
    cfg.url = mb.url.clone();
    cfg.statement_timeout = ms("1s");
    let pool = mysql_async::Pool::new(msgx::store::mailbox::pool_opts(&cfg).unwrap());
    for _ in 0..2 {
        // The second connection comes back from the pool after its reset.
        let mut conn = pool.get_conn().await.unwrap();
        let (statement, lock): (f64, u64) = conn
            .query_first("SELECT @@max_statement_time, @@innodb_lock_wait_timeout")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((statement, lock), (1.0, 1));
    }
    let mut conn = pool.get_conn().await.unwrap();
    let e = conn
        .query_drop("SELECT SLEEP(3)")
        .await
        .expect_err("stopped by the server");
    assert!(
        matches!(&e, mysql_async::Error::Server(s) if s.code == 1969),
        "{e}"
    );
    drop(conn);
    let _ = pool.disconnect().await;
}

#[tokio::test]
async fn a_locked_mailbox_fails_the_read_and_the_head_turns_failed_infra() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.mailbox.statement_timeout = ms("1s");
    });
    mb.insert(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
         <STYP>REMC</STYP></META><FLOP><FLID>1</FLID><FFID>X</FFID><REMC>x</REMC></FLOP></MSG>",
    )
    .await;
    let once = RunOptions::default();
    r.run("ingest-sweep", &once, None)
        .await
        .expect("ingest runs");

    // Another session holds a write lock on the inbound table.
    let mut locker = mb.pool.get_conn().await.unwrap();
    locker
        .query_drop(format!("LOCK TABLES {} WRITE", mb.inbox))
        .await
        .unwrap();
    let mailbox = {
        let mut c = db.config().msgx.mailbox;
        c.url = mb.url.clone();
        c.statement_timeout = ms("1s");
        Mailbox::new(&c).unwrap()
    };
    let e = mailbox.fetch_after(0, 10).await.expect_err("bounded");
    assert!(matches!(e, MailboxError::StatementTimeout { .. }), "{e}");

    let ingest = r.run("ingest-sweep", &once, None).await.unwrap();
    assert_eq!(ingest.outcome, msgx::store::pg::job_run::Outcome::Failed);
    let error = ingest.error.unwrap_or_default();
    assert!(error.contains("msgx.mailbox.statement-timeout"), "{error}");

    let pump = r.run("pump-drain", &once, None).await.unwrap();
    assert_eq!(pump.details.get("failed").and_then(|v| v.as_u64()), Some(1));
    let (state, class, last_error): (String, Option<String>, Option<String>) =
        sqlx::query_as("SELECT state, error_class, last_error FROM proc_state WHERE msg_id = 1")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        (state.as_str(), class.as_deref()),
        ("FAILED", Some("INFRA"))
    );
    assert!(
        last_error
            .unwrap_or_default()
            .contains("msgx.mailbox.statement-timeout")
    );
    locker.query_drop("UNLOCK TABLES").await.unwrap();
    drop(locker);
    mailbox.close().await;
}

/// The TCP sockets of this process connected to `port`, with whether each
/// has TCP_NODELAY.
fn sockets_to(port: u16) -> Vec<bool> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stream) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if !stream.to_string_lossy().starts_with("socket:") {
            continue;
        }
        // The peer of a TCP socket, through a borrowed std handle that is
        // never closed (ManuallyDrop).
        use std::os::fd::FromRawFd;
        let tcp = std::mem::ManuallyDrop::new(unsafe { std::net::TcpStream::from_raw_fd(fd) });
        if tcp.peer_addr().is_ok_and(|a| a.port() == port)
            && let Some(on) = pg::nodelay::is_set(fd)
        {
            out.push(on);
        }
    }
    out
}

/// Issue 20 (burst catch-up): sqlx 0.9.0 left Nagle's algorithm on, so over
/// TLS a statement could wait 40 ms for the server's delayed ACK (pump-drain
/// 40 s instead of 7 s for 20,000 FLOPs). Every pooled session and the lock
/// session now have TCP_NODELAY. Fails without `store::pg::nodelay`.
#[tokio::test]
async fn every_postgresql_session_has_tcp_nodelay() {
    let db = TestDb::migrated().await;
    let mut cfg = msgx::config::Config::default();
    cfg.msgx.postgres.url = db.url.clone();
    let pool = pg::connect(&cfg.msgx.postgres).await.expect("pool");
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(pool.acquire().await.expect("session"));
    }
    let lock = pg::connect_session(&db.url).await.expect("lock session");
    let port = db
        .url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(5432);
    let sockets = sockets_to(port);
    assert!(
        sockets.len() >= 4,
        "the sessions' sockets are found: {sockets:?}"
    );
    assert!(
        sockets.iter().all(|on| *on),
        "TCP_NODELAY on every session: {sockets:?}"
    );
    drop((held, lock));
}
