//! Host lists in `msgx.postgres.url` (libpq's multi-host URLs) against a
//! real private PostgreSQL 15 primary and its streaming replica
//! (`common::servers::pg_pair`): the order hosts are tried in, what each
//! `target_session_attrs` picks, a host that is down or never answers, a
//! primary that turns read-only under a pool and under the instance lock,
//! writers refusing a URL of standbys, and what `msgx doctor` reports.

use crate::common;

use common::servers::{PgPair, Side, pg_pair};
use common::*;
use msgx::config::{Config, Dur, Postgres};
use msgx::instance_lock::{AdvisoryLock, LockKey};
use msgx::store::pg::{self, StoreError, hosts::TargetSessionAttrs};
use std::time::{Duration, Instant};

fn cfg(url: String) -> Postgres {
    Postgres {
        url,
        acquire_timeout: Dur::secs(3),
        ..Postgres::default()
    }
}

/// The port of the server a pooled session is on.
async fn pool_port(pool: &sqlx::PgPool) -> u16 {
    let p: i32 = sqlx::query_scalar("SELECT inet_server_port()")
        .fetch_one(pool)
        .await
        .expect("server port");
    u16::try_from(p).expect("port")
}

/// The port of the host the connector chooses for `url`, or its error.
async fn chosen(url: &str) -> Result<u16, String> {
    let targets = pg::connect_targets(url).map_err(|e| e.to_string())?;
    match targets.connect().await {
        Ok(mut c) => {
            let p: i32 = sqlx::query_scalar("SELECT inet_server_port()")
                .fetch_one(&mut c.conn)
                .await
                .expect("server port");
            Ok(u16::try_from(p).expect("port"))
        }
        Err(passed) => Err(pg::ha::describe(&passed)),
    }
}

/// A port nothing listens on (connection refused).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

#[tokio::test]
async fn hosts_are_tried_in_order_and_the_first_writable_one_wins() {
    let pair = pg_pair();
    let (p, r) = (pair.primary, pair.replica);
    // No target_session_attrs with several hosts: read-write.
    assert_eq!(chosen(&pair.url(&[r, p], "")).await, Ok(p));
    assert_eq!(chosen(&pair.url(&[p, r], "")).await, Ok(p));
    // `any`: the first host that answers, standby or not.
    assert_eq!(
        chosen(&pair.url(&[r, p], "target_session_attrs=any")).await,
        Ok(r)
    );
    // The job pool and the lock session choose the same way.
    let pool = pg::connect(&cfg(pair.url(&[r, p], "")))
        .await
        .expect("pool");
    assert_eq!(pool_port(&pool).await, p);
    for _ in 0..5 {
        let mut s = pool.acquire().await.expect("session");
        let ro: String = sqlx::query_scalar("SHOW transaction_read_only")
            .fetch_one(&mut *s)
            .await
            .unwrap();
        assert_eq!(ro, "off");
    }
    pool.close().await;
    let mut lock = pg::connect_session(&pair.url(&[r, p], ""))
        .await
        .expect("lock session");
    let port: i32 = sqlx::query_scalar("SELECT inet_server_port()")
        .fetch_one(&mut lock)
        .await
        .unwrap();
    assert_eq!(port, i32::from(p));
}

#[tokio::test]
async fn every_target_session_attrs_value_picks_its_kind_of_server() {
    let pair = pg_pair();
    let (p, r) = (pair.primary, pair.replica);
    for (attrs, primary_first, replica_first) in [
        ("any", p, r),
        ("read-write", p, p),
        ("primary", p, p),
        ("read-only", r, r),
        ("standby", r, r),
        ("prefer-standby", r, r),
    ] {
        let q = format!("target_session_attrs={attrs}");
        assert_eq!(
            chosen(&pair.url(&[p, r], &q)).await,
            Ok(primary_first),
            "{attrs}, primary first"
        );
        assert_eq!(
            chosen(&pair.url(&[r, p], &q)).await,
            Ok(replica_first),
            "{attrs}, replica first"
        );
    }
    // prefer-standby without a standby takes the primary; standby refuses.
    assert_eq!(
        chosen(&pair.url(&[p], "target_session_attrs=prefer-standby")).await,
        Ok(p)
    );
    let e = chosen(&pair.url(&[p], "target_session_attrs=standby"))
        .await
        .unwrap_err();
    assert!(e.contains("primary (read-write)"), "{e}");
    // The same value as host/port parameter lists.
    let url = format!(
        "postgres://msgx:msgx@/postgres?host=127.0.0.1,127.0.0.1&port={p},{r}&target_session_attrs=standby"
    );
    assert_eq!(chosen(&url).await, Ok(r));

    // The console's lazy pool starts on the first host and moves to the
    // kind asked for.
    let mut c = Config::default();
    c.msgx.postgres = cfg(pair.url(&[p, r], "target_session_attrs=read-only"));
    let console = pg::connect_console(&c.msgx.postgres, &c.msgx.console).expect("console pool");
    assert_eq!(pool_port(&console).await, r);
    console.close().await;
}

#[tokio::test]
async fn a_host_that_is_down_or_silent_is_passed_over_within_connect_timeout() {
    let pair = pg_pair();
    let down = closed_port();
    // Refused: the next host at once.
    let started = Instant::now();
    let pool = pg::connect(&cfg(pair.url(&[down, pair.primary], "connect_timeout=2")))
        .await
        .expect("pool");
    assert_eq!(pool_port(&pool).await, pair.primary);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    pool.close().await;

    // Accepts TCP but never speaks: given up after connect_timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let url = pair.url(
        &[silent_port, pair.replica, pair.primary],
        "connect_timeout=2",
    );
    let mut lock = pg::connect_session(&url).await.expect("lock session");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "{took:?}"
    );
    let port: i32 = sqlx::query_scalar("SELECT inet_server_port()")
        .fetch_one(&mut lock)
        .await
        .unwrap();
    assert_eq!(port, i32::from(pair.primary));

    // Nothing answers: every host named with why.
    let e = pg::connect(&cfg(pair.url(&[down, pair.replica], "")))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no host of msgx.postgres.url is read-write")
            && e.contains(&format!("127.0.0.1:{down}"))
            && e.contains(&format!(
                "127.0.0.1:{}: standby (in recovery)",
                pair.replica
            )),
        "{e}"
    );
}

#[tokio::test]
async fn writers_refuse_a_url_of_standbys_or_one_asking_for_a_read_only_server() {
    let pair = pg_pair();
    let r = pair.replica;
    // Only standbys.
    for url in [
        pair.url(&[r, r], ""),
        pair.url(&[r], "target_session_attrs=read-write"),
    ] {
        let e = pg::connect(&cfg(url.clone())).await.unwrap_err();
        assert!(
            matches!(&e, StoreError::NoHost { wanted: TargetSessionAttrs::ReadWrite, hosts } if hosts.contains("standby (in recovery)")),
            "{e}"
        );
        let e = AdvisoryLock::try_acquire(&url, LockKey::instance(), "msgx test")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no host of msgx.postgres.url is read-write"),
            "{e}"
        );
    }
    // Asking for a server that may refuse writes is a config error, before
    // any connect.
    for attrs in ["read-only", "standby", "prefer-standby", "any"] {
        let url = pair.url(&[pair.primary, r], &format!("target_session_attrs={attrs}"));
        let e = pg::connect(&cfg(url.clone())).await.unwrap_err();
        assert!(matches!(e, StoreError::NotAWriter(_)), "{attrs}: {e}");
        assert!(
            e.to_string()
                .contains(&format!("target_session_attrs={attrs}"))
        );
        assert!(matches!(
            pg::connect_session(&url).await,
            Err(StoreError::NotAWriter(_))
        ));
        let mut c = Config::default();
        c.msgx.postgres.url = url;
        let file = write_config(&c);
        let out = msgx(file.path(), &["config", "check"]);
        assert_eq!(code(&out), 2, "{}", text(&out));
        assert!(
            text(&out).contains(&format!("target_session_attrs={attrs}")),
            "{}",
            text(&out)
        );
    }
}

/// Waits (bounded) until a write through `pool` fails with SQLSTATE 25006:
/// the reload reaches each session between its statements.
async fn wait_for_read_only_error(pool: &sqlx::PgPool) -> sqlx::Error {
    let started = Instant::now();
    loop {
        match sqlx::query("INSERT INTO ha_probe VALUES (1)")
            .execute(pool)
            .await
        {
            Err(e) if pg::sqlstate(&e).as_deref() == Some("25006") => return e,
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "the primary still takes writes"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn read_write_primary(pair: &PgPair) {
    pair.admin(
        Side::Primary,
        "CREATE TABLE IF NOT EXISTS ha_probe (id int)",
    );
}

#[tokio::test]
async fn a_primary_turned_read_only_is_left_after_the_error_and_the_pool_follows() {
    let pair = pg_pair();
    read_write_primary(&pair);
    // A second writable server after the pair's primary: the shared test
    // server, as user msgx (password msgx) like the pair.
    let shared: sqlx::postgres::PgConnectOptions = pg_admin_url().parse().unwrap();
    let url = format!(
        "postgres://msgx:msgx@127.0.0.1:{},{}:{}/postgres",
        pair.primary,
        shared.get_host(),
        shared.get_port()
    );
    // The recheck interval is long: only the error makes the pool look.
    let pool = pg::connect(&Postgres {
        recheck_interval: Dur::hours(1),
        ..cfg(url)
    })
    .await
    .expect("pool");
    assert_eq!(pool_port(&pool).await, pair.primary);
    sqlx::query("INSERT INTO ha_probe VALUES (1)")
        .execute(&pool)
        .await
        .expect("a write on the primary");

    pair.set_read_only(true);
    let e = wait_for_read_only_error(&pool).await;
    // What every job's error path does with a PostgreSQL error.
    pg::ha::note_error(&e);
    wait_until(
        "the pool moves to the writable host",
        Duration::from_secs(10),
        || async { pool_port(&pool).await == shared.get_port() },
    )
    .await;
    for _ in 0..8 {
        let mut s = pool.acquire().await.expect("session");
        let (port, ro): (i32, String) =
            sqlx::query_as("SELECT inet_server_port(), current_setting('transaction_read_only')")
                .fetch_one(&mut *s)
                .await
                .unwrap();
        assert_eq!((port, ro.as_str()), (i32::from(shared.get_port()), "off"));
    }

    // The old primary taking writes again does not take the pool back.
    pair.set_read_only(false);
    pg::ha::note_error(&e);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(pool_port(&pool).await, shared.get_port());
    pool.close().await;
}

#[tokio::test]
async fn with_no_writable_host_left_the_pool_gives_no_session_until_one_is_back() {
    let pair = pg_pair();
    read_write_primary(&pair);
    let pool = pg::connect(&Postgres {
        recheck_interval: Dur::secs(1),
        ..cfg(pair.url(
            &[pair.primary, pair.replica],
            "target_session_attrs=read-write",
        ))
    })
    .await
    .expect("pool");
    sqlx::query("INSERT INTO ha_probe VALUES (1)")
        .execute(&pool)
        .await
        .expect("a write on the primary");

    pair.set_read_only(true);
    // Within the recheck interval (no error noted), the pool stops handing
    // out sessions on the read-only primary; until then a write fails on the
    // server (25006). No write succeeds once the reload is through.
    let started = Instant::now();
    loop {
        match sqlx::query("INSERT INTO ha_probe VALUES (1)")
            .execute(&pool)
            .await
        {
            Err(sqlx::Error::PoolTimedOut) => break,
            Err(e) if pg::sqlstate(&e).as_deref() == Some("25006") => {}
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the pool still hands out sessions on the read-only primary"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(
        pool.acquire().await,
        Err(sqlx::Error::PoolTimedOut)
    ));

    pair.set_read_only(false);
    wait_until("the pool serves again", Duration::from_secs(15), || async {
        sqlx::query("INSERT INTO ha_probe VALUES (2)")
            .execute(&pool)
            .await
            .is_ok()
    })
    .await;
    assert_eq!(pool_port(&pool).await, pair.primary);
    pool.close().await;
}

#[tokio::test]
async fn the_instance_lock_is_taken_on_the_primary_and_lost_when_it_turns_read_only() {
    let pair = pg_pair();
    let url = pair.url(&[pair.replica, pair.primary], "");
    let lock = AdvisoryLock::try_acquire(&url, LockKey::instance(), "msgx test ha")
        .await
        .expect("lock session")
        .expect("lock is free");
    let holder = pair.admin(
        Side::Primary,
        "SELECT application_name FROM pg_stat_activity WHERE application_name = 'msgx test ha'",
    );
    assert_eq!(holder.trim(), "msgx test ha");
    assert!(lock.check().await, "healthy");

    pair.set_read_only(true);
    wait_until("the lock is lost", Duration::from_secs(10), || async {
        !lock.check().await
    })
    .await;
    assert!(lock.is_lost());
    lock.release().await;
}

#[tokio::test]
async fn doctor_names_the_primary_and_the_standbys_it_can_see() {
    let pair = pg_pair();
    let kafka = mock_kafka(1);
    let doctor = |user: &str| {
        let mut c = Config::default();
        fast_kafka(&mut c, &kafka.bootstrap_servers());
        c.msgx.postgres.url = pair
            .url(&[pair.replica, pair.primary], "")
            .replace("msgx:msgx@", &format!("{user}:msgx@"));
        let file = write_config(&c);
        let out = msgx(file.path(), &["doctor", "--json"]);
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        let row = |name: &str| {
            report["checks"]
                .as_array()
                .and_then(|a| a.iter().find(|c| c["name"] == name))
                .map(|c| {
                    (
                        c["status"].as_str().unwrap_or_default().to_string(),
                        c["detail"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .unwrap_or_else(|| ("absent".into(), text(&out)))
        };
        (row("postgres.hosts"), row("postgres.replication"))
    };
    let ((status, hosts), (rstatus, repl)) = doctor("msgx");
    assert_eq!(status, "ok", "{hosts}");
    assert_eq!(
        hosts,
        format!(
            "msgx writes to 127.0.0.1:{p}; 127.0.0.1:{r} standby (in recovery); \
             127.0.0.1:{p} primary (read-write)",
            p = pair.primary,
            r = pair.replica
        )
    );
    assert_eq!(rstatus, "ok", "{repl}");
    assert!(
        repl.starts_with("1 standby(s): ") && repl.contains("from 127.0.0.1 streaming"),
        "{repl}"
    );
    let (_, (rstatus, repl)) = doctor("msgx_plain");
    assert_eq!(rstatus, "ok", "{repl}");
    assert!(repl.contains("not permitted"), "{repl}");
}
