//! RunLog: the daemon's JOB_RUN rows of its pipeline runs, written behind the
//! runs (issue 38 item 2). A pipeline run that handled items used to write
//! its row itself, in an autocommit INSERT (a commit: an fsync), before its
//! job could run again — so a pump run asked for again while it ran, or an
//! ingest poll after rows, waited for that commit, and a 20 msg/s feed paid
//! about 60 such commits a second. Now the run queues its row and returns;
//! one writer task inserts whatever is queued in one statement, in queue
//! order, so a busy feed's rows share a commit and none is on a stage's path.
//!
//! What JOB_RUN guarantees is kept: every such run gets its row, with its
//! own start, end, outcome, items and details; the rows keep the order the
//! runs ended in; the daemon flushes the queue before it releases its lock.
//! A row is at most one write late (milliseconds). A write that fails is
//! logged and counted (`msgx_job_run_write_failures_total`) and its rows
//! dropped, as a failed direct write was logged before: the run itself
//! stands.

use crate::store::pg::job_run::{self, FinishedRun};
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

/// Rows written in one statement at most.
const BATCH: usize = 500;

enum Msg {
    Run(Box<FinishedRun>),
    Flush(oneshot::Sender<()>),
}

/// The queue of finished runs and its writer task.
#[derive(Clone)]
pub struct RunLog {
    tx: mpsc::UnboundedSender<Msg>,
}

impl std::fmt::Debug for RunLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunLog")
    }
}

impl RunLog {
    /// Starts the writer task on `pool`; it ends when every handle is gone.
    pub fn start(pool: PgPool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_behind(pool, rx));
        Self { tx }
    }

    /// Queues `run`'s row; never waits.
    pub fn record(&self, run: FinishedRun) {
        if self.tx.send(Msg::Run(Box::new(run))).is_err() {
            tracing::error!("JOB_RUN writer is gone; a run's row is not written");
        }
    }

    /// Waits until every row queued before this call is written (or its
    /// write failed).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_behind(pool: PgPool, mut rx: mpsc::UnboundedReceiver<Msg>) {
    let mut runs = Vec::new();
    let mut flushes = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(msg) = next {
            match msg {
                Msg::Run(run) => runs.push(*run),
                Msg::Flush(done) => flushes.push(done),
            }
            next = if runs.len() < BATCH {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        if !runs.is_empty() {
            if let Err(e) = job_run::insert_finished_many(&pool, &runs).await {
                metrics::counter!("msgx_job_run_write_failures_total").increment(1);
                tracing::error!(error = %e, rows = runs.len(), "Cannot record the end of job runs");
            }
            runs.clear();
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}
