//! The context of the operator's request an action runs in: the role the
//! user acted with and the request's trace context. The console sets it per
//! request and the CLI per command ([`scope`]); the audit trail reads it
//! ([`current`]) when it records an action, so every service that records
//! one (replay, resend, republish, …) needs no extra parameter for it.

use super::trace_context::TraceParent;

/// Who asked, and under which trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// The role the user acted with: a console role (`viewer`, `operator`, …)
    /// or `cli` for a command run with the database's credentials.
    pub role: String,
    /// The request's W3C trace context (the console takes a valid incoming
    /// `traceparent` header, else starts a trace).
    pub trace: TraceParent,
}

tokio::task_local! {
    static CURRENT: RequestContext;
}

/// Runs `f` with `ctx` as the current request (in this task).
pub async fn scope<F: std::future::Future>(ctx: RequestContext, f: F) -> F::Output {
    CURRENT.scope(ctx, f).await
}

/// The current request, `None` outside [`scope`] (msgx's own actions, such
/// as a RESP matched by the degraded rule).
pub fn current() -> Option<RequestContext> {
    CURRENT.try_with(Clone::clone).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_context_is_visible_inside_its_scope_only() {
        assert_eq!(current(), None);
        let ctx = RequestContext {
            role: "operator".into(),
            trace: TraceParent::random(),
        };
        let seen = scope(ctx.clone(), async { current() }).await;
        assert_eq!(seen, Some(ctx));
        assert_eq!(current(), None);
    }
}
