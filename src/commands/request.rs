//! `msgx request schedule|ref|list` (design §7.2; docs/requests.md):
//! re-request the day's schedule (RQFD) or a reference table (RQRD) from the
//! AODB through COUTMSGS, and show the tracked requests.
//!
//! Exit codes: 0 done · 1 runtime failure · 2 refused or invalid usage
//! (shadow mode, unknown type, bad dates; nothing was written).

use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use crate::requests::track::{RequestError, RequestKind, SentRequest, Tracker, days_between};
use crate::store::pg::req_track::{self, ReqRow};
use chrono::NaiveDate;
use clap::Subcommand;
use std::io::Write;

/// Rows `request list` shows at most.
pub const LIST_LIMIT: i64 = 1000;

/// Operation days one `request schedule --from/--to` may cover.
pub const MAX_DAYS: usize = 31;

/// `msgx request …`.
#[derive(Debug, Subcommand)]
pub enum RequestAction {
    /// Request the daily schedule (RQFD) for one operation day, or one RQFD
    /// per day of --from..--to.
    Schedule {
        /// Operation day, YYYY-MM-DD.
        #[arg(long, value_name = "YYYY-MM-DD", conflicts_with_all = ["from", "to"], required_unless_present = "from")]
        day: Option<NaiveDate>,
        /// First operation day, YYYY-MM-DD (with --to).
        #[arg(long, value_name = "YYYY-MM-DD", requires = "to")]
        from: Option<NaiveDate>,
        /// Last operation day, YYYY-MM-DD, inclusive (with --from).
        #[arg(long, value_name = "YYYY-MM-DD", requires = "from")]
        to: Option<NaiveDate>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Request a reference-data snapshot (RQRD) of one type, e.g. GLST.
    Ref {
        /// One of the 23 reference types (sis-format §4).
        #[arg(value_name = "TYPE")]
        rtype: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// List tracked requests, newest first.
    List {
        /// Only PENDING and SENT requests.
        #[arg(long)]
        open: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `msgx request` action.
pub async fn run(config: &Config, clock: SharedClock, action: RequestAction) -> Exit {
    let pool = match crate::commands::connect_current(config, "request").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut out = std::io::stdout();
    let (kinds, json) = match action {
        RequestAction::List { open, json } => {
            return match req_track::list(&pool, open, LIST_LIMIT).await {
                Ok(rows) => print_list(&rows, json, &mut out),
                Err(e) => {
                    eprintln!("msgx request list: {e}");
                    Exit::Failure
                }
            };
        }
        RequestAction::Schedule {
            day,
            from,
            to,
            json,
        } => {
            let days = match (day, from, to) {
                (Some(d), _, _) => vec![d],
                (None, Some(f), Some(t)) => days_between(f, t),
                _ => Vec::new(),
            };
            if days.is_empty() || days.len() > MAX_DAYS {
                eprintln!(
                    "msgx request schedule: give --day, or --from ≤ --to spanning at most {MAX_DAYS} days; nothing was requested"
                );
                return Exit::Config;
            }
            (
                days.into_iter()
                    .map(|day| RequestKind::Schedule { day })
                    .collect::<Vec<_>>(),
                json,
            )
        }
        RequestAction::Ref { rtype, json } => (
            vec![RequestKind::Reference {
                rtype: rtype.trim().to_ascii_uppercase(),
            }],
            json,
        ),
    };
    if config.msgx.mailbox.shadow {
        eprintln!("msgx request: {}", RequestError::Shadow);
        return Exit::Config;
    }
    let mailbox = match super::open_mailbox(config, "request") {
        Ok(m) => m,
        Err(code) => return code,
    };
    let tracker = Tracker {
        pg: &pool,
        mailbox: &mailbox,
        config,
    };
    let mut code = Exit::Ok;
    for kind in &kinds {
        match tracker.request(kind, clock.as_ref()).await {
            Ok(sent) => {
                let on = crate::commands::target::Target::of(
                    config,
                    crate::commands::target::Needs::BOTH,
                );
                print_sent(&sent, json.then_some(&on), &mut out)
            }
            Err(e) => {
                eprintln!("msgx request: {}: {e}", kind.req_type());
                code = match e {
                    RequestError::Shadow | RequestError::UnknownType(_) => Exit::Config,
                    _ => Exit::Failure,
                };
                break;
            }
        }
    }
    mailbox.close().await;
    code
}

/// One sent request; as JSON (with the target it was written to) when
/// `json_target` is given.
fn print_sent(
    s: &SentRequest,
    json_target: Option<&crate::commands::target::Target>,
    out: &mut impl Write,
) {
    let r = &s.request;
    let written = if let Some(on) = json_target {
        writeln!(out, "{}", on.into_json(s))
    } else {
        writeln!(
            out,
            "request {} {}{} SEQN {} sent: COUTMSGS {} ROUTINGID {}{}",
            r.id,
            r.req_type,
            r.operation_day.map(|d| format!(" {d}")).unwrap_or_default(),
            r.seqn,
            r.coutmsgs_id.unwrap_or_default(),
            r.routing_id,
            if s.superseded.is_empty() {
                String::new()
            } else {
                format!("; expired the older open request(s) {:?}", s.superseded)
            }
        )
    };
    if let Err(e) = written {
        eprintln!("msgx request: {e}");
    }
}

fn print_list(rows: &[ReqRow], json: bool, out: &mut impl Write) -> Exit {
    let written = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(rows).unwrap_or_else(|_| "[]".into())
        )
    } else if rows.is_empty() {
        writeln!(out, "no requests")
    } else {
        let mut r = writeln!(
            out,
            "{:>6} {:<10} {:<10} {:<7} {:<6} {:>9} {:<20} {:<8} {:>8}  NOTE",
            "ID", "TYPE", "DAY", "STATE", "SEQN", "COUTMSGS", "SENT-AT", "MATCH", "MSG-ID"
        );
        for q in rows {
            r = r.and_then(|_| {
                writeln!(
                    out,
                    "{:>6} {:<10} {:<10} {:<7} {:<6} {:>9} {:<20} {:<8} {:>8}  {}",
                    q.id,
                    q.req_type,
                    q.operation_day
                        .map(|d| d.to_string())
                        .unwrap_or_else(|| "-".into()),
                    q.state,
                    q.seqn,
                    q.coutmsgs_id
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "-".into()),
                    q.sent_at
                        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                        .unwrap_or_else(|| "-".into()),
                    q.match_mode.as_deref().unwrap_or("-"),
                    q.matched_msg_id
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "-".into()),
                    q.match_audit
                        .as_deref()
                        .or(q.close_note.as_deref())
                        .unwrap_or("")
                )
            });
        }
        r
    };
    match written {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("msgx request list: {e}");
            Exit::Failure
        }
    }
}
