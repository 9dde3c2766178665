//! `msgx mailbox generate`: a realistic synthetic backlog for benchmarks and
//! resilience harnesses. Never for production.
//!
//! The mix: SCHD DNLD packages that create `flights` flights over three
//! operation days (100 FLTR each), then single-flight FLOPs cycling over the
//! flights — times (APPT, EOBT, TOBT), gates (GTDT), stands, delays (DELY),
//! remarks, registrations — with an FDEL every 500 messages. Optionally some
//! business duplicates, malformed messages and rolled-back inserts (holes).
//! Deterministic for a given seed, with unique SEQNs.
//!
//! [`feed`] inserts the same mix one message at a time at a steady rate (the
//! latency benchmark's and the outage soak's inflow), printing each
//! insert's time and mailbox ID, and waits out a mailbox outage as the AODB
//! would (retrying the same message).

use crate::store::mailbox::{Mailbox, MailboxError};
use chrono::{Duration, NaiveDate, NaiveDateTime};

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub messages: u64,
    pub flights: u32,
    pub seed: u64,
    /// Fraction (0..1) of FLOPs re-sent with the same SEQN (duplicates).
    pub duplicates: f64,
    /// Fraction (0..1) of messages that are not well-formed.
    pub malformed: f64,
    /// Number of rolled-back inserts spread through the backlog (holes).
    pub holes: u32,
    /// First SEQN (so repeated runs into one mailbox stay unique).
    pub first_seqn: u64,
    /// Flights per SCHD DNLD package (100 by default).
    pub package_flights: u32,
    /// FLTRs with the groups of a real schedule (stands, gates, counters,
    /// delays: about 800 bytes each instead of about 300).
    pub rich: bool,
}

/// A tiny deterministic PRNG (xorshift64*), enough for a reproducible mix.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];

fn sis_time(t: NaiveDateTime) -> String {
    use chrono::{Datelike, Timelike};
    format!(
        "{:02}{}{:02}{:02}{:02}",
        t.day(),
        MONTHS[t.month0() as usize],
        t.year() % 100,
        t.hour(),
        t.minute()
    )
}

fn envelope(seqn: u64, typ: &str, styp: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MSG xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:noNamespaceSchemaLocation=\"unisysaodbsis.xsd\"><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN>\
         <DTTM>20261130200000</DTTM><TYPE>{typ}</TYPE><STYP>{styp}</STYP></META>{body}</MSG>"
    )
}

/// The generated messages, in mailbox order (`None` = a rolled-back insert).
pub fn messages(spec: &Spec) -> Vec<Option<String>> {
    mix(spec, true)
}

/// The mix without the SCHD packages (the flights exist from an earlier
/// run): FLOPs, FDELs and the requested faults only.
pub fn flop_mix(spec: &Spec) -> Vec<Option<String>> {
    mix(spec, false)
}

fn mix(spec: &Spec, schedules: bool) -> Vec<Option<String>> {
    let mut rng = Rng(spec.seed.max(1));
    let base = NaiveDate::from_ymd_opt(2026, 12, 1)
        .and_then(|d| d.and_hms_opt(6, 0, 0))
        .unwrap_or_default();
    let flights = spec.flights.max(1);
    let sodt = |i: u32| {
        base + Duration::days(i64::from(i % 3)) + Duration::minutes(i64::from((i * 7) % 960))
    };
    let mut out: Vec<Option<String>> = Vec::with_capacity(spec.messages as usize);
    let mut seqn = spec.first_seqn.max(1);
    let mut next_seqn = || {
        let s = seqn;
        seqn += 1;
        s
    };
    // Schedule packages first: every flight exists before its FLOPs.
    let package = spec.package_flights.max(1) as usize;
    for chunk in (0..flights).collect::<Vec<_>>().chunks(package) {
        if !schedules || out.len() as u64 >= spec.messages {
            break;
        }
        let fltrs: String = chunk
            .iter()
            .map(|&i| {
                let flid = 100_000 + i64::from(i);
                let mvin = if i % 2 == 0 { "D" } else { "A" };
                let t = sis_time(sodt(i));
                let rich = if spec.rich {
                    format!(
                        "<TAOP>YG</TAOP><TRML>T2</TRML><MAXP>148</MAXP><ESTT>{t}</ESTT>\
                         <LBWT>1680.5</LBWT><EXSC>RCFLOP</EXSC><FTSS>SCH</FTSS>\
                         <ROUT RTNO=\"1\"><APCD>XIY</APCD><SCAT>{t}</SCAT></ROUT>\
                         <PSDT PSNO=\"1\"><PSST>{s}</PSST><STST>{t}</STST><STET>{t}</STET></PSDT>\
                         <GTDT GTNO=\"1\"><GATE>G{g}</GATE><PGOT>{t}</PGOT><PGCT>{t}</PGCT><GTYP>D</GTYP></GTDT>\
                         <CKDT CKNO=\"1\"><CHKC>{c}</CHKC><CCLS>Y</CCLS><PCOT>{t}</PCOT><PCCT>{t}</PCCT><CTYP>D</CTYP></CKDT>\
                         <DELY CODE=\"93\" STRT=\"{t}\" DURA=\"0045\">late</DELY>",
                        s = 500 + i % 60,
                        g = 1 + i % 40,
                        c = 1 + i % 90,
                    )
                } else {
                    String::new()
                };
                format!(
                    "<FLTR><FLID>{flid}</FLID><ALCD>YG</ALCD><FLNO>YG{}</FLNO><MVIN>{mvin}</MVIN><SODT>{}</SODT>\
                     <FLTY>W</FLTY><FLIN>D</FLIN><ACFT>733</ACFT><RENO>B{:04}</RENO><STND>{}</STND>\
                     <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCDT>{}</SCDT></ERUT><ERUT RTNO=\"2\"><APCD>XIY</APCD></ERUT>{rich}</FLTR>",
                    1000 + i,
                    sis_time(sodt(i)),
                    i % 9999,
                    500 + i % 60,
                    sis_time(sodt(i))
                )
            })
            .collect();
        let body = format!("<SCHD><RECS>{}</RECS>{fltrs}</SCHD>", chunk.len());
        out.push(Some(envelope(next_seqn(), "SCHD", "DNLD", &body)));
    }
    let mut hole_every = if spec.holes > 0 {
        (spec.messages / u64::from(spec.holes)).max(2)
    } else {
        u64::MAX
    };
    if hole_every == 0 {
        hole_every = u64::MAX;
    }
    let mut last_flop: Option<String> = None;
    while (out.len() as u64) < spec.messages {
        let n = out.len() as u64;
        if n % hole_every == hole_every - 1 {
            out.push(None);
            continue;
        }
        if rng.chance(spec.malformed) {
            out.push(Some(format!(
                "<MSG><META><SNDR>AODB</SNDR><SEQN>{}</SEQN>",
                next_seqn()
            )));
            continue;
        }
        if let Some(prev) = &last_flop
            && rng.chance(spec.duplicates)
        {
            out.push(Some(prev.clone()));
            continue;
        }
        let i = rng.below(u64::from(flights)) as u32;
        let flid = 100_000 + i64::from(i);
        let t = sodt(i) + Duration::minutes(rng.below(90) as i64 - 30);
        let (styp, payload) = match n % 500 {
            499 => ("FDEL", "<FDEL/>".to_string()),
            _ => match rng.below(8) {
                0 => ("APPT", format!("<APPT>{}</APPT>", sis_time(t))),
                1 => ("EOBT", format!("<EOBT>{}</EOBT>", sis_time(t))),
                2 => ("TOBT", format!("<TOBT>{}</TOBT>", sis_time(t))),
                3 => (
                    "GTDT",
                    format!(
                        "<GTDT GTNO=\"1\"><GATE>G{}</GATE><PGOT>{}</PGOT><PGCT>{}</PGCT><GTYP>D</GTYP></GTDT>",
                        rng.below(40),
                        sis_time(t - Duration::minutes(50)),
                        sis_time(t - Duration::minutes(15))
                    ),
                ),
                4 => ("STND", format!("<STND>{}</STND>", 500 + rng.below(60))),
                5 => (
                    "DELY",
                    format!(
                        "<DELY CODE=\"{}\" STRT=\"{}\" DURA=\"00{:02}\">delay</DELY>",
                        80 + rng.below(20),
                        sis_time(t),
                        rng.below(60)
                    ),
                ),
                6 => (
                    "REMC",
                    format!("<REMC>remark {}</REMC>", rng.below(1_000_000)),
                ),
                _ => ("RENO", format!("<RENO>B{:04}</RENO>", rng.below(9999))),
            },
        };
        let msg = envelope(
            next_seqn(),
            "FLOP",
            styp,
            &format!(
                "<FLOP><FLID>{flid}</FLID><FFID>YG-YG{}-D</FFID>{payload}</FLOP>",
                1000 + i
            ),
        );
        last_flop = Some(msg.clone());
        out.push(Some(msg));
    }
    out
}

/// Inserts the backlog (batched multi-row INSERTs; holes as rolled-back
/// inserts). Returns (rows inserted, holes made).
pub async fn load(
    mailbox: &Mailbox,
    spec: &Spec,
    schedules: bool,
) -> Result<(u64, u64), MailboxError> {
    let all = mix(spec, schedules);
    let mut batch: Vec<String> = Vec::new();
    let (mut rows, mut holes) = (0u64, 0u64);
    for m in all {
        match m {
            Some(xml) => {
                batch.push(xml);
                if batch.len() >= 500 {
                    rows += mailbox.insert_many(&batch).await?;
                    batch.clear();
                }
            }
            None => {
                if !batch.is_empty() {
                    rows += mailbox.insert_many(&batch).await?;
                    batch.clear();
                }
                mailbox.insert_rolled_back("<MSG/>").await?;
                holes += 1;
            }
        }
    }
    if !batch.is_empty() {
        rows += mailbox.insert_many(&batch).await?;
    }
    Ok((rows, holes))
}

/// Inserts the mix (with or without the SCHD packages) one message at a time
/// at `rate` per second (a rolled-back insert for a hole), calling `inserted(unix_seconds, id)` after each commit
/// (`id` 0 for a hole). A failed insert is retried after a second until it
/// succeeds, and the pace catches up afterwards, as a queueing AODB would.
/// Returns (rows inserted, holes made, failed attempts).
pub async fn feed(
    mailbox: &Mailbox,
    spec: &Spec,
    schedules: bool,
    rate: f64,
    (clock, tz): (&crate::clock::SharedClock, chrono_tz::Tz),
    mut inserted: impl FnMut(f64, i64),
) -> (u64, u64, u64) {
    let period = std::time::Duration::from_secs_f64(1.0 / rate.max(0.001));
    let start = tokio::time::Instant::now();
    let (mut rows, mut holes, mut failures) = (0u64, 0u64, 0u64);
    let unix = |c: &crate::clock::SharedClock| {
        let now = c.now();
        now.timestamp() as f64 + f64::from(now.timestamp_subsec_micros()) / 1e6
    };
    for (i, m) in mix(spec, schedules).into_iter().enumerate() {
        tokio::time::sleep_until(start + period.mul_f64(i as f64)).await;
        loop {
            let result = match &m {
                Some(xml) => {
                    // As the AODB writes it: airport local time (sis-format
                    // §1.6), so the external-clock latency metric reads true.
                    let received = clock.now().with_timezone(&tz).naive_local();
                    mailbox.insert_message(xml, received, None).await
                }
                None => mailbox.insert_rolled_back("<MSG/>").await.map(|()| 0),
            };
            match result {
                Ok(id) => {
                    if id == 0 {
                        holes += 1;
                    } else {
                        rows += 1;
                    }
                    inserted(unix(clock), id);
                    break;
                }
                Err(e) => {
                    failures += 1;
                    if failures == 1 || failures % 30 == 0 {
                        eprintln!(
                            "msgx mailbox generate: insert failed ({failures} so far), retrying: {e}"
                        );
                    }
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }
    (rows, holes, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_deterministic_decodable_and_sized() {
        let spec = Spec {
            messages: 1200,
            flights: 250,
            seed: 7,
            duplicates: 0.0,
            malformed: 0.0,
            holes: 0,
            first_seqn: 1,
            package_flights: 100,
            rich: false,
        };
        let a = messages(&spec);
        assert_eq!(a, messages(&spec));
        assert_eq!(a.len(), 1200);
        for m in a.iter().flatten() {
            crate::codec::decode(m.as_bytes()).expect("generated messages decode");
        }
        assert!(
            a.iter()
                .flatten()
                .filter(|m| m.contains("<TYPE>SCHD</TYPE>"))
                .count()
                == 3
        );
    }

    #[test]
    fn without_schedules_only_the_flop_mix() {
        let spec = Spec {
            messages: 300,
            flights: 250,
            seed: 7,
            duplicates: 0.0,
            malformed: 0.0,
            holes: 0,
            first_seqn: 1,
            package_flights: 100,
            rich: false,
        };
        let a = flop_mix(&spec);
        assert_eq!(a.len(), 300);
        assert!(a.iter().flatten().all(|m| m.contains("<TYPE>FLOP</TYPE>")));
    }

    #[test]
    fn faults_are_injected_on_request() {
        let spec = Spec {
            messages: 2000,
            flights: 100,
            seed: 3,
            duplicates: 0.05,
            malformed: 0.02,
            holes: 4,
            first_seqn: 1,
            package_flights: 100,
            rich: false,
        };
        let a = messages(&spec);
        assert_eq!(a.iter().filter(|m| m.is_none()).count(), 4);
        let bad = a
            .iter()
            .flatten()
            .filter(|m| crate::codec::decode(m.as_bytes()).is_err())
            .count();
        assert!(bad > 10, "{bad}");
    }
}
