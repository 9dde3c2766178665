//! The Audit page (`/audit`, issue 37 item 3): the recorded operator
//! actions (OPERATOR_ACTION, console and CLI alike), newest first, filtered
//! by user, action, time range and target, [`PAGE_SIZE`] per page with a
//! keyset cursor like the Messages page. Server-rendered; every role may
//! read it. The same actions go to the `audit` topic (docs/events.md).

use super::audit_filter::AuditForm;
use super::filter::PAGE_SIZE;
use super::pages::unavailable;
use super::state::{ConsoleState, Principal};
use super::views::{Cell, Nav, Row, Table, page, time};
use crate::store::pg::operator_action;
use askama::Template;
use axum::Extension;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;

/// The longest detail shown in a row, in characters (the whole is in
/// OPERATOR_ACTION and on the audit topic).
const DETAIL_CHARS: usize = 160;

#[derive(Template)]
#[template(path = "console/audit.html")]
pub struct AuditPage {
    pub nav: Nav,
    pub filter: AuditForm,
    pub error: Option<String>,
    pub table: Table,
    pub next: Option<String>,
}

/// `GET /audit`.
pub async fn audit(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Query(filter): Query<AuditForm>,
) -> Response {
    let mut table = Table::new(
        "table-audit",
        vec![
            "ID",
            "Applied (UTC)",
            "User",
            "Action",
            "Target",
            "Reason",
            "Detail",
        ],
        "no recorded action matches the filter",
    );
    let mut filter = filter;
    let mut error = None;
    let mut next = None;
    match filter.parse() {
        Err(e) => {
            filter.cut();
            error = Some(crate::error_text::cut(&e.to_string()).into_owned());
        }
        Ok((q, before)) => {
            let rows = match operator_action::page(&s.pg, &q, before, PAGE_SIZE).await {
                Ok(r) => r,
                Err(e) => return unavailable("audit", e),
            };
            next = filter
                .next_page(rows.len(), rows.last().map(|r| r.id))
                .map(|f| format!("/audit?{}", f.query_string()));
            for r in rows {
                let detail: String = r.detail.to_string().chars().take(DETAIL_CHARS).collect();
                table.rows.push(Row {
                    id: format!("action-{}", r.id),
                    cells: vec![
                        Cell::text(r.id.to_string()),
                        Cell::text(time(Some(r.at))),
                        Cell::text(r.actor),
                        Cell::text(r.action),
                        Cell::text(r.target),
                        Cell::text(r.reason.unwrap_or_default()),
                        Cell::text(detail),
                    ],
                    actions: vec![],
                });
            }
        }
    }
    let status = if error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let p = AuditPage {
        nav: Nav::of(&who, "nav-audit"),
        filter,
        error,
        table,
        next,
    };
    page(status, &p)
}
