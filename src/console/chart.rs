//! Small server-rendered SVG charts (the Overview's bars, the Jobs page's
//! run sparklines):
//! no script, no chart library, readable without JavaScript. Pure.

use crate::store::pg::job_run::Outcome;
use chrono::{DateTime, Duration, Utc};

/// One bar per bucket from `since` to `now` (buckets without data are 0),
/// so the x axis is time even when nothing happened.
pub fn fill_buckets(
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    bucket: Duration,
    data: &[(DateTime<Utc>, f64)],
) -> Vec<(DateTime<Utc>, f64)> {
    let step = bucket.num_seconds().max(1);
    let start = since.timestamp().div_euclid(step) * step;
    let mut out = Vec::new();
    let mut t = start;
    while t <= now.timestamp() {
        let at = DateTime::from_timestamp(t, 0).unwrap_or(since);
        let v = data
            .iter()
            .filter(|(b, _)| b.timestamp().div_euclid(step) * step == t)
            .map(|(_, v)| *v)
            .fold(0.0, |a, b| a + b);
        out.push((at, v));
        t += step;
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG bar chart with `id`, an accessible title, the largest value on
/// the y axis and the first and last bucket times on the x axis.
pub fn bars(id: &str, title: &str, unit: &str, points: &[(DateTime<Utc>, f64)]) -> String {
    const W: f64 = 480.0;
    const H: f64 = 120.0;
    const PAD: f64 = 24.0;
    let max = points.iter().map(|p| p.1).fold(0.0_f64, f64::max);
    let n = points.len().max(1) as f64;
    let slot = (W - PAD) / n;
    let mut svg = format!(
        "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 {W} {}\" role=\"img\" aria-labelledby=\"{}-title\">\
         <title id=\"{}-title\">{}</title>",
        escape(id),
        H + PAD,
        escape(id),
        escape(id),
        escape(title)
    );
    for (i, (at, v)) in points.iter().enumerate() {
        let h = if max > 0.0 { v / max * (H - 4.0) } else { 0.0 };
        svg += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}: {} {}</title></rect>",
            PAD + i as f64 * slot + 1.0,
            H - h,
            (slot - 2.0).max(1.0),
            h,
            at.format("%H:%M"),
            format_value(*v),
            escape(unit)
        );
    }
    svg += &format!(
        "<line x1=\"{PAD}\" y1=\"{H}\" x2=\"{W}\" y2=\"{H}\" class=\"axis\"/>\
         <text x=\"0\" y=\"10\" class=\"label\">{} {}</text>\
         <text x=\"{}\" y=\"10\" class=\"label\" text-anchor=\"middle\">{}</text>",
        format_value(max),
        escape(unit),
        (W + PAD) / 2.0,
        escape(title)
    );
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        svg += &format!(
            "<text x=\"{PAD}\" y=\"{}\" class=\"label\">{}</text>\
             <text x=\"{W}\" y=\"{}\" class=\"label\" text-anchor=\"end\">{}</text>",
            H + 16.0,
            first.0.format("%H:%M"),
            H + 16.0,
            last.0.format("%H:%M UTC")
        );
    }
    svg + "</svg>"
}

/// One run in a [`sparkline`].
#[derive(Debug, Clone, PartialEq)]
pub struct SparkRun {
    pub started_at: DateTime<Utc>,
    /// Seconds the run took (0 while it runs or when it was skipped).
    pub seconds: f64,
    pub items: i64,
    pub outcome: Outcome,
}

/// The colour class of an outcome: `ok` (succeeded), `failed` (failed or
/// aborted), `skipped` (lock held or paused), `running`.
fn outcome_class(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "ok",
        Outcome::Failed | Outcome::Aborted => "failed",
        Outcome::Running => "running",
        Outcome::SkippedLocked | Outcome::SkippedPaused => "skipped",
    }
}

/// A job's last runs, oldest left: one bar per run, its height the
/// duration, its colour class the outcome ([`outcome_class`]), and a line
/// through the items each run handled (own scale); each bar's tooltip
/// names the start, outcome, duration and items. `runs` newest first, as
/// JOB_RUN is read.
pub fn sparkline(id: &str, title: &str, runs: &[SparkRun]) -> String {
    const W: f64 = 300.0;
    const H: f64 = 40.0;
    let n = runs.len().max(1) as f64;
    let slot = W / n;
    let max_s = runs.iter().map(|r| r.seconds).fold(0.0_f64, f64::max);
    let max_items = runs.iter().map(|r| r.items).max().unwrap_or(0) as f64;
    let mut svg = format!(
        "<svg id=\"{}\" class=\"sparkline\" viewBox=\"0 0 {W} {}\" role=\"img\" aria-labelledby=\"{}-title\">\
         <title id=\"{}-title\">{}</title>",
        escape(id),
        H + 12.0,
        escape(id),
        escape(id),
        escape(title)
    );
    let mut line = Vec::new();
    for (i, r) in runs.iter().rev().enumerate() {
        // A skipped or instant run still shows as a sliver in its colour.
        let h = if max_s > 0.0 {
            (r.seconds / max_s * (H - 2.0)).max(2.0)
        } else {
            2.0
        };
        let x = i as f64 * slot;
        svg += &format!(
            "<rect class=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\">\
             <title>{} {}: {:.3} s, {} item(s)</title></rect>",
            outcome_class(r.outcome),
            x + 0.5,
            H - h,
            (slot - 1.0).max(1.0),
            h,
            r.started_at.format("%Y-%m-%d %H:%M:%S"),
            r.outcome,
            r.seconds,
            r.items
        );
        let y = if max_items > 0.0 {
            H - r.items as f64 / max_items * (H - 2.0)
        } else {
            H
        };
        line.push(format!("{:.1},{:.1}", x + slot / 2.0, y));
    }
    if line.len() > 1 {
        svg += &format!("<polyline class=\"items\" points=\"{}\"/>", line.join(" "));
    }
    svg += &format!(
        "<text x=\"0\" y=\"{}\" class=\"label\">max {} s, {} item(s)</text>",
        H + 11.0,
        format_value(max_s),
        format_value(max_items)
    );
    svg + "</svg>"
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn empty_buckets_are_zero_and_values_land_in_their_hour() {
        let t = |h, m| {
            Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0)
                .single()
                .expect("valid")
        };
        let points = fill_buckets(t(6, 30), t(8, 10), Duration::hours(1), &[(t(7, 0), 5.0)]);
        let values: Vec<f64> = points.iter().map(|p| p.1).collect();
        assert_eq!(values, [0.0, 5.0, 0.0]);
        assert!(values[0].is_sign_positive(), "no \"-0\" on the page");
        assert_eq!(points[0].0, t(6, 0));
        let svg = bars("c", "Throughput <x>", "msg", &points);
        assert!(svg.starts_with("<svg id=\"c\""), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("Throughput &lt;x&gt;"), "{svg}");
        assert!(!bars("e", "t", "u", &[]).contains("<rect"));
    }

    #[test]
    fn a_sparkline_draws_each_run_oldest_left_coloured_by_outcome() {
        let at = |m| {
            Utc.with_ymd_and_hms(2026, 12, 6, 12, m, 0)
                .single()
                .expect("valid")
        };
        let run = |m, seconds, items, outcome| SparkRun {
            started_at: at(m),
            seconds,
            items,
            outcome,
        };
        // Newest first, as read.
        let runs = [
            run(3, 0.0, 0, Outcome::SkippedPaused),
            run(2, 4.0, 10, Outcome::Failed),
            run(1, 2.0, 5, Outcome::Succeeded),
        ];
        let svg = sparkline("spark-x", "x <runs>", &runs);
        assert_eq!(svg.matches("<rect").count(), 3, "{svg}");
        let ok = svg.find("class=\"ok\"").expect("ok bar");
        let failed = svg.find("class=\"failed\"").expect("failed bar");
        let skipped = svg.find("class=\"skipped\"").expect("skipped bar");
        assert!(ok < failed && failed < skipped, "oldest left: {svg}");
        assert!(svg.contains("FAILED: 4.000 s, 10 item(s)"), "{svg}");
        assert!(svg.contains("<polyline class=\"items\""), "{svg}");
        assert!(svg.contains("x &lt;runs&gt;"), "{svg}");
        // The longest run is full height; the skipped one a sliver.
        assert!(svg.contains("y=\"2.0\" width"), "{svg}");
        assert!(!sparkline("e", "t", &[]).contains("<rect"));
    }
}
