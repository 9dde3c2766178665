//! `msgx events dead|resend|discard`: the operator's view of the outbox DLQ
//! (design §8.3). Exit 0 when every requested ID was a DEAD
//! row and was resolved, 1 otherwise (the others are named).

use super::confirm;
use super::target::{Needs, Target};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::delivery::dead_letters::{self, Resolution};
use crate::exit::Exit;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::io::Write;

/// Rows `events dead` shows at most.
pub const DEAD_LIST_LIMIT: i64 = 1000;

/// `msgx events dead [--json]`.
pub async fn dead(pool: &PgPool, json: bool, out: &mut impl Write) -> Exit {
    let rows = match dead_letters::list(pool, DEAD_LIST_LIMIT).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("msgx events dead: {e}");
            return Exit::Failure;
        }
    };
    let written = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into())
        )
    } else if rows.is_empty() {
        writeln!(out, "no DEAD events")
    } else {
        let mut r = writeln!(
            out,
            "{:>10} {:<11} {:>10} {:<9} {:>7} {:>8} {:<16}  LAST-ERROR",
            "EVENT-ID", "TARGET", "FLID", "TYPE", "VERSION", "ATTEMPTS", "CLASS"
        );
        for e in &rows {
            r = r.and_then(|_| {
                writeln!(
                    out,
                    "{:>10} {:<11} {:>10} {:<9} {:>7} {:>8} {:<16}  {}",
                    e.event_id,
                    e.target,
                    e.partition_key,
                    e.event_type,
                    e.state_version,
                    e.attempts,
                    e.error_class.as_deref().unwrap_or("-"),
                    e.last_error.as_deref().unwrap_or("")
                )
            });
        }
        r
    };
    match written {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("msgx events dead: {e}");
            Exit::Failure
        }
    }
}

/// `msgx events resend|discard <id>...`.
pub async fn resolve(
    pool: &PgPool,
    what: Resolution,
    ids: &[i64],
    actor: &str,
    reason: Option<&str>,
    at: DateTime<Utc>,
) -> Exit {
    let verb = match what {
        Resolution::Resend => "resend",
        Resolution::Discard => "discard",
    };
    match dead_letters::resolve(pool, what, ids, actor, reason, at).await {
        Ok(results) => {
            let mut code = Exit::Ok;
            for r in results {
                if r.applied {
                    println!(
                        "{}: {verb} done (operator_action {})",
                        r.event_id,
                        r.action_id.unwrap_or_default()
                    );
                } else {
                    eprintln!("{}: not a DEAD event; nothing done", r.event_id);
                    code = Exit::Failure;
                }
            }
            code
        }
        Err(e) => {
            eprintln!("msgx events {verb}: {e}");
            Exit::Failure
        }
    }
}

/// Who is acting: `--actor`, else `$USER`, else `unknown`.
pub fn actor(explicit: Option<&str>) -> String {
    explicit
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

/// `msgx events dead`, on the configured PostgreSQL.
pub async fn dead_command(config: &Config, json: bool) -> Exit {
    let pool = match super::connect_current(config, "events").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    dead(&pool, json, &mut std::io::stdout()).await
}

/// `msgx events resend <id>...`: more than one ID is a bulk action
/// (`--reason`, and `--yes` or a typed confirmation).
pub async fn resend_command(
    config: &Config,
    clock: SharedClock,
    ids: &[i64],
    reason: Option<&str>,
    yes: bool,
    actor_name: Option<&str>,
) -> Exit {
    let pool = match super::connect_current(config, "events").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    if ids.len() > 1 {
        let ask = confirm::Bulk {
            what: "resend",
            rows: ids.len(),
            reason,
            yes,
            json: false,
        };
        let on = Target::of(config, Needs::POSTGRES);
        if let Err(e) = confirm::bulk(ask, &on) {
            eprintln!("msgx events resend: {e}");
            return Exit::Config;
        }
    }
    let actor = actor(actor_name);
    resolve(&pool, Resolution::Resend, ids, &actor, reason, clock.now()).await
}

/// `msgx events discard <id>... --reason R`.
pub async fn discard_command(
    config: &Config,
    clock: SharedClock,
    ids: &[i64],
    reason: &str,
    actor_name: Option<&str>,
) -> Exit {
    let pool = match super::connect_current(config, "events").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let actor = actor(actor_name);
    resolve(
        &pool,
        Resolution::Discard,
        ids,
        &actor,
        Some(reason),
        clock.now(),
    )
    .await
}

/// `msgx events republish …` (issue 36 item 4).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["day", "flid", "all_active"])))]
pub struct RepublishArgs {
    /// The ACTIVE flights of this operation day (YYYY-MM-DD).
    #[arg(long, value_name = "DAY")]
    pub day: Option<chrono::NaiveDate>,
    /// These flights (repeatable; a DELETED one re-sends its tombstone).
    #[arg(long, value_name = "FLID", num_args = 1..)]
    pub flid: Vec<i64>,
    /// Every ACTIVE flight.
    #[arg(long)]
    pub all_active: bool,
    /// At most this many flights; more refuses the whole request.
    #[arg(long, value_name = "N", default_value_t = REPUBLISH_MAX_DEFAULT)]
    pub max: usize,
    /// --reason, --yes, --dry-run, --actor, --json.
    #[command(flatten)]
    pub bulk: confirm::BulkArgs,
}

/// `--max` unless given: a busy airport's day is about 2,000 flights.
pub const REPUBLISH_MAX_DEFAULT: usize = 10_000;

/// `msgx events republish`: selects, confirms, re-sends.
pub async fn republish_command(config: &Config, clock: SharedClock, args: RepublishArgs) -> Exit {
    use crate::store::pg::flight::FlightStore;
    use crate::store::pg::republish::{self, Request, Selection};
    let selection = match (args.day, args.flid.is_empty(), args.all_active) {
        (Some(d), _, _) => Selection::Day(d),
        (None, false, _) => Selection::Flids(args.flid.clone()),
        _ => Selection::AllActive,
    };
    if args.bulk.reason.trim().is_empty() {
        eprintln!("msgx events republish: --reason must say why (it is recorded)");
        return Exit::Config;
    }
    let pool = match super::connect_current(config, "events").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let store = FlightStore::new(&crate::jobs::domain_config(config));
    let actor = actor(args.bulk.actor.as_deref());
    let request = |dry_run: bool| Request {
        selection: &selection,
        limit: args.max,
        actor: &actor,
        reason: &args.bulk.reason,
        at: clock.now(),
        dry_run,
    };
    let plan = match republish::republish(&pool, &store, &request(true)).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx events republish: {e}; nothing re-sent");
            return Exit::Failure;
        }
    };
    let on = Target::of(config, Needs::POSTGRES);
    let done = if args.bulk.dry_run || plan.flids.is_empty() {
        plan
    } else {
        if plan.flids.len() > 1 {
            let ask = confirm::Bulk {
                what: "re-send the records of",
                rows: plan.flids.len(),
                reason: Some(&args.bulk.reason),
                yes: args.bulk.yes,
                json: args.bulk.json,
            };
            if let Err(e) = confirm::bulk(ask, &on) {
                eprintln!("msgx events republish: {e}");
                return Exit::Config;
            }
        }
        match republish::republish(&pool, &store, &request(false)).await {
            Ok(d) => d,
            Err(e) => {
                eprintln!("msgx events republish: {e}; nothing re-sent");
                return Exit::Failure;
            }
        }
    };
    if args.bulk.json {
        println!("{}", on.into_json(&done));
    } else if args.bulk.dry_run {
        println!(
            "would re-send {} flight(s): {:?}",
            done.flids.len(),
            done.flids
        );
    } else {
        println!(
            "re-sent {} flight(s) as REQUEST records (operator_action {})",
            done.flids.len(),
            done.action_id.map_or("-".into(), |i| i.to_string())
        );
    }
    Exit::Ok
}
