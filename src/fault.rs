//! Test-only fault injection (issue 17, item 1): named points where a debug
//! build panics on request, so the tests can prove a panic inside a job is
//! contained. Compiled out of release builds: [`hit`] is then an empty
//! inline function and `MSGX_FAULT` is never read.
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
