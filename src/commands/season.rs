//! `msgx season list|show [--json]` (docs/season.md): the
//! stored seasonal schedules, read-only. Exit 0 when found, 1 when the
//! season does not exist or PostgreSQL cannot be read.

use chrono::NaiveDate;
use clap::Subcommand;
use serde_json::json;
use sqlx::PgPool;
use std::io::Write;

use super::emit;
use crate::config::Config;
use crate::exit::Exit;
use crate::store::pg::season::{self, SeasonSummary, StoredSeason};

/// `msgx season …`.
#[derive(Debug, Subcommand)]
pub enum SeasonAction {
    /// The stored seasons, most recent first (msgx.season.keep of them).
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// One season's series (every stored season of that name, or the one
    /// starting at --sdat).
    Show {
        /// The season name (SNAM), e.g. `Winter`.
        snam: String,
        /// Only the season starting on this day (SDAT, YYYY-MM-DD).
        #[arg(long, value_name = "YYYY-MM-DD")]
        sdat: Option<NaiveDate>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `msgx season` action on `pool`.
pub async fn run(pool: &PgPool, action: SeasonAction, out: &mut dyn Write) -> Exit {
    match action {
        SeasonAction::List { json } => match season::list(pool).await {
            Ok(all) => emit(out, &list_text(&all, json)),
            Err(e) => {
                eprintln!("msgx season list: {e}");
                Exit::Failure
            }
        },
        SeasonAction::Show { snam, sdat, json } => match season::load(pool, &snam, sdat).await {
            Ok(found) if found.is_empty() => {
                eprintln!(
                    "msgx season show: no stored season {snam}{} (msgx season list shows the stored ones)",
                    sdat.map(|d| format!(" starting {d}")).unwrap_or_default()
                );
                Exit::Failure
            }
            Ok(found) => emit(out, &show_text(&found, json)),
            Err(e) => {
                eprintln!("msgx season show: {e}");
                Exit::Failure
            }
        },
    }
}

fn list_text(all: &[SeasonSummary], json: bool) -> String {
    if json {
        return format!("{}\n", json!({ "seasons": all }));
    }
    if all.is_empty() {
        return "no season stored\n".into();
    }
    let mut s = format!(
        "{:<12} {:<10} {:<10} {:<5} {:>7} {:>8} {:>10}  UPDATED\n",
        "SNAM", "SDAT", "EDAT", "APCD", "SERIES", "REVISION", "MSG-ID"
    );
    for x in all {
        s += &format!(
            "{:<12} {:<10} {:<10} {:<5} {:>7} {:>8} {:>10}  {}\n",
            x.snam,
            x.sdat,
            x.edat,
            x.apcd.as_deref().unwrap_or("-"),
            x.series,
            x.revision,
            x.msg_id,
            x.updated_at.format("%Y-%m-%d %H:%M:%S UTC")
        );
    }
    s
}

fn show_text(found: &[StoredSeason], json: bool) -> String {
    if json {
        return format!("{}\n", json!({ "seasons": found }));
    }
    let mut s = String::new();
    for season in found {
        let h = &season.summary;
        s += &format!(
            "season {} {}..{} at {}: {} series, revision {}, from message {}\n",
            h.snam,
            h.sdat,
            h.edat,
            h.apcd.as_deref().unwrap_or("-"),
            h.series,
            h.revision,
            h.msg_id
        );
        s += &format!(
            "  {:<8} {:<4} {:<10} {:<10} {:<7} {:<4} {:<4} {:<4} {:<5} ROUTE\n",
            "FLNO", "MVIN", "STDT", "EDDT", "DYOP", "SCHT", "FLTY", "FLIN", "ACFT"
        );
        for x in &season.series {
            let route: Vec<&str> = x.erut.iter().filter_map(|p| p.apcd.as_deref()).collect();
            let route = if route.is_empty() {
                x.rout
                    .iter()
                    .filter_map(|p| p.apcd.as_deref())
                    .collect::<Vec<_>>()
            } else {
                route
            };
            s += &format!(
                "  {:<8} {:<4} {:<10} {:<10} {:<7} {:<4} {:<4} {:<4} {:<5} {}\n",
                x.flno,
                x.mvin,
                x.stdt,
                x.eddt,
                x.dyop,
                x.scht,
                x.flty,
                x.flin,
                x.acft,
                route.join("-")
            );
        }
    }
    s
}

/// `msgx season …`, on the configured PostgreSQL, to standard output.
pub async fn command(config: &Config, action: SeasonAction) -> Exit {
    let pool = match super::connect_current(config, "season").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    run(&pool, action, &mut std::io::stdout()).await
}
