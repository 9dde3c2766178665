//! Small server-rendered SVG bar charts for the Overview:
//! no script, no chart library, readable without JavaScript. Pure.

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
}
