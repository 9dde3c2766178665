//! Dispatch throughput (issue 6, item 7): `dispatch-msg` drains N pending
//! KAFKA:msg events into an in-process mock cluster (idempotent producer,
//! acks=all) through the normal job runner. Run it with
//! `scripts/bench-dispatch.sh` (a release build), or:
//!
//! ```text
//! cargo run --release --example bench_dispatch -- [--events 100000] [--flights 10000] [--batch 500] [--brokers 3] [--property key=value]... [--no-analyze]
//! ```
//!
//! It creates and drops its own database `msgx_bench_<pid>` on the server of
//! `MSGX_BENCH_PG_ADMIN_URL` (default: the local test PostgreSQL).

use msgx::clock::{SharedClock, SystemClock};
use msgx::config::Config;
use msgx::scheduler::runner::{JobRunner, RunOptions, Trigger};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::mocking::MockCluster;
use sqlx::{Connection, PgConnection};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Args {
    events: i64,
    flights: i64,
    batch: u32,
    brokers: i32,
    /// Extra librdkafka properties (`msgx.kafka.properties`), `key=value`.
    props: Vec<String>,
    /// ANALYZE after the bulk insert (as autovacuum would within a minute).
    analyze: bool,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        events: 100_000,
        flights: 10_000,
        batch: Config::default().msgx.dispatch.batch,
        brokers: 3,
        props: Vec::new(),
        analyze: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-analyze" {
            a.analyze = false;
            continue;
        }
        let value = it
            .next()
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))?;
        match flag.as_str() {
            "--events" => a.events = value.parse()?,
            "--flights" => a.flights = value.parse()?,
            "--batch" => a.batch = value.parse()?,
            "--brokers" => a.brokers = value.parse()?,
            "--property" => a.props.push(value),
            _ => anyhow::bail!("unknown flag {flag}"),
        }
    }
    Ok(a)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let admin = std::env::var("MSGX_BENCH_PG_ADMIN_URL")
        .unwrap_or_else(|_| "postgres://msgx:msgx@127.0.0.1:5432/postgres".into());
    let name = format!("msgx_bench_{}", std::process::id());
    let mut conn = PgConnection::connect(&admin).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await?;
    let url = match admin.rfind('/') {
        Some(i) => format!("{}/{name}", &admin[..i]),
        None => anyhow::bail!("admin URL has no database part"),
    };
    let result = bench(&args, &url).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await?;
    result
}

async fn bench(args: &Args, url: &str) -> anyhow::Result<()> {
    let cluster = MockCluster::new(args.brokers)?;
    cluster.create_topic("msg", 6, args.brokers.min(3))?;
    cluster.create_topic("schd", 6, args.brokers.min(3))?;

    let mut config = Config::default();
    config.msgx.postgres.url = url.to_string();
    // Never connected (dispatch does not read the mailbox), but there is
    // no built-in URL to build the handle from.
    config.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:3306/msgx_mailbox".into();
    config.msgx.kafka.brokers = cluster.bootstrap_servers();
    config.msgx.dispatch.batch = args.batch;
    config.msgx.log.dir = String::new();
    for kv in args.props.iter() {
        if let Some((k, v)) = kv.split_once('=') {
            config.msgx.kafka.properties.insert(k.into(), v.into());
        }
    }
    let pool = msgx::store::pg::connect(&config.msgx.postgres).await?;
    msgx::store::pg::migrate(&pool).await?;

    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let runner = JobRunner {
        pg: pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&config.msgx.mailbox)?,
        config: Arc::new(config),
        clock: Arc::new(SystemClock) as SharedClock,
        instance: "bench".into(),
        trigger: Trigger::Cli,
        shutdown,
        kafka: Default::default(),
        jobs: Default::default(),
        pauses: Default::default(),
        run_log: None,
    };
    let drain = RunOptions {
        until_empty: true,
        max_items: Some(u64::MAX),
        ..Default::default()
    };

    // Warm-up: one event pays the producer-id init (≈ 0.5 s, infra notes).
    insert(&pool, 1, 1).await?;
    runner.run("dispatch-msg", &drain, None).await?;

    let t = Instant::now();
    insert(&pool, args.events, args.flights).await?;
    if args.analyze {
        // A fresh bulk insert has no statistics yet; the planner would then
        // sort the whole backlog per batch (docs/BENCHMARKS.md).
        sqlx::query("ANALYZE msg_event").execute(&pool).await?;
    }
    let insert_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let summary = runner.run("dispatch-msg", &drain, None).await?;
    let secs = t.elapsed().as_secs_f64();

    let sent: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE status = 'SENT'")
        .fetch_one(&pool)
        .await?;
    let in_topic = topic_count(&runner.config.msgx.kafka.brokers, "msg")?;
    anyhow::ensure!(
        summary.items == args.events as u64 && sent == args.events + 1,
        "not everything was delivered: {summary:?}, SENT rows {sent}"
    );
    println!(
        "events={} flights={} batch={} brokers={} insert_s={insert_s:.2} dispatch_s={secs:.2} \
         analyze={} events_per_s={:.0} sent_rows={sent} records_in_topic={in_topic}",
        args.events,
        args.flights,
        args.batch,
        args.brokers,
        args.analyze,
        args.events as f64 / secs
    );
    Ok(())
}

/// `n` pending events over `flights` FLIDs, interleaved by EVENT_ID, with a
/// ≈ 200-byte payload like a change notification.
async fn insert(pool: &sqlx::PgPool, n: i64, flights: i64) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at) \
         SELECT 'KAFKA:msg', (i % $2)::text, 'UPSERT', i / $2 + 1, i, \
                convert_to(format('{\"flid\":%s,\"state_version\":%s,\"msg_id\":%s,\"msg_kind\":\"FLOP-GTDT\",\
\"change\":\"UPSERT\",\"changed_fields\":[\"GTDT\"],\"updated_at\":\"2026-01-01T08:00:00Z\"}', \
                        i % $2, i / $2 + 1, i), 'UTF8'), now() \
         FROM generate_series(0, $1 - 1) AS i",
    )
    .bind(n)
    .bind(flights.max(1))
    .execute(pool)
    .await?;
    Ok(())
}

/// Records in all partitions of `topic` (high − low watermarks).
fn topic_count(brokers: &str, topic: &str) -> anyhow::Result<i64> {
    let consumer: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "msgx-bench")
        .create()?;
    let md = consumer.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    let mut total = 0;
    for t in md.topics() {
        for p in t.partitions() {
            let (lo, hi) = consumer.fetch_watermarks(topic, p.id(), Duration::from_secs(10))?;
            total += hi - lo;
        }
    }
    Ok(total)
}
