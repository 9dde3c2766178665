//! `msgx skip ID… --reason R` and `msgx skip --range A-B --reason R`
//! (design §5.4, C-27; docs/operations.md §4.5): PENDING/FAILED backlog rows
//! to SKIPPED, recorded as `SKIP` in BACKFILL_ACTION. More than one ID, or a
//! range, is a bulk action: `--yes` or a typed confirmation
//! ([`confirm`](super::confirm)), as for `replay --error-class`.
//!
//! Exit codes: 0 done (rows in other states are reported and left alone),
//! 1 runtime failure, 2 refused or a usage error (empty reason, not
//! confirmed, or none of the given IDs can be skipped; nothing changed).

use crate::backfill::id_ranges;
use crate::backfill::skip::{
    IdRange, SKIP_WARNING, Selection, SkipOutcome, SkipRequest, SkipService,
};
use crate::clock::SharedClock;
use crate::commands::confirm;
use crate::commands::target::{Needs, Target};
use crate::config::Config;
use crate::exit::Exit;
use clap::Args;

/// `msgx skip …`.
#[derive(Debug, Args)]
pub struct SkipArgs {
    /// MSG_IDs to skip.
    #[arg(
        value_name = "MSG_ID",
        required_unless_present = "range",
        conflicts_with = "range"
    )]
    pub ids: Vec<i64>,
    /// Every PENDING/FAILED message with A ≤ MSG_ID ≤ B.
    #[arg(long, value_name = "A-B")]
    pub range: Option<IdRange>,
    /// --reason (also recorded on each row), --yes, --dry-run, --actor, --json.
    #[command(flatten)]
    pub bulk: confirm::BulkArgs,
}

/// Runs `msgx skip`.
pub async fn run(config: &Config, clock: SharedClock, args: SkipArgs) -> Exit {
    let selection = match args.range {
        Some(r) => Selection::Range(r),
        None => Selection::Ids(args.ids.clone()),
    };
    let pool = match crate::commands::connect_current(config, "skip").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let service = SkipService {
        pool: &pool,
        now: clock.now(),
    };
    let request = SkipRequest {
        selection,
        reason: args.bulk.reason.clone(),
        actor: crate::backfill::actor(args.bulk.actor.as_deref()),
        dry_run: args.bulk.dry_run,
    };
    let on = Target::of(config, Needs::POSTGRES);
    eprintln!("{SKIP_WARNING}");
    let bulk = match &request.selection {
        Selection::Range(_) => true,
        Selection::Ids(ids) => ids.len() > 1,
    };
    if bulk && !request.dry_run {
        // Count first (a dry run changes nothing), then ask.
        let plan = SkipRequest {
            dry_run: true,
            ..request.clone()
        };
        let rows = match service.skip(&plan).await {
            Ok(o) => o.skipped.len(),
            Err(e) => return failed(e),
        };
        let ask = confirm::Bulk {
            what: "skip",
            rows,
            reason: Some(&request.reason),
            yes: args.bulk.yes,
            json: args.bulk.json,
        };
        if let Err(e) = confirm::bulk(ask, &on) {
            eprintln!("msgx skip: {e}");
            return Exit::Config;
        }
    }
    match service.skip(&request).await {
        Ok(o) => {
            if args.bulk.json {
                println!("{}", on.into_json(&o));
            } else {
                print!("{}", render(&o));
            }
            let by_ids = matches!(request.selection, Selection::Ids(_));
            if by_ids && o.skipped.is_empty() {
                eprintln!("msgx skip: refused; none of the given messages is PENDING or FAILED");
                Exit::Config
            } else {
                Exit::Ok
            }
        }
        Err(e) => failed(e),
    }
}

fn failed(e: crate::backfill::skip::SkipError) -> Exit {
    eprintln!("msgx skip: {e}");
    match e {
        crate::backfill::skip::SkipError::NoReason => Exit::Config,
        _ => Exit::Failure,
    }
}

/// The text report.
fn render(o: &SkipOutcome) -> String {
    let mut out = String::new();
    let ids: Vec<i64> = o.skipped.iter().map(|r| r.msg_id).collect();
    if ids.is_empty() {
        out.push_str("nothing to skip\n");
    } else {
        let verb = if o.dry_run { "would skip" } else { "skipped" };
        out.push_str(&format!(
            "{verb} {} message(s) to SKIPPED: {}\n",
            ids.len(),
            id_ranges(&ids)
        ));
        if let Some(id) = o.action_id {
            out.push_str(&format!("recorded as action #{id}\n"));
        }
    }
    if !o.left_alone.is_empty() {
        let rows: Vec<String> = o
            .left_alone
            .iter()
            .map(|r| format!("{} ({})", r.msg_id, r.state))
            .collect();
        out.push_str(&format!(
            "left alone (not PENDING or FAILED): {}\n",
            rows.join(", ")
        ));
    }
    if !o.left_alone_by_state.is_empty() {
        let counts: Vec<String> = o
            .left_alone_by_state
            .iter()
            .map(|(state, n)| format!("{n} {state}"))
            .collect();
        out.push_str(&format!(
            "left alone (not PENDING or FAILED): {}\n",
            counts.join(", ")
        ));
    }
    if !o.not_found.is_empty() {
        out.push_str(&format!(
            "not in PROC_STATE (not yet enqueued, or never a message): {}\n",
            id_ranges(&o.not_found)
        ));
    }
    if o.not_found_in_range > 0 {
        out.push_str(&format!(
            "{} ID(s) of the range are not in PROC_STATE (not yet enqueued, or holes); they are \
             processed normally if they are enqueued later\n",
            o.not_found_in_range
        ));
    }
    out
}
