//! The `msgx` command line: the clap types and the
//! dispatch only. The handlers live in [`crate::commands`], one file per
//! command family, with the exit codes ([`crate::exit`]).

use crate::clock::{SharedClock, SystemClock};
use crate::commands::target::{self, Needs, Target};
use crate::commands::{
    backfill, config, console, contract, decode, dev, dev_kafka, doctor, events, generate, inspect,
    jobs, mailbox, manual, migrate, request, season, skip, status, tail, version,
};
use crate::config::{Config, ConfigError};
use crate::domain::run_compare::Rules;
use crate::domain::run_compare::purge::{Holes, MsgIds, PurgeFacts};
use crate::exit::Exit;
use crate::scheduler::daemon::{self, DaemonOptions};
use crate::telemetry::{self, LogTarget};
use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

/// msgx: SIS mailbox → flight state (PostgreSQL) → Kafka, as scheduled jobs.
#[derive(Debug, Parser)]
#[command(
    name = "msgx",
    version = crate::build_info::short_version(),
    long_version = crate::build_info::long_version(),
    about,
    long_about = None,
    after_help = EXIT_HELP
)]
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
    ///
    /// With --check: apply nothing; say whether this binary can run on the
    /// database (exit 0 when the schema is at its newest migration, 1 when it
    /// is older, unmigrated or migrated by a newer msgx). The package's
    /// upgrade step restarts a running daemon only when this passes.
    Migrate {
        /// Read the schema's version only: change nothing.
        #[arg(long)]
        check: bool,
        /// Machine-readable output (with --check).
        #[arg(long, requires = "check")]
        json: bool,
    },
    /// Check or show the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// List the jobs with their class, lock, bounds, schedule and pause;
    /// `pause` / `resume` one (docs/operations.md "Pausing a job").
    Jobs {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<jobs::JobsAction>,
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
        /// Run even when the job is paused (once; the pause stays).
        #[arg(long)]
        force: bool,
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
    /// The checks of the resilience harnesses (development and tests only;
    /// scripts/chaos.sh, soak.sh, real-broker.sh; docs/RESILIENCE.md).
    #[command(hide = true)]
    Dev {
        #[command(subcommand)]
        action: DevAction,
    },
    /// Print the records of a Kafka topic: key, headers, value (`null` for a tombstone).
    Tail {
        /// Topic name (msgx.kafka.topic-msg / topic-schd / topic-season / topic-audit).
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
        action: backfill::BackfillAction,
    },
    /// Move FAILED/DEAD messages back to PENDING (whitelisted classes; recorded).
    Replay(backfill::ReplayArgs),
    /// Set PENDING/FAILED backlog messages SKIPPED with a reason (recorded;
    /// they are then backfilled, never processed; §5.4).
    Skip(skip::SkipArgs),
    /// Upstream requests through COUTMSGS: schedule (RQFD), ref (RQRD), list (docs/requests.md).
    Request {
        #[command(subcommand)]
        action: request::RequestAction,
    },
    /// Inspect one flight: its current state and the messages that changed it.
    Flight {
        #[command(subcommand)]
        action: FlightAction,
    },
    /// The stored seasonal schedules (SCHS): list, show (docs/season.md).
    Season {
        #[command(subcommand)]
        action: season::SeasonAction,
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
    /// The operator console on `msgx.console.listen`, on its own (the daemon
    /// serves it too when the key is set; docs/console.md).
    Console {
        #[command(subcommand)]
        action: Option<console::ConsoleAction>,
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
    /// Version, git commit, build date, target, features, rustc and librdkafka
    /// (as `msgx --version`, or one JSON object).
    Version {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the man pages (msgx.1 and one a subcommand) into a directory.
    #[command(hide = true)]
    ManPages {
        /// Where to write them (created).
        dir: PathBuf,
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
    /// XML from the mailbox (or "purged"), decoded. Bounded unless --full:
    /// the first 256 KiB of the raw XML and the first 200 records decoded.
    Show {
        /// The mailbox ID (CMINMSGS_ID = MSG_ID).
        msg_id: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// The whole raw XML and every record decoded.
        #[arg(long)]
        full: bool,
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
    /// Re-send the current `msg` + `schd` records of flights as REQUEST
    /// records (a new consumer's bootstrap), in per-flight order, through the
    /// outbox; recorded in operator_action. More than one flight is a bulk
    /// action: --yes or a typed confirmation.
    Republish(crate::commands::events::RepublishArgs),
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
pub enum DevAction {
    /// Exit 0 when the run is drained: W at the mailbox's last ID, one
    /// PROC_STATE row per mailbox row, nothing PENDING/FAILED, no outbox
    /// event PENDING, every mark confirmed or abandoned. Else exit 1 and
    /// one line saying what is left.
    Drained,
    /// Write the run's outcome as JSON: PROC_STATE outcomes, the flight
    /// tables, the outbox by status, released holes, the msg topic and the
    /// last schd record per FLID.
    Snapshot {
        /// Where to write it.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Compare the snapshots of an undisturbed and a disturbed run of the
    /// same input: one `DIFF` line per difference, then `compare: {…}`;
    /// exit 1 on any difference.
    CompareRuns {
        /// The undisturbed run's snapshot.
        #[arg(value_name = "CLEAN.json")]
        clean: PathBuf,
        /// The disturbed run's snapshot.
        #[arg(value_name = "CHAOS.json")]
        chaos: PathBuf,
        /// A FLID's version may go back to one already on the msg topic
        /// with the same content (a PostgreSQL rollback re-sends what the
        /// old primary delivered).
        #[arg(long)]
        after_rollback: bool,
    },
    /// Sort the PROC_STATE differences of a failover run with a purging
    /// mailbox owner from the undisturbed run: named DEAD(MALFORMED,
    /// raw-missing), vanished inside a released hole, mark confirmation lost
    /// (abandoned MISSING_ROW), other. `DIFF` lines, then `purge: {…}`;
    /// exit 1 when one vanished, on any other difference, a row PENDING or
    /// FAILED or an outbox event not SENT.
    PurgeReport {
        /// The undisturbed run's snapshot.
        #[arg(value_name = "CLEAN.json")]
        clean: PathBuf,
        /// The failover run's snapshot.
        #[arg(value_name = "RUN.json")]
        run: PathBuf,
        /// The run's MSG_IDs DEAD(MALFORMED) with raw-missing, comma-separated.
        #[arg(long, value_name = "IDS", default_value = "")]
        raw_missing: MsgIds,
        /// The run's released holes as FIRST-LAST, comma-separated.
        #[arg(long, value_name = "RANGES", default_value = "")]
        holes: Holes,
    },
    /// Exit 0 when every mailbox row up to --upto is processed, its events
    /// SENT and its mark written (`caught up to ID N`); 1 while not (what is
    /// awaited, one line); 3 on a DEAD message not caused by its content, a
    /// DEAD outbox event or an abandoned mark (`FATAL …`).
    CaughtUp {
        /// The last mailbox ID that must be done.
        #[arg(long, value_name = "ID")]
        upto: i64,
    },
    /// The soak's invariants after the run: drained, nothing lost, every
    /// mark written, nothing fatal, every msg outbox event on the topic with
    /// its payload and per FLID versions never going back, W never moving
    /// backwards. `FAIL …` lines, then `verify: {…}`; exit 1 on any failure.
    Verify {
        /// The W samples taken during the run (`TIME W` per line).
        #[arg(long, value_name = "FILE")]
        w_log: Option<PathBuf>,
    },
    /// After a drain against an independent broker, the topics hold exactly
    /// the outbox: every msg event with its payload, per FLID one partition
    /// and strictly increasing versions, per flight the latest schd record.
    /// `FAIL …` lines, then `broker-verify: {…}`; exit 1 on any failure.
    BrokerVerify,
}

#[derive(Debug, Subcommand)]
pub enum ContractAction {
    /// Write the JSON Schemas of the Kafka records and the ACRIS API's OpenAPI
    /// document, generated from the code, into DIR; with --check, write
    /// nothing and exit 1 when DIR differs from the code.
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
    /// Print the key reference generated from the code (every key, its type,
    /// default and meaning) as the markdown table of docs/configuration.md.
    Docs {
        /// Replace the generated table of FILE (between its marker comments).
        #[arg(long, value_name = "FILE", conflicts_with = "check")]
        write: Option<PathBuf>,
        /// Write nothing; exit 1 when the generated table of FILE differs
        /// from the code (CI: the document cannot drift).
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
    },
}

/// The command's name, the connections it needs and whether it writes: a
/// writing command names its target before it acts.
fn connections(command: &Command) -> (&'static str, Needs, bool) {
    use backfill::BackfillAction as B;
    use request::RequestAction as R;
    match command {
        Command::Migrate { check, .. } => ("migrate", Needs::POSTGRES, !check),
        Command::Config { .. } => ("config", Needs::NONE, false),
        Command::Jobs { action: None, .. } => ("jobs", Needs::NONE, false),
        Command::Jobs {
            action: Some(_), ..
        } => ("jobs", Needs::POSTGRES, true),
        Command::Run { dry_run, .. } => ("run", Needs::BOTH, !dry_run),
        Command::Daemon { .. } => ("daemon", Needs::BOTH, true),
        Command::Decode { .. } => ("decode", Needs::NONE, false),
        Command::Contract { .. } => ("contract", Needs::NONE, false),
        Command::Mailbox { .. } => ("mailbox", Needs::MAILBOX, true),
        Command::Status { .. } => ("status", Needs::BOTH, false),
        Command::Events { action } => (
            "events",
            Needs::POSTGRES,
            match action {
                EventsAction::Dead { .. } => false,
                EventsAction::Republish(a) => !a.bulk.dry_run,
                _ => true,
            },
        ),
        Command::DevKafka { .. } => ("dev-kafka", Needs::NONE, false),
        Command::Dev { action } => match action {
            DevAction::Drained => ("dev", Needs::BOTH, false),
            DevAction::Snapshot { .. } => ("dev", Needs::POSTGRES, false),
            DevAction::CompareRuns { .. } | DevAction::PurgeReport { .. } => {
                ("dev", Needs::NONE, false)
            }
            DevAction::CaughtUp { .. } | DevAction::Verify { .. } | DevAction::BrokerVerify => {
                ("dev", Needs::BOTH, false)
            }
        },
        Command::Tail { .. } => ("tail", Needs::NONE, false),
        Command::Backfill { action } => (
            "backfill",
            Needs::POSTGRES,
            !matches!(action, B::Abandoned { .. }),
        ),
        Command::Replay(args) => ("replay", Needs::POSTGRES, !args.dry_run),
        Command::Skip(args) => ("skip", Needs::POSTGRES, !args.bulk.dry_run),
        Command::Request { action } => ("request", Needs::BOTH, !matches!(action, R::List { .. })),
        Command::Flight { .. } => ("flight", Needs::POSTGRES, false),
        Command::Season { .. } => ("season", Needs::POSTGRES, false),
        Command::Msg { .. } => ("msg", Needs::BOTH, false),
        Command::Holes { .. } => ("holes", Needs::POSTGRES, false),
        Command::Console { action: None } => ("console", Needs::BOTH, false),
        Command::Console {
            action: Some(console::ConsoleAction::Revoke { .. }),
        } => ("console", Needs::POSTGRES, false),
        Command::Console { action: Some(_) } => ("console", Needs::NONE, false),
        // The doctor reports a missing URL as its first failed check.
        Command::Doctor { .. } => ("doctor", Needs::NONE, false),
        Command::Version { .. } => ("version", Needs::NONE, false),
        Command::Completions { .. } => ("completions", Needs::NONE, false),
        Command::ManPages { .. } => ("man-pages", Needs::NONE, false),
    }
}

/// Runs the parsed command; returns the exit code.
pub async fn run(cli: Cli) -> Exit {
    // What this binary is needs no configuration.
    if let Command::Version { json } = &cli.command {
        return version::run(*json, &mut std::io::stdout().lock());
    }
    // So are the completions and the man pages: they describe this CLI.
    if let Command::Completions { shell } = &cli.command {
        return manual::completions(Cli::command(), *shell, &mut std::io::stdout().lock());
    }
    if let Command::ManPages { dir } = &cli.command {
        return manual::man_pages(Cli::command(), dir);
    }
    // Decoding is pure: it needs no configuration, so it works anywhere.
    if let Command::Decode { inputs, json } = &cli.command {
        return decode::run(inputs, *json, &mut std::io::stdout().lock());
    }
    // So is a password hash for the console's users file.
    if let Command::Console {
        action: Some(console::ConsoleAction::HashPassword),
    } = &cli.command
    {
        return console::hash_password();
    }
    // So is the contract: it is generated from the code.
    if let Command::Contract {
        action: ContractAction::Export { dir, check },
    } = &cli.command
    {
        return contract::export(dir, *check);
    }
    // So is comparing two snapshots.
    if let Command::Dev { action } = &cli.command {
        match action {
            DevAction::CompareRuns {
                clean,
                chaos,
                after_rollback,
            } => {
                let rules = Rules {
                    resends_after_rollback: *after_rollback,
                };
                return dev::compare_runs(clean, chaos, rules, &mut std::io::stdout().lock());
            }
            DevAction::PurgeReport {
                clean,
                run,
                raw_missing,
                holes,
            } => {
                let facts = PurgeFacts {
                    raw_missing: raw_missing.clone(),
                    holes: holes.clone(),
                };
                return dev::purge_report(clean, run, &facts, &mut std::io::stdout().lock());
            }
            _ => {}
        }
    }
    // So is the key reference: it is generated from the config types.
    if let Command::Config {
        action: ConfigAction::Docs { write, check },
    } = &cli.command
    {
        return config::docs(write.as_deref(), check.as_deref());
    }
    let loaded =
        match Config::load_checked(cli.config.as_deref(), crate::jobs::profile::config_issues) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("msgx: {e}");
                return match e {
                    ConfigError::Read { .. }
                    | ConfigError::Parse { .. }
                    | ConfigError::Invalid(_) => Exit::Config,
                };
            }
        };
    let target = if matches!(cli.command, Command::Daemon { .. }) {
        LogTarget::Daemon
    } else {
        LogTarget::Command
    };
    let m = &loaded.config.msgx;
    let _log_guard = telemetry::init(&m.log, &m.telemetry, target);
    let (name, needs, writes) = connections(&cli.command);
    let absent = target::missing(&loaded.config, needs);
    if !absent.is_empty() {
        eprintln!(
            "msgx {name}: not configured; set {} (there is no built-in default, so that no \
             command acts on a database by accident)",
            absent.join(" and ")
        );
        return Exit::Config;
    }
    if writes {
        eprintln!(
            "msgx {name}: acting on {}",
            Target::of(&loaded.config, needs).line()
        );
    }
    let clock: SharedClock = Arc::new(SystemClock);
    if target == LogTarget::Daemon {
        return dispatch(cli.command, loaded, clock).await;
    }
    // A one-shot command is one request: the actions it records say `cli`
    // and carry one trace (telemetry::request; docs/events.md "KAFKA:audit").
    let request = crate::telemetry::request::RequestContext {
        role: "cli".into(),
        trace: crate::telemetry::trace_context::TraceParent::random(),
    };
    crate::telemetry::request::scope(request, dispatch(cli.command, loaded, clock)).await
}

/// Runs a configured command.
async fn dispatch(command: Command, loaded: crate::config::Loaded, clock: SharedClock) -> Exit {
    match command {
        Command::Config {
            action: ConfigAction::Check,
        } => config::check(&loaded),
        Command::Config {
            action: ConfigAction::Show,
        } => config::show(&loaded),
        Command::Decode { .. }
        | Command::Contract { .. }
        | Command::Config {
            action: ConfigAction::Docs { .. },
        } => Exit::Ok, // handled above: no config
        Command::Migrate { check: false, .. } => migrate::run(&loaded.config).await,
        Command::Migrate { check: true, json } => migrate::check(&loaded.config, json).await,
        Command::Jobs { json, action: None } => jobs::list(&loaded.config, json).await,
        Command::Jobs {
            action: Some(action),
            ..
        } => jobs::change(&loaded.config, clock, action).await,
        Command::Run {
            job,
            max_items,
            until_empty,
            dry_run,
            force,
            json,
        } => {
            let how = jobs::RunFlags {
                max_items,
                until_empty,
                dry_run,
                force,
                json,
            };
            jobs::run(loaded.config, clock, &job, how).await
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
        } => mailbox::load(&loaded.config, clock, &paths).await,
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
            let spec = generate::Spec {
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
            mailbox::generate(&loaded.config, clock, &spec, !no_schedules, rate).await
        }
        Command::Backfill { action } => backfill::run(&loaded.config, clock, action).await,
        Command::Replay(args) => backfill::replay(&loaded.config, clock, args).await,
        Command::Skip(args) => skip::run(&loaded.config, clock, args).await,
        Command::Request { action } => request::run(&loaded.config, clock, action).await,
        Command::Status { json } => status::run(&loaded.config, clock, json).await,
        Command::Flight {
            action: FlightAction::Show { flid, limit, json },
        } => inspect::flight_show_command(&loaded.config, flid, limit, json).await,
        Command::Season { action } => season::command(&loaded.config, action).await,
        Command::Msg {
            action: MsgAction::Show { msg_id, json, full },
        } => inspect::msg_show_command(&loaded.config, msg_id, json, full).await,
        Command::Console { action: None } => console::serve(loaded.config, clock).await,
        Command::Console {
            action:
                Some(console::ConsoleAction::Revoke {
                    user,
                    reason,
                    actor,
                    json,
                }),
        } => {
            console::revoke(
                &loaded.config,
                clock,
                &user,
                reason.as_deref(),
                actor.as_deref(),
                json,
            )
            .await
        }
        Command::Console { action: Some(_) } => Exit::Ok, // handled above: no config
        // Handled above: no config.
        Command::Version { .. } | Command::Completions { .. } | Command::ManPages { .. } => {
            Exit::Ok
        }
        Command::Holes { limit, json } => {
            inspect::holes_command(&loaded.config, clock, limit, json).await
        }
        Command::Events {
            action: EventsAction::Dead { json },
        } => events::dead_command(&loaded.config, json).await,
        Command::Events {
            action:
                EventsAction::Resend {
                    ids,
                    reason,
                    yes,
                    actor,
                },
        } => {
            let (reason, actor) = (reason.as_deref(), actor.as_deref());
            events::resend_command(&loaded.config, clock, &ids, reason, yes, actor).await
        }
        Command::Events {
            action: EventsAction::Discard { ids, reason, actor },
        } => events::discard_command(&loaded.config, clock, &ids, &reason, actor.as_deref()).await,
        Command::Events {
            action: EventsAction::Republish(args),
        } => events::republish_command(&loaded.config, clock, args).await,
        Command::Doctor { json } => {
            let report = doctor::diagnose(&loaded.config).await;
            doctor::print(&report, json, &mut std::io::stdout())
        }
        Command::DevKafka {
            brokers,
            partitions,
        } => {
            dev_kafka::run(
                &loaded.config.msgx.kafka,
                dev_kafka::DevKafkaOptions {
                    brokers,
                    partitions,
                },
            )
            .await
        }
        Command::Dev {
            action: DevAction::Drained,
        } => dev::drained(&loaded.config).await,
        Command::Dev {
            action: DevAction::Snapshot { out },
        } => dev::snapshot(&loaded.config, &out).await,
        Command::Dev {
            action: DevAction::CompareRuns { .. } | DevAction::PurgeReport { .. },
        } => Exit::Ok, // handled above: no config
        Command::Dev {
            action: DevAction::CaughtUp { upto },
        } => dev::caught_up(&loaded.config, upto).await,
        Command::Dev {
            action: DevAction::Verify { w_log },
        } => dev::verify(&loaded.config, w_log.as_deref()).await,
        Command::Dev {
            action: DevAction::BrokerVerify,
        } => dev::broker_verify(&loaded.config).await,
        Command::Tail {
            topic,
            from_beginning,
            max,
            follow,
            idle,
            json,
        } => {
            let opts = tail::TailOptions {
                from_beginning,
                max,
                follow,
                idle: idle.std(),
            };
            tail::run(&loaded.config.msgx.kafka, &topic, &opts, json).await
        }
    }
}
