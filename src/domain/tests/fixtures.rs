//! Fixture-driven tests: decode real and composed SIS files with the codec and
//! run them through the engine, loading flights with the documented two-query
//! protocol from an in-memory "store". The real samples stay in
//! ../shared/fixtures/sis (never copied); the test skips when it is absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::support::*;
use crate::codec::{DecodedMessage, MsgKind, decode};
use crate::domain::rules::flop::{subtype, touched_fields};
use crate::domain::{Decision, FlightSet, FlightState, FlightStatus};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.extension().is_some_and(|e| e == "xml"));
    out.sort();
    out
}

fn name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The loading protocol of `FlightStateEngine` against a map "store".
fn load(store: &BTreeMap<i64, FlightState>, msg: &DecodedMessage) -> FlightSet {
    let e = engine();
    let mut set: FlightSet = e
        .flids_to_load(msg)
        .iter()
        .filter_map(|f| store.get(f).cloned())
        .collect();
    let masters = e.masters_to_load(msg, &set);
    for f in store.values() {
        let by_flid = masters.contains(&f.flid);
        let by_maid = f.is_active()
            && f.int(crate::codec::ScalarTag::MAID)
                .is_some_and(|m| masters.contains(&m));
        if (by_flid || by_maid) && !set.contains(f.flid) {
            set.insert(f.clone());
        }
    }
    set
}

fn run(store: &mut BTreeMap<i64, FlightState>, msg_id: i64, msg: &DecodedMessage) -> Decision {
    let set = load(store, msg);
    let d = engine().decide(&ctx(msg_id), msg, &set);
    if let Decision::Applied { writes, .. } = &d {
        for w in writes {
            store.insert(w.flid, w.clone());
        }
    }
    d
}

fn label(d: &Decision) -> &'static str {
    match d {
        Decision::Applied { .. } => "applied",
        Decision::NoChange { .. } => "no-change",
        Decision::NoMatch { .. } => "no-match",
        Decision::Rejected { .. } => "rejected",
    }
}

#[test]
fn own_samples_replay_in_file_order() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sis");
    let paths = files(&dir);
    if paths.is_empty() {
        println!("skipped: no samples in {}", dir.display());
        return;
    }
    let mut store = BTreeMap::new();
    let mut seen = 0;
    for (i, p) in paths.iter().enumerate() {
        let n = name(p);
        let bytes = std::fs::read(p).expect("readable fixture");
        let msg = match decode(&bytes) {
            Ok(m) => m,
            Err(e) => {
                assert!(n.starts_with("027-"), "{n}: unexpected decode error {e}");
                continue;
            }
        };
        if matches!(
            msg.kind,
            MsgKind::RefData(_) | MsgKind::Schs(_) | MsgKind::Unsupported(_)
        ) {
            continue;
        }
        seen += 1;
        let d = run(&mut store, i64::try_from(i).unwrap_or_default() + 1, &msg);
        let want = match &n[..4] {
            // DDIR "TOO" / empty DDIR (sis-format §3.3).
            "017-" | "018-" => "rejected",
            // Same turnaround link the schedule already set: idempotent.
            "012-" => "no-change",
            // Clears a TOBT that no earlier sample set: nothing to change.
            "015-" => "no-change",
            _ => "applied",
        };
        assert_eq!(label(&d), want, "{n}: {d:?}");
    }
    assert!(seen >= 20, "only {seen} flight messages");
    let state = |f: i64| store.get(&f).map(|x| x.state);
    assert_eq!(state(9003), Some(FlightStatus::Deleted));
    for f in [9001, 9002, 9004] {
        assert_eq!(state(f), Some(FlightStatus::Active), "{f}");
    }
}

#[test]
fn real_samples_through_the_engine() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/sis");
    let paths = files(&dir);
    if paths.is_empty() {
        println!("skipped: real samples not found at {}", dir.display());
        return;
    }
    let decoded: Vec<(String, DecodedMessage)> = paths
        .iter()
        .filter_map(|p| Some((name(p), decode(&std::fs::read(p).ok()?).ok()?)))
        .collect();

    // The only schedule creates FLIDs 15 and 16 (sis-format §2.4 example).
    let (_, schd) = decoded
        .iter()
        .find(|(n, _)| n.starts_with("SCHD-01"))
        .expect("SCHD-01 decodes");
    let mut store = BTreeMap::new();
    let (writes, _) = applied(run(&mut store, 1, schd));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![15, 16]
    );
    let f15 = &writes[0];
    assert_eq!(f15.operation_day, Some(day("2021-01-23")));
    assert_eq!((f15.rout.len(), f15.erut.len(), f15.psdt.len()), (1, 2, 1));
    assert_eq!(f15.int(crate::codec::ScalarTag::TAID), Some(16));

    let mut flops = 0;
    for (n, msg) in &decoded {
        let flid = match &msg.kind {
            MsgKind::Flop(f) => f.flid,
            MsgKind::Fdel(f) => f.flid,
            _ => continue,
        };
        flops += 1;
        // Against the schedule-only store: known FLIDs apply, others are no-match.
        let d = run(&mut store.clone(), 2, msg);
        if flid == 15 || flid == 16 {
            assert!(
                matches!(d, Decision::Applied { .. } | Decision::NoChange { .. }),
                "{n}: {d:?}"
            );
        } else {
            assert_eq!(label(&d), "no-match", "{n}");
        }
        // Against a fully populated flight with that FLID: every sample changes
        // something, and only what its subtype names (INV-20).
        let mut full = BTreeMap::new();
        applied(run(&mut full, 1, &schd_of(full_fltr(flid))));
        let before = full.get(&flid).cloned().expect("seeded");
        let d = run(&mut full, 2, msg);
        let styp = match &msg.kind {
            MsgKind::Flop(f) => subtype(&f.payload),
            _ => "FDEL",
        };
        let (writes, _) = match d {
            Decision::Applied { writes, events } => (writes, events),
            other => panic!("{n}: expected applied, got {other:?}"),
        };
        let changed = before.changed_fields(&writes[0]);
        let touched = touched_fields(styp);
        assert!(
            !changed.is_empty() && changed.iter().all(|c| touched.contains(&c.as_str())),
            "{n}: {changed:?}"
        );
    }
    assert!(flops >= 40, "only {flops} FLOP samples decoded");
}

fn schd_of(f: crate::codec::Fltr) -> DecodedMessage {
    schd("DNLD", vec![f])
}
