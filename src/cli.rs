//! The `msgx` command line (issue 2, item 5). Exit codes:
//! 0 ok · 1 runtime failure · 2 invalid config or usage · 3 job not
//! implemented yet · 4 lock held elsewhere or lost · 5 a decoded message is
//! malformed · 6 a decoded message has a codec error.

use crate::clock::{SharedClock, SystemClock};
use crate::commands::inspect;
use crate::commands::target::{self, Needs, Target};
use crate::config::{Config, ConfigError, Loaded};
use crate::jobs::manifest;
use crate::jobs::registry;
use crate::jobs::runner::{Progress, RunError, RunOptions, Runner, Trigger};
use crate::scheduler::daemon::{self, DaemonOptions};
use crate::scheduler::profile::Profile;
use crate::store::mailbox::Mailbox;
use crate::store::pg;
use crate::store::pg::job_run::Outcome;
use crate::telemetry::{self, LogTarget};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

/// Exit codes.
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILURE: i32 = 1;
    pub const CONFIG: i32 = 2;
    pub const NOT_IMPLEMENTED: i32 = 3;
    pub const LOCKED: i32 = 4;
}

/// msgx: SIS mailbox → flight state (PostgreSQL) → Kafka, as scheduled jobs.
#[derive(Debug, Parser)]
#[command(name = "msgx", version, about, long_about = None, after_help = EXIT_HELP)]
pub struct Cli {
    /// Config file (default: $MSGX_CONFIG, else ./config/msgx.toml if present, else built-in defaults).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

const EXIT_HELP: &str = "Exit codes: 0 ok, 1 failure, 2 invalid config or usage, 3 job not implemented yet, \
4 lock held elsewhere or lost, 5 malformed message, 6 codec error.\n\
Environment: MSGX_CONFIG, MSGX_DATABASE_URL, MSGX_MAILBOX_URL, MSGX_KAFKA_BROKERS, RUST_LOG.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply the embedded PostgreSQL migrations (idempotent).
    Migrate,
    /// Check or show the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// List the jobs with their class, lock, bounds and schedule.
    Jobs {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run one job now (takes the same locks the daemon would).
    Run {
        /// Job name (see `msgx jobs`).
        job: String,
        /// Items this run handles at most (default: the job's manifest).
        #[arg(long, value_name = "N")]
        max_items: Option<u64>,
        /// Repeat bounded passes until no work is left.
        #[arg(long)]
        until_empty: bool,
        /// Report what would be done; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run the scheduler daemon (one active instance; see --standby).
    Daemon {
        /// Wait as a hot standby and take over when the active instance dies.
        #[arg(long)]
        standby: bool,
        /// Schedule profile name (daemon, maintenance-window) or file; overrides msgx.daemon.schedule.
        #[arg(long, value_name = "PROFILE")]
        schedule: Option<String>,
    },
    /// Decode SIS messages (files, or - for stdin) and show them or their error class.
    Decode {
        /// Files to decode; `-` reads standard input.
        #[arg(required = true, value_name = "FILE|-")]
        inputs: Vec<PathBuf>,
        /// One JSON object per input.
        #[arg(long)]
        json: bool,
    },
    /// The consumer contract: export or check the JSON Schemas of the Kafka
    /// records (`schemas/`, docs/asyncapi.yaml).
    Contract {
        #[command(subcommand)]
        action: ContractAction,
    },
    /// Development and test tools for the mailbox (never against production).
    Mailbox {
        #[command(subcommand)]
        action: MailboxAction,
    },
    /// Show the watermark, backlog, outbox, active instance and last job runs.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The outbox DLQ: list, resend or discard DEAD events (recorded in operator_action).
    Events {
        #[command(subcommand)]
        action: EventsAction,
    },
    /// Run a local mock Kafka cluster on 127.0.0.1 (development and tests only):
    /// prints `bootstrap=HOST:PORT,...`; SIGUSR1 = all brokers down, SIGUSR2 = up.
    DevKafka {
        /// Number of mock brokers.
        #[arg(long, default_value_t = 3, value_name = "N")]
        brokers: i32,
        /// Partitions of each topic.
        #[arg(long, default_value_t = 3, value_name = "N")]
        partitions: i32,
    },
    /// Print the records of a Kafka topic: key, headers, value (`null` for a tombstone).
    Tail {
        /// Topic name (msgx.kafka.topic-msg / topic-schd / topic-season).
        topic: String,
        /// Start at the earliest offset (default: only new records).
        #[arg(long)]
        from_beginning: bool,
        /// Stop after N records.
        #[arg(long, value_name = "N")]
        max: Option<u64>,
        /// Keep waiting at the end of the topic (default: stop at the end).
        #[arg(long)]
        follow: bool,
        /// Without --follow, stop after this long without any record.
        #[arg(long, default_value = "5s", value_name = "DURATION")]
        idle: crate::config::Dur,
        /// One JSON object per record.
        #[arg(long)]
        json: bool,
    },
    /// Abandoned backfills: list, reopen, reconcile (recorded; docs/backfill.md).
    Backfill {
        #[command(subcommand)]
        action: crate::commands::backfill::BackfillAction,
    },
    /// Move FAILED/DEAD messages back to PENDING (whitelisted classes; recorded).
    Replay(crate::commands::backfill::ReplayArgs),
    /// Set PENDING/FAILED backlog messages SKIPPED with a reason (recorded;
    /// they are then backfilled, never processed; §5.4).
    Skip(crate::commands::skip::SkipArgs),
    /// Upstream requests through COUTMSGS: schedule (RQFD), ref (RQRD), list (docs/requests.md).
    Request {
        #[command(subcommand)]
        action: crate::commands::request::RequestAction,
    },
    /// Inspect one flight: its current state and the messages that changed it.
    Flight {
        #[command(subcommand)]
        action: FlightAction,
    },
    /// The stored seasonal schedules (SCHS): list, show (docs/season.md).
    Season {
        #[command(subcommand)]
        action: crate::commands::season::SeasonAction,
    },
    /// Inspect one message: its PROC_STATE record and raw XML, decoded.
    Msg {
        #[command(subcommand)]
        action: MsgAction,
    },
    /// Preflight: connect to PostgreSQL, the mailbox and Kafka and check
    /// schema, tables, privileges, TLS and topics; one line per check, exit 1
    /// on any failure (docs/operations.md "Connecting to production").
    Doctor {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The open hole, the released holes and the late rows (design §4.1).
    Holes {
        /// Show at most N released holes and N late rows (newest first).
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum FlightAction {
    /// The complete current state (the KAFKA:schd projection JSON) and the
    /// messages that changed it, newest first.
    Show {
        /// The FLID.
        flid: i64,
        /// Show at most N changes.
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MsgAction {
    /// The PROC_STATE record (state, attempts, error, backfill) and the raw
    /// XML from the mailbox (or "purged"), decoded.
    Show {
        /// The mailbox ID (CMINMSGS_ID = MSG_ID).
        msg_id: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum EventsAction {
    /// List DEAD outbox events (oldest first).
    Dead {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Put DEAD events back to PENDING with a fresh retry budget. More than
    /// one ID is a bulk action: --reason, and --yes or a typed confirmation.
    Resend {
        /// EVENT_IDs.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<i64>,
        /// Why (recorded; required for more than one ID).
        #[arg(long)]
        reason: Option<String>,
        /// Confirm a bulk resend without being asked.
        #[arg(long)]
        yes: bool,
        /// Who (default: $USER).
        #[arg(long)]
        actor: Option<String>,
    },
    /// Delete DEAD events; the row, payload and reason are recorded.
    Discard {
        /// EVENT_IDs.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<i64>,
        /// Why (required, recorded).
        #[arg(long, required = true)]
        reason: String,
        /// Who (default: $USER).
        #[arg(long)]
        actor: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum MailboxAction {
    /// Insert a synthetic, realistic backlog (benchmarks and harnesses only).
    Generate {
        /// Messages to insert (holes count as messages).
        #[arg(long, default_value_t = 100_000)]
        messages: u64,
        /// Flights the SCHD packages create and the FLOPs update.
        #[arg(long, default_value_t = 2000)]
        flights: u32,
        /// PRNG seed (the same seed gives the same backlog).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fraction of FLOPs re-sent with the same SEQN (business duplicates).
        #[arg(long, default_value_t = 0.0)]
        duplicates: f64,
        /// Fraction of messages that are not well-formed.
        #[arg(long, default_value_t = 0.0)]
        malformed: f64,
        /// Rolled-back inserts (permanent holes) spread through the backlog.
        #[arg(long, default_value_t = 0)]
        holes: u32,
        /// First SEQN, so several runs into one mailbox stay unique.
        #[arg(long, default_value_t = 1)]
        first_seqn: u64,
        /// Flights per SCHD package (large-schedule benchmark: one package
        /// of 20,000 flights).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        package_flights: u32,
        /// FLTRs with the groups of a real schedule (stands, gates,
        /// counters, delays; about 800 bytes each instead of about 300).
        #[arg(long)]
        rich: bool,
        /// Leave out the SCHD packages (the flights exist from an earlier run).
        #[arg(long)]
        no_schedules: bool,
        /// Insert one message at a time at this many per second, printing
        /// `<unix time> <ID>` per insert (ID 0 = a hole); a failed insert is
        /// retried every second (latency benchmark, outage soak).
        #[arg(long, value_name = "PER_SECOND")]
        rate: Option<f64>,
    },
    /// Insert SIS files into CMINMSGS as the AODB would, in file-name order
    /// (directories: their *.xml files). Refused in shadow mode.
    Load {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ContractAction {
    /// Write the JSON Schemas generated from the code into DIR; with
    /// --check, write nothing and exit 1 when DIR differs from the code.
    Export {
        /// Where the schemas live.
        #[arg(long, default_value = "schemas", value_name = "DIR")]
        dir: PathBuf,
        /// Compare instead of writing (CI: code and committed schemas cannot drift).
        #[arg(long)]
        check: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Validate the configuration; exit 2 naming the key and rule on failure.
    Check,
    /// Print the effective configuration (secrets masked).
    Show,
}

/// The command's name, the connections it needs and whether it writes
/// (issue 16, item 5): a writing command names its target before it acts.
fn connections(command: &Command) -> (&'static str, Needs, bool) {
    use crate::commands::backfill::BackfillAction as B;
    use crate::commands::request::RequestAction as R;
    match command {
        Command::Migrate => ("migrate", Needs::POSTGRES, true),
        Command::Config { .. } => ("config", Needs::NONE, false),
        Command::Jobs { .. } => ("jobs", Needs::NONE, false),
        Command::Run { dry_run, .. } => ("run", Needs::BOTH, !dry_run),
        Command::Daemon { .. } => ("daemon", Needs::BOTH, true),
        Command::Decode { .. } => ("decode", Needs::NONE, false),
        Command::Contract { .. } => ("contract", Needs::NONE, false),
        Command::Mailbox { .. } => ("mailbox", Needs::MAILBOX, true),
        Command::Status { .. } => ("status", Needs::BOTH, false),
        Command::Events { action } => (
            "events",
            Needs::POSTGRES,
            !matches!(action, EventsAction::Dead { .. }),
        ),
        Command::DevKafka { .. } => ("dev-kafka", Needs::NONE, false),
        Command::Tail { .. } => ("tail", Needs::NONE, false),
        Command::Backfill { action } => (
            "backfill",
            Needs::POSTGRES,
            !matches!(action, B::Abandoned { .. }),
        ),
        Command::Replay(args) => ("replay", Needs::POSTGRES, !args.dry_run),
        Command::Skip(args) => ("skip", Needs::POSTGRES, !args.dry_run),
        Command::Request { action } => ("request", Needs::BOTH, !matches!(action, R::List { .. })),
        Command::Flight { .. } => ("flight", Needs::POSTGRES, false),
        Command::Season { .. } => ("season", Needs::POSTGRES, false),
        Command::Msg { .. } => ("msg", Needs::BOTH, false),
        Command::Holes { .. } => ("holes", Needs::POSTGRES, false),
        // The doctor reports a missing URL as its first failed check.
        Command::Doctor { .. } => ("doctor", Needs::NONE, false),
    }
}

/// Runs the parsed command; returns the exit code.
pub async fn run(cli: Cli) -> i32 {
    // Decoding is pure: it needs no configuration, so it works anywhere.
    if let Command::Decode { inputs, json } = &cli.command {
        return crate::commands::decode::run(inputs, *json, &mut std::io::stdout().lock());
    }
    // So is the contract: it is generated from the code.
    if let Command::Contract {
        action: ContractAction::Export { dir, check },
    } = &cli.command
    {
        return contract_export(dir, *check);
    }
    let loaded = match Config::load(cli.config.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("msgx: {e}");
            return match e {
                ConfigError::Read { .. } | ConfigError::Parse { .. } | ConfigError::Invalid(_) => {
                    exit::CONFIG
                }
            };
        }
    };
    let target = if matches!(cli.command, Command::Daemon { .. }) {
        LogTarget::Daemon
    } else {
        LogTarget::Command
    };
    let _log_guard = telemetry::init(&loaded.config.msgx.log, target);
    let (name, needs, writes) = connections(&cli.command);
    let absent = target::missing(&loaded.config, needs);
    if !absent.is_empty() {
        eprintln!(
            "msgx {name}: not configured; set {} (there is no built-in default, so that no \
             command acts on a database by accident)",
            absent.join(" and ")
        );
        return exit::CONFIG;
    }
    if writes {
        eprintln!(
            "msgx {name}: acting on {}",
            Target::of(&loaded.config, needs).line()
        );
    }
    let clock: SharedClock = Arc::new(SystemClock);
    match cli.command {
        Command::Config {
            action: ConfigAction::Check,
        } => config_check(&loaded),
        Command::Config {
            action: ConfigAction::Show,
        } => {
            print!("{}", loaded.config.to_masked_toml());
            exit::OK
        }
        Command::Decode { .. } | Command::Contract { .. } => exit::OK, // handled above: no config
        Command::Migrate => migrate(&loaded.config).await,
        Command::Jobs { json } => jobs(json),
        Command::Run {
            job,
            max_items,
            until_empty,
            dry_run,
            json,
        } => {
            let bar = progress_bar(until_empty && !json);
            let opts = RunOptions {
                max_items,
                until_empty,
                dry_run,
                progress: bar.clone().map(|b| {
                    Progress(Arc::new(move |n| {
                        b.set_position(n);
                    }))
                }),
            };
            let code = run_job(Arc::new(loaded.config), clock, &job, &opts, json).await;
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            code
        }
        Command::Daemon { standby, schedule } => {
            daemon::run(
                Arc::new(loaded.config),
                clock,
                DaemonOptions { standby, schedule },
            )
            .await
        }
        Command::Mailbox {
            action: MailboxAction::Load { paths },
        } => mailbox_load(&loaded.config, clock, &paths).await,
        Command::Mailbox {
            action:
                MailboxAction::Generate {
                    messages,
                    flights,
                    seed,
                    duplicates,
                    malformed,
                    holes,
                    first_seqn,
                    package_flights,
                    rich,
                    no_schedules,
                    rate,
                },
        } => {
            let spec = crate::commands::generate::Spec {
                messages,
                flights,
                seed,
                duplicates,
                malformed,
                holes,
                first_seqn,
                package_flights,
                rich,
            };
            mailbox_generate(&loaded.config, clock, &spec, !no_schedules, rate).await
        }
        Command::Backfill { action } => {
            crate::commands::backfill::run(&loaded.config, clock, action).await
        }
        Command::Replay(args) => {
            crate::commands::backfill::replay(&loaded.config, clock, args).await
        }
        Command::Skip(args) => crate::commands::skip::run(&loaded.config, clock, args).await,
        Command::Request { action } => {
            crate::commands::request::run(&loaded.config, clock, action).await
        }
        Command::Status { json } => status(&loaded.config, clock, json).await,
        Command::Flight {
            action: FlightAction::Show { flid, limit, json },
        } => {
            let pool = match connect_current(&loaded.config, "flight show").await {
                Ok(p) => p,
                Err(code) => return code,
            };
            inspect::flight_show(
                &pool,
                &loaded.config,
                flid,
                limit,
                json,
                &mut std::io::stdout(),
            )
            .await
        }
        Command::Season { action } => {
            let pool = match connect_current(&loaded.config, "season").await {
                Ok(p) => p,
                Err(code) => return code,
            };
            crate::commands::season::run(&pool, action, &mut std::io::stdout()).await
        }
        Command::Msg {
            action: MsgAction::Show { msg_id, json },
        } => {
            let pool = match connect_current(&loaded.config, "msg show").await {
                Ok(p) => p,
                Err(code) => return code,
            };
            let mailbox = match Mailbox::new(&loaded.config.msgx.mailbox) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("msgx msg show: {e}");
                    return exit::CONFIG;
                }
            };
            let code =
                inspect::msg_show(&pool, &mailbox, msg_id, json, &mut std::io::stdout()).await;
            mailbox.close().await;
            code
        }
        Command::Holes { limit, json } => {
            let pool = match connect_current(&loaded.config, "holes").await {
                Ok(p) => p,
                Err(code) => return code,
            };
            inspect::holes(&pool, clock.now(), limit, json, &mut std::io::stdout()).await
        }
        Command::Events { action } => events(&loaded.config, clock, action).await,
        Command::Doctor { json } => {
            let report = crate::commands::doctor::diagnose(&loaded.config).await;
            crate::commands::doctor::print(&report, json, &mut std::io::stdout())
        }
        Command::DevKafka {
            brokers,
            partitions,
        } => {
            crate::commands::dev_kafka::run(
                &loaded.config.msgx.kafka,
                crate::commands::dev_kafka::DevKafkaOptions {
                    brokers,
                    partitions,
                },
            )
            .await
        }
        Command::Tail {
            topic,
            from_beginning,
            max,
            follow,
            idle,
            json,
        } => {
            let opts = crate::commands::tail::TailOptions {
                from_beginning,
                max,
                follow,
                idle: idle.std(),
            };
            crate::commands::tail::run(&loaded.config.msgx.kafka, &topic, &opts, json).await
        }
    }
}

async fn events(config: &Config, clock: SharedClock, action: EventsAction) -> i32 {
    use crate::commands::events as ev;
    use crate::delivery::dead_letters::Resolution;
    let pool = match connect_current(config, "events").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    match action {
        EventsAction::Dead { json } => ev::dead(&pool, json, &mut std::io::stdout()).await,
        EventsAction::Resend {
            ids,
            reason,
            yes,
            actor,
        } => {
            if ids.len() > 1 {
                let ask = crate::commands::confirm::Bulk {
                    what: "resend",
                    rows: ids.len(),
                    reason: reason.as_deref(),
                    yes,
                    json: false,
                };
                let on = Target::of(config, Needs::POSTGRES);
                if let Err(e) = crate::commands::confirm::bulk(ask, &on) {
                    eprintln!("msgx events resend: {e}");
                    return exit::CONFIG;
                }
            }
            let actor = ev::actor(actor.as_deref());
            ev::resolve(
                &pool,
                Resolution::Resend,
                &ids,
                &actor,
                reason.as_deref(),
                clock.now(),
            )
            .await
        }
        EventsAction::Discard { ids, reason, actor } => {
            let actor = ev::actor(actor.as_deref());
            ev::resolve(
                &pool,
                Resolution::Discard,
                &ids,
                &actor,
                Some(&reason),
                clock.now(),
            )
            .await
        }
    }
}

async fn mailbox_generate(
    config: &Config,
    clock: SharedClock,
    spec: &crate::commands::generate::Spec,
    schedules: bool,
    rate: Option<f64>,
) -> i32 {
    use crate::commands::generate;
    let mailbox = match Mailbox::new(&config.msgx.mailbox) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx mailbox generate: {e}");
            return exit::CONFIG;
        }
    };
    if let Some(rate) = rate {
        if !(rate > 0.0 && rate.is_finite()) {
            eprintln!("msgx mailbox generate: --rate must be a positive number");
            return exit::CONFIG;
        }
        let (rows, holes, failures) =
            generate::feed(&mailbox, spec, schedules, rate, &clock, |t, id| {
                println!("{t:.6} {id}")
            })
            .await;
        mailbox.close().await;
        eprintln!("{{\"rows\": {rows}, \"holes\": {holes}, \"failed_attempts\": {failures}}}");
        return exit::OK;
    }
    let result = generate::load(&mailbox, spec, schedules).await;
    mailbox.close().await;
    match result {
        Ok((rows, holes)) => {
            println!("{{\"rows\": {rows}, \"holes\": {holes}}}");
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx mailbox generate: {e}");
            exit::FAILURE
        }
    }
}

/// Expands directories to their `*.xml` files; keeps file-name order.
fn sis_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x.eq_ignore_ascii_case("xml")))
                .collect();
            files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

async fn mailbox_load(config: &Config, clock: SharedClock, paths: &[PathBuf]) -> i32 {
    let files = match sis_files(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("msgx mailbox load: {e}");
            return exit::FAILURE;
        }
    };
    let mailbox = match Mailbox::new(&config.msgx.mailbox) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx mailbox load: {e}");
            return exit::CONFIG;
        }
    };
    let tz = config.msgx.airport.tz();
    let mut loaded = 0;
    for f in &files {
        let xml = match std::fs::read_to_string(f) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("msgx mailbox load: cannot read {}: {e}", f.display());
                return exit::FAILURE;
            }
        };
        let received = clock.now().with_timezone(&tz).naive_local();
        match mailbox.insert_raw(&xml, Some(received)).await {
            Ok(id) => {
                println!("{id}\t{}", f.display());
                loaded += 1;
            }
            Err(e) => {
                eprintln!("msgx mailbox load: {}: {e}", f.display());
                mailbox.close().await;
                return exit::FAILURE;
            }
        }
    }
    mailbox.close().await;
    eprintln!("loaded {loaded} message(s) into the mailbox");
    exit::OK
}

/// Connects to msgx's PostgreSQL and refuses an unmigrated or newer schema,
/// printing why (`msgx <what>: …`); the error is the exit code.
pub(crate) async fn connect_current(config: &Config, what: &str) -> Result<sqlx::PgPool, i32> {
    let pool = pg::connect(&config.msgx.postgres).await.map_err(|e| {
        eprintln!("msgx {what}: cannot connect to PostgreSQL: {e}");
        exit::FAILURE
    })?;
    pg::ensure_schema_current(&pool).await.map_err(|e| {
        eprintln!("msgx {what}: {e}");
        exit::FAILURE
    })?;
    Ok(pool)
}

/// A spinner with the running item count, only when stderr is a terminal.
fn progress_bar(wanted: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {pos} item(s) {per_sec}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

fn config_check(loaded: &Loaded) -> i32 {
    let source = loaded
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "built-in defaults".into());
    // Build (without connecting) every client the config describes, so an
    // unusable TLS file or option is refused here too (issue 16, item 3).
    let m = &loaded.config.msgx;
    let mut unusable = Vec::new();
    if !m.postgres.url.is_empty()
        && let Err(e) = pg::connect_options(&m.postgres.url)
    {
        unusable.push(format!("msgx.postgres.url: {e}"));
    }
    if let Err(e) = crate::store::mailbox::tls::ssl_opts(&m.mailbox.tls) {
        unusable.push(format!("msgx.mailbox.tls: {e}"));
    }
    if let Err(issues) = crate::kafka::check_clients(&m.kafka) {
        unusable.extend(issues.iter().map(ToString::to_string));
    }
    if !unusable.is_empty() {
        eprintln!("msgx: config is invalid:");
        for u in &unusable {
            eprintln!("  - {u}");
        }
        return exit::CONFIG;
    }
    println!("config OK ({source})");
    for d in loaded.config.deprecations() {
        eprintln!("warning: {d}");
    }
    for unset in target::missing(&loaded.config, Needs::BOTH) {
        eprintln!("note: {unset} is not set; commands that need it refuse until it is");
    }
    exit::OK
}

async fn migrate(config: &Config) -> i32 {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx migrate: cannot connect to PostgreSQL: {e}");
            return exit::FAILURE;
        }
    };
    match pg::migrate(&pool).await {
        Ok(applied) if applied.is_empty() => {
            println!("schema is current (v{})", pg::expected_version());
            exit::OK
        }
        Ok(applied) => {
            println!(
                "applied migrations {applied:?}; schema is now v{}",
                pg::expected_version()
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx migrate: {e}");
            exit::FAILURE
        }
    }
}

fn jobs(json: bool) -> i32 {
    let manifests = match manifest::all() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx jobs: {e}");
            return exit::FAILURE;
        }
    };
    let daemon = Profile::resolve("daemon").ok();
    let rows: Vec<serde_json::Value> = manifests
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "purpose": m.purpose,
                "class": m.class,
                "lock": m.lock,
                "implemented": registry::is_implemented(&m.name),
                "bounds": m.bounds,
                "daemon_cron": daemon.as_ref().and_then(|p| p.jobs.get(&m.name)),
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::Value::Array(rows));
        return exit::OK;
    }
    println!(
        "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  PURPOSE",
        "JOB", "CLASS", "LOCK", "STATUS", "MAX-ITEMS", "BUDGET"
    );
    for m in &manifests {
        println!(
            "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  {}",
            m.name,
            format!("{:?}", m.class).to_lowercase(),
            format!("{:?}", m.lock).to_lowercase(),
            if registry::is_implemented(&m.name) {
                "ready"
            } else {
                "not-yet"
            },
            m.bounds.max_items,
            m.bounds.time_budget.to_string(),
            m.purpose
        );
    }
    exit::OK
}

async fn run_job(
    config: Arc<Config>,
    clock: SharedClock,
    job: &str,
    opts: &RunOptions,
    json: bool,
) -> i32 {
    if manifest::find(job).is_none() {
        eprintln!("msgx run: unknown job {job:?}; `msgx jobs` lists them");
        return exit::CONFIG;
    }
    let pool = match connect_current(config.as_ref(), "run").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mailbox = match Mailbox::new(&config.msgx.mailbox) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx run: {e}");
            return exit::CONFIG;
        }
    };
    let runner = Runner {
        pg: pool,
        mailbox,
        config,
        clock,
        instance: daemon::instance_name(),
        trigger: Trigger::Cli,
        shutdown: stop_rx,
        kafka: Default::default(),
        jobs: Default::default(),
    };
    match runner.run(job, opts, None).await {
        Ok(summary) => {
            if json {
                let out = Target::of(runner.config.as_ref(), Needs::BOTH).into_json(&summary);
                println!("{out}");
            } else {
                println!("{summary}");
            }
            match summary.outcome {
                Outcome::Succeeded => exit::OK,
                Outcome::Aborted => exit::LOCKED,
                _ => exit::FAILURE,
            }
        }
        Err(e @ RunError::NotImplemented(_)) => {
            eprintln!("msgx run: {e}; `msgx jobs` shows which jobs are ready");
            exit::NOT_IMPLEMENTED
        }
        Err(e @ RunError::Locked { .. }) => {
            eprintln!("msgx run: {e}");
            exit::LOCKED
        }
        Err(e @ RunError::UnknownJob(_)) => {
            eprintln!("msgx run: {e}");
            exit::CONFIG
        }
        Err(e) => {
            eprintln!("msgx run: {e}");
            exit::FAILURE
        }
    }
}

async fn status(config: &Config, clock: SharedClock, json: bool) -> i32 {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx status: cannot connect to PostgreSQL: {e}");
            return exit::FAILURE;
        }
    };
    let mailbox = Mailbox::new(&config.msgx.mailbox).ok();
    match crate::status::collect(&pool, mailbox.as_ref(), &clock, config).await {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            exit::OK
        }
        Ok(s) => {
            print!("{}", crate::status::render(&s));
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx status: {e}");
            exit::FAILURE
        }
    }
}

/// `msgx contract export [--dir DIR] [--check]` (src/contract.rs).
fn contract_export(dir: &std::path::Path, check: bool) -> i32 {
    if check {
        return match crate::contract::check(dir) {
            Ok(problems) if problems.is_empty() => {
                println!("{}: the schemas match the code", dir.display());
                exit::OK
            }
            Ok(problems) => {
                for p in problems {
                    eprintln!("msgx contract: {p}");
                }
                exit::FAILURE
            }
            Err(e) => {
                eprintln!("msgx contract: {e}");
                exit::FAILURE
            }
        };
    }
    match crate::contract::export(dir) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx contract: {e}");
            exit::FAILURE
        }
    }
}
