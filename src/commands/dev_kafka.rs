//! `msgx dev-kafka`: a local Kafka endpoint with no install.
//! Runs librdkafka's mock cluster on 127.0.0.1, creates the msg and schd
//! topics, prints `bootstrap=<servers>` as its one stdout line, and stays up
//! until SIGINT/SIGTERM.
//!
//! Fault controls for soak tests: SIGUSR1 takes every broker down, SIGUSR2
//! brings them all back up. The mock cluster keeps data in memory only and
//! supports what the delivery jobs and `msgx tail` use (produce with
//! idempotence and acks=all, metadata, fetch); not the admin API or groups
//! beyond the basics. Never a production broker.

use crate::config;
use crate::exit::Exit;
use rdkafka::mocking::MockCluster;
use std::io::Write;
use tokio::signal::unix::{SignalKind, signal};

/// `msgx dev-kafka` options.
#[derive(Debug, Clone, Copy)]
pub struct DevKafkaOptions {
    /// Mock brokers.
    pub brokers: i32,
    /// Partitions per topic.
    pub partitions: i32,
}

/// Runs the mock cluster until SIGINT/SIGTERM; returns the exit code.
pub async fn run(cfg: &config::Kafka, opts: DevKafkaOptions) -> Exit {
    if opts.brokers < 1 || opts.partitions < 1 {
        eprintln!("msgx dev-kafka: --brokers and --partitions must be at least 1");
        return Exit::Config;
    }
    let cluster = match MockCluster::new(opts.brokers) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("msgx dev-kafka: cannot start the mock cluster: {e}");
            return Exit::Failure;
        }
    };
    let replication = opts.brokers.min(3);
    for topic in [
        &cfg.topic_msg,
        &cfg.topic_schd,
        &cfg.topic_season,
        &cfg.topic_audit,
    ] {
        if let Err(e) = cluster.create_topic(topic, opts.partitions, replication) {
            eprintln!("msgx dev-kafka: cannot create topic {topic}: {e}");
            return Exit::Failure;
        }
    }
    let (mut int, mut term, mut usr1, mut usr2) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::user_defined1()),
        signal(SignalKind::user_defined2()),
    ) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        _ => {
            eprintln!("msgx dev-kafka: cannot install signal handlers");
            return Exit::Failure;
        }
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "bootstrap={}", cluster.bootstrap_servers());
    let _ = stdout.flush();
    drop(stdout);
    eprintln!(
        "msgx dev-kafka: {} broker(s), topics {}, {}, {} and {} with {} partition(s), replication {}; \
         SIGUSR1 = all brokers down, SIGUSR2 = all brokers up, SIGINT/SIGTERM = stop (pid {})",
        opts.brokers,
        cfg.topic_msg,
        cfg.topic_schd,
        cfg.topic_season,
        cfg.topic_audit,
        opts.partitions,
        replication,
        std::process::id()
    );
    loop {
        tokio::select! {
            _ = int.recv() => break,
            _ = term.recv() => break,
            _ = usr1.recv() => match cluster.broker_down(-1) {
                Ok(()) => eprintln!("msgx dev-kafka: all brokers down"),
                Err(e) => eprintln!("msgx dev-kafka: broker_down failed: {e}"),
            },
            _ = usr2.recv() => match cluster.broker_up(-1) {
                Ok(()) => eprintln!("msgx dev-kafka: all brokers up"),
                Err(e) => eprintln!("msgx dev-kafka: broker_up failed: {e}"),
            },
        }
    }
    eprintln!("msgx dev-kafka: stopped");
    Exit::Ok
}
