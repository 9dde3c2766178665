//! `msgx flight show`, `msgx msg show`, `msgx holes`: why a
//! flight shows what it shows, what became of one message, and where the
//! watermark skipped (design §4.1: the cost of holes must be watched).
//!
//! Read-only; exit 0 when found, 1 when the thing does not exist or a store
//! cannot be read.

use super::{connect_current, emit};
use crate::clock::SharedClock;
use crate::codec::DecodedWindow;
use crate::config::Config;
use crate::exit::Exit;
use crate::inspect::{Bounds, HolesView, MessageView, Raw};
use crate::store::mailbox::Mailbox;
use crate::store::pg::proc_state;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::io::Write;

fn fail(what: &str, e: impl std::fmt::Display) -> Exit {
    eprintln!("msgx {what}: {e}");
    Exit::Failure
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "-".into(),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// `msgx flight show <FLID> [--json]`: the complete current state (the
/// KAFKA:schd projection JSON, MAFL included) and the writes still in the
/// outbox, newest first.
pub async fn flight_show(
    pool: &PgPool,
    config: &Config,
    flid: i64,
    limit: i64,
    json_out: bool,
    out: &mut dyn Write,
) -> Exit {
    let view = match crate::inspect::flight(pool, config, flid, limit).await {
        Ok(v) => v,
        Err(e) => return fail("flight show", e),
    };
    let Some(view) = view else {
        eprintln!(
            "msgx flight show: no flight {flid} in the current state (never created, or moved to \
             the history store by flight-history-clean: see the flight_history table)"
        );
        return Exit::Failure;
    };
    let (state, changes) = (view.state, view.changes);
    if json_out {
        let doc = json!({"flid": flid, "state": state, "messages": changes});
        return emit(out, &format!("{doc}\n"));
    }
    let mut s = format!(
        "flight {flid}: {} version {}, last message {}\n",
        state["state"].as_str().unwrap_or("?"),
        view.state_version,
        view.last_msg_id
    );
    s += &serde_json::to_string_pretty(&state).unwrap_or_default();
    s += "\n\nA-CDM milestones (docs/events.md \"Milestones\"):\n";
    if view.milestones.is_empty() {
        s += "  none (no MVIN, or none of the fields they come from is set)\n";
    } else {
        s += &format!(
            "  {:<4} {:<4} {:<25} {:<14} {:>10}\n",
            "CODE", "TYPE", "TIME", "SOURCE", "SET-BY-MSG"
        );
    }
    for (code, m) in &view.milestones {
        s += &format!(
            "  {:<4} {:<4} {:<25} {:<14} {:>10}\n",
            code.as_str(),
            m.kind.as_str(),
            m.time.to_rfc3339(),
            m.source_label(),
            m.msg_id.map_or_else(|| "-".into(), |id| id.to_string())
        );
    }
    s += "\nmessages that changed it (newest first; kept for msgx.pipeline.event-retention):\n";
    if changes.is_empty() {
        s += "  none in the outbox\n";
    } else {
        s += &format!(
            "  {:>10} {:>7} {:<12} {:<7} {:<10} {:<26} FIELDS\n",
            "MSG-ID", "VERSION", "KIND", "CHANGE", "OUTCOME", "WRITTEN"
        );
    }
    for c in &changes {
        let fields: Vec<String> = c
            .changed_fields
            .as_ref()
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        s += &format!(
            "  {:>10} {:>7} {:<12} {:<7} {:<10} {:<26} {}\n",
            c.msg_id.map_or_else(|| "-".into(), |id| id.to_string()),
            c.state_version,
            c.kind.as_deref().unwrap_or("-"),
            c.change.as_deref().unwrap_or("-"),
            c.outcome.as_deref().unwrap_or("-"),
            c.at.as_deref().unwrap_or("-"),
            fields.join(",")
        );
    }
    emit(out, &s)
}

/// `msgx msg show <MSG_ID> [--json] [--full]`: the PROC_STATE record, the
/// flights it wrote, and the raw XML from the mailbox (or "purged"),
/// decoded, with every unknown element the codec kept (`unknown_elements`
/// in the JSON: `[{path, name, raw}]`, `null` when it was
/// not decoded). Bounded like the console's page unless `full`: the first
/// [`crate::inspect::RAW_PREVIEW_BYTES`] of the raw XML and the first
/// [`crate::inspect::RECORDS_PER_PAGE`] records decoded; the JSON says what
/// was cut (`cut`, `raw_cut`, `raw_bytes`, `records`).
pub async fn msg_show(
    pool: &PgPool,
    mailbox: &Mailbox,
    msg_id: i64,
    json_out: bool,
    full: bool,
    out: &mut dyn Write,
) -> Exit {
    let bounds = if full {
        Bounds::full()
    } else {
        Bounds::page(1).unwrap_or_else(Bounds::full)
    };
    let view = match crate::inspect::message(pool, mailbox, msg_id, &bounds).await {
        Ok(v) => v,
        Err(e) => return fail("msg show", e),
    };
    let Some(MessageView {
        record,
        flights,
        raw,
        decoded,
    }) = view
    else {
        eprintln!("msgx msg show: message {msg_id} is neither in PROC_STATE nor in the mailbox");
        return Exit::Failure;
    };
    let flights_json: Vec<Value> = flights
        .iter()
        .map(|(flid, v)| json!({"flid": flid, "state_version": v}))
        .collect();
    let raw_cut = matches!(&raw, Raw::Present(r) if r.cut);
    let window = decoded.as_ref().and_then(|d| d.as_ref().ok());
    let records_cut = window.is_some_and(DecodedWindow::is_cut);
    if json_out {
        let (raw_text, raw_bytes, mailbox_state) = match raw {
            Raw::Present(r) => (Some(r.text), Some(r.total_bytes), "present".to_string()),
            Raw::Purged => (None, None, "purged".into()),
            Raw::Unreadable(e) => (None, None, format!("unreachable: {e}")),
        };
        let doc = json!({
            "msg_id": msg_id,
            "record": record,
            "flights": flights_json,
            "mailbox": mailbox_state,
            "raw": raw_text,
            "raw_bytes": raw_bytes,
            "raw_cut": raw_cut,
            "decoded": decoded
                .as_ref()
                .map(|d| super::decode::result_value(d.as_ref().map(|w| &w.message))),
            "records": window
                .filter(|w| w.total > 0)
                .map(|w| json!({"first": w.first, "shown": w.shown(), "total": w.total})),
            "cut": raw_cut || records_cut,
            "unknown_elements": window.map(|w| w.message.unknown_elements()),
        });
        return emit(out, &format!("{doc}\n"));
    }
    let mut s = format!("message {msg_id}\n");
    match &record {
        None => {
            s += "  not in PROC_STATE: not enqueued yet (beyond W) or a late row (see `msgx holes`)\n"
        }
        Some(r) => s += &record_text(r),
    }
    if !flights.is_empty() {
        let f: Vec<String> = flights
            .iter()
            .map(|(flid, v)| format!("{flid} (v{v})"))
            .collect();
        s += &format!("  flights written: {}\n", f.join(", "));
    }
    let name = format!("  {msg_id}");
    match (&raw, &decoded) {
        (Raw::Present(r), Some(d)) => {
            let summary = match d {
                Ok(w) => super::decode::summary_from(&name, &w.message, w.first, Some(w.total)),
                Err(e) => format!("{name}: {e}"),
            };
            let size = if r.cut {
                format!(" (the first {} of {} bytes)", r.text.len(), r.total_bytes)
            } else {
                String::new()
            };
            s += &format!("decoded:\n{summary}\nraw XML{size}:\n{}\n", r.text);
        }
        (Raw::Purged, _) => s += "raw XML: purged (the mailbox row no longer exists)\n",
        (Raw::Unreadable(e), _) => s += &format!("raw XML: mailbox unreachable: {e}\n"),
        (Raw::Present(_), None) => {}
    }
    if raw_cut || records_cut {
        s += &format!(
            "cut: a bounded view (the first {} KiB of the raw XML, {} records decoded); \
             --full shows the whole message\n",
            crate::inspect::RAW_PREVIEW_BYTES >> 10,
            crate::inspect::RECORDS_PER_PAGE
        );
    }
    emit(out, &s)
}

fn record_text(r: &proc_state::MessageRecord) -> String {
    let kind = format!(
        "{}-{}",
        r.msg_type.as_deref().unwrap_or("?"),
        r.msg_styp.as_deref().unwrap_or("?")
    );
    let mut s = format!(
        "  state {}{} · kind {kind} · attempts {} · source {}\n",
        r.state,
        r.archived_at
            .map(|t| format!(" (archived {})", time(Some(t))))
            .unwrap_or_default(),
        r.attempts,
        r.source
    );
    if let Some(c) = &r.error_class {
        s += &format!("  error {c}: {}\n", r.last_error.as_deref().unwrap_or(""));
    }
    if let Some(reason) = &r.outcome_reason {
        s += &format!("  outcome reason: {reason}\n");
    }
    if r.next_attempt_at.is_some() {
        s += &format!("  next attempt: {}\n", time(r.next_attempt_at));
    }
    s += &format!(
        "  received {} · enqueued {} · finished {}\n",
        time(r.received_at),
        time(r.enqueued_at),
        time(r.finished_at)
    );
    // The W3C trace context: the `traceparent` header of
    // its Kafka records and the `trace_id` of its log lines.
    s += &match &r.traceparent {
        Some(t) => format!("  traceparent {t}\n"),
        None => "  traceparent none (enqueued before trace context)\n".into(),
    };
    let backfill = if let Some(at) = r.backfill_at {
        format!("mark written {}", time(Some(at)))
    } else if let Some(at) = r.backfill_abandoned_at {
        format!(
            "ABANDONED {} ({}){}",
            time(Some(at)),
            r.backfill_abandoned_reason.as_deref().unwrap_or("?"),
            r.backfill_reconciled_at
                .map(|t| format!(", reconciled {}", time(Some(t))))
                .unwrap_or_else(|| ", not reconciled".into())
        )
    } else if r.backfill_next_at.is_some() {
        format!("pending, next try {}", time(r.backfill_next_at))
    } else {
        "no intent (not terminal)".into()
    };
    s += &format!(
        "  backfill: {backfill} · attempts {}{}{}\n",
        r.backfill_attempts,
        // Decides TRANSIENT_DEADLINE (docs/backfill.md).
        r.backfill_failing_since
            .map(|t| format!(" · failing since {}", time(Some(t))))
            .unwrap_or_default(),
        r.backfill_last_error
            .as_ref()
            .map(|e| format!(" · last error: {e}"))
            .unwrap_or_default()
    );
    s
}

/// `msgx holes [--json]`: the hole W waits at now, the released holes and
/// the late rows (newest first, at most `limit` each).
pub async fn holes(
    pool: &PgPool,
    now: DateTime<Utc>,
    limit: i64,
    json_out: bool,
    out: &mut dyn Write,
) -> Exit {
    let view = match crate::inspect::holes(pool, now, limit).await {
        Ok(v) => v,
        Err(e) => return fail("holes", e),
    };
    let HolesView {
        w,
        open,
        released,
        late,
    } = view;
    if json_out {
        let doc = json!({"w": w, "open": open, "released": released, "late_rows": late});
        return emit(out, &format!("{doc}\n"));
    }
    let mut s = format!("watermark W = {w}\n");
    s += &match &open {
        Some(h) => format!(
            "open hole at ID {} since {} ({}s; released when no transaction that could fill it is open, \
             else after msgx.pipeline.max-commit-delay)\n",
            h.at_id,
            time(Some(h.since)),
            h.open_seconds
        ),
        None => "no open hole\n".into(),
    };
    s += &format!("released holes ({}):\n", released.len());
    for h in &released {
        s += &format!(
            "  #{:<6} IDs {}..={}  first seen {}  released {} ({})\n",
            h.id,
            h.first_id,
            h.last_id,
            time(Some(h.first_seen)),
            time(Some(h.released_at)),
            h.reason
        );
    }
    s += &format!(
        "late rows ({}; below W, NOT processed: docs/operations.md):\n",
        late.len()
    );
    for l in &late {
        s += &format!(
            "  ID {:<10} hole #{:<6} detected {}  {}{}\n",
            l.msg_id,
            l.hole_id.map_or_else(|| "-".into(), |h| h.to_string()),
            time(Some(l.detected_at)),
            l.state.as_deref().unwrap_or("not enqueued"),
            l.resolution
                .as_ref()
                .map(|r| format!(" · {r}"))
                .unwrap_or_default()
        );
    }
    emit(out, &s)
}

/// `msgx flight show`, on the configured PostgreSQL, to standard output.
pub async fn flight_show_command(config: &Config, flid: i64, limit: i64, json: bool) -> Exit {
    let pool = match connect_current(config, "flight show").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    flight_show(&pool, config, flid, limit, json, &mut std::io::stdout()).await
}

/// `msgx msg show`, on the configured PostgreSQL and mailbox.
pub async fn msg_show_command(config: &Config, msg_id: i64, json: bool, full: bool) -> Exit {
    let pool = match connect_current(config, "msg show").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mailbox = match super::open_mailbox(config, "msg show") {
        Ok(m) => m,
        Err(code) => return code,
    };
    let code = msg_show(&pool, &mailbox, msg_id, json, full, &mut std::io::stdout()).await;
    mailbox.close().await;
    code
}

/// `msgx holes`, on the configured PostgreSQL, as of the clock's now.
pub async fn holes_command(config: &Config, clock: SharedClock, limit: i64, json: bool) -> Exit {
    let pool = match connect_current(config, "holes").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    holes(&pool, clock.now(), limit, json, &mut std::io::stdout()).await
}
