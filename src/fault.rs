//! Test-only fault injection: named points where a debug
//! build panics on request, so the tests can prove a panic inside a job is
//! contained. Compiled out of release builds: [`hit`] is then an empty
//! inline function and `MSGX_FAULT` is never read.
//!
//! Beside the panics, pause points ([`pause`], armed in-process by a test
//! with `arm_pause`) stop the code between two steps so a test can land a
//! concurrent writer exactly there.
//!
//! `MSGX_FAULT` = comma-separated `panic:<point>[:<times>]`, e.g.
//! `panic:job:pump-drain:2` panics in the first two runs of `pump-drain`
//! (no count = every time). Points: `job:<name>` (at the start of each
//! bounded pass of a job run).

/// Panics when `MSGX_FAULT` names `<area>:<name>` and its count is not used up.
#[cfg(debug_assertions)]
pub fn hit(area: &str, name: &str) {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static PLAN: OnceLock<Mutex<HashMap<String, Option<u64>>>> = OnceLock::new();
    let plan =
        PLAN.get_or_init(|| Mutex::new(parse(&std::env::var("MSGX_FAULT").unwrap_or_default())));
    let point = format!("{area}:{name}");
    let fire = {
        let mut plan = plan.lock().unwrap_or_else(|e| e.into_inner());
        match plan.get_mut(&point) {
            None => false,
            Some(None) => true,
            Some(Some(0)) => false,
            Some(Some(n)) => {
                *n -= 1;
                true
            }
        }
    };
    if fire {
        panic!("injected fault at {point} (MSGX_FAULT)");
    }
}

/// Release builds: no fault points.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn hit(_area: &str, _name: &str) {}

/// Pauses at `<area>:<name>` when a test armed it with [`arm_pause`] (once
/// per arming): the test learns the point is reached, does what must
/// happen in between (a replay between the pump's read and its write), then
/// lets the code go on. Points are per process (nextest runs each test in its
/// own).
#[cfg(debug_assertions)]
pub async fn pause(area: &str, name: &str) {
    let armed = pauses()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&format!("{area}:{name}"));
    if let Some((reached, go_on)) = armed {
        let _ = reached.send(());
        let _ = go_on.await;
    }
}

/// Release builds: no pause points.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub async fn pause(_area: &str, _name: &str) {}

/// The armed pause points: point → (tell it is reached, wait to go on).
#[cfg(debug_assertions)]
type Armed = std::collections::HashMap<
    String,
    (
        tokio::sync::oneshot::Sender<()>,
        tokio::sync::oneshot::Receiver<()>,
    ),
>;

#[cfg(debug_assertions)]
fn pauses() -> &'static std::sync::Mutex<Armed> {
    static PAUSES: std::sync::OnceLock<std::sync::Mutex<Armed>> = std::sync::OnceLock::new();
    PAUSES.get_or_init(Default::default)
}

/// A test's hold on one armed pause point ([`arm_pause`]).
#[cfg(debug_assertions)]
pub struct Paused {
    reached: tokio::sync::oneshot::Receiver<()>,
    go_on: tokio::sync::oneshot::Sender<()>,
}

#[cfg(debug_assertions)]
impl Paused {
    /// Waits until the code stands at the point; false when the point was
    /// never reached (the code ended without it).
    pub async fn reached(&mut self) -> bool {
        (&mut self.reached).await.is_ok()
    }

    /// Lets the code go on past the point.
    pub fn go_on(self) {
        let _ = self.go_on.send(());
    }
}

/// Arms the pause point `<area>:<name>` for its next [`pause`] (debug
/// builds; for tests).
#[cfg(debug_assertions)]
pub fn arm_pause(point: &str) -> Paused {
    let (reached_tx, reached) = tokio::sync::oneshot::channel();
    let (go_on, go_on_rx) = tokio::sync::oneshot::channel();
    pauses()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(point.to_string(), (reached_tx, go_on_rx));
    Paused { reached, go_on }
}

/// `panic:<point>[:<times>]` entries → point → remaining count (`None` = always).
#[cfg(debug_assertions)]
fn parse(spec: &str) -> std::collections::HashMap<String, Option<u64>> {
    spec.split(',')
        .filter_map(|entry| {
            let rest = entry.trim().strip_prefix("panic:")?;
            match rest.rsplit_once(':') {
                Some((point, n)) if point.contains(':') => match n.parse() {
                    Ok(n) => Some((point.to_string(), Some(n))),
                    Err(_) => Some((rest.to_string(), None)),
                },
                _ => Some((rest.to_string(), None)),
            }
        })
        .collect()
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_points_and_counts() {
        let p = parse("panic:job:pump-drain:2, panic:job:ingest-sweep,bogus");
        assert_eq!(p.get("job:pump-drain"), Some(&Some(2)));
        assert_eq!(p.get("job:ingest-sweep"), Some(&None));
        assert_eq!(p.len(), 2);
    }
}
