//! The observability pack in `deploy/observability/` (issue 21 item 5): the
//! Grafana dashboard and the alert rules may only query metrics and labels
//! msgx really exports (docs/metrics.md, `prometheus::CATALOG`), every
//! alert's `runbook_url` must land on its own heading in docs/operations.md,
//! and the rules must pass `promtool check rules` and their unit tests
//! (`promtool test rules`). No services needed.

use msgx::prometheus::{CATALOG, Kind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const DASHBOARD: &str = include_str!("../../deploy/observability/grafana-dashboard.json");
const ALERTS: &str = include_str!("../../deploy/observability/alerts.yml");
const ALERT_TESTS: &str = include_str!("../../deploy/observability/alerts.test.yml");
const METRICS_DOC: &str = include_str!("../../docs/metrics.md");
const OPERATIONS_DOC: &str = include_str!("../../docs/operations.md");
const PACK_README: &str = include_str!("../../deploy/observability/README.md");

/// Labels Prometheus attaches to every scraped series. msgx's own `job` label
/// collides with the target's and arrives as `exported_job` (alerts.yml).
const TARGET_LABELS: &[&str] = &["job", "instance"];

// ---------------------------------------------------------------------------
// PromQL references

/// The metric names and label names one PromQL expression uses.
#[derive(Debug, Default, PartialEq, Eq)]
struct Refs {
    /// `(metric, labels in its own {…} matcher)`.
    selectors: Vec<(String, BTreeSet<String>)>,
    /// Labels of `by`, `without`, `on`, `ignoring`, `group_left/right` lists.
    grouping: BTreeSet<String>,
}

const GROUPING_KEYWORDS: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];
const OPERATOR_KEYWORDS: &[&str] = &["and", "or", "unless", "bool", "offset", "inf", "nan"];
/// Aggregations: followed by `(` or by a `by`/`without` clause.
const AGGREGATIONS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Extracts the references of a PromQL expression (Grafana's `$variables`
/// allowed): an identifier that is no keyword and not followed by `(` (a
/// function or an aggregation) is a metric name; identifiers inside `{…}`
/// and inside a grouping keyword's `(…)` are label names; strings, numbers
/// and `[…]` ranges are skipped.
fn promql_refs(expr: &str) -> Refs {
    let chars: Vec<char> = expr.chars().collect();
    let mut refs = Refs::default();
    let mut i = 0;
    let skip_ws = |mut j: usize| {
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        j
    };
    let read_ident = |mut j: usize| {
        let start = j;
        while j < chars.len() && is_ident(chars[j]) {
            j += 1;
        }
        (chars[start..j].iter().collect::<String>(), j)
    };
    let skip_string = |j: usize| {
        let quote = chars[j];
        let mut k = j + 1;
        while k < chars.len() && chars[k] != quote {
            if chars[k] == '\\' {
                k += 1;
            }
            k += 1;
        }
        k + 1
    };
    // The label names of a `{…}` matcher or a `(…)` list starting at `j`.
    let label_list = |j: usize, close: char| {
        let mut labels = BTreeSet::new();
        let mut k = j + 1;
        while k < chars.len() && chars[k] != close {
            let c = chars[k];
            if c == '"' || c == '\'' || c == '`' {
                k = skip_string(k);
            } else if is_ident_start(c) {
                let (name, next) = read_ident(k);
                labels.insert(name);
                k = next;
            } else {
                k += 1;
            }
        }
        (labels, k + 1)
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(i);
        } else if c == '[' {
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
            i += 1;
        } else if c == '$' {
            // a Grafana variable: $name or ${name}
            i += 1;
            while i < chars.len() && (is_ident(chars[i]) || "{}".contains(chars[i])) {
                i += 1;
            }
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            // a number or a duration (1e3, 0.99, 5m)
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c == '{' {
            // a selector without a name: {__name__="…"} is not used here
            let (labels, next) = label_list(i, '}');
            refs.selectors.push((String::new(), labels));
            i = next;
        } else if is_ident_start(c) {
            let (name, next) = read_ident(i);
            let after = skip_ws(next);
            let lower = name.to_ascii_lowercase();
            if GROUPING_KEYWORDS.contains(&lower.as_str()) {
                if chars.get(after) == Some(&'(') {
                    let (labels, end) = label_list(after, ')');
                    refs.grouping.extend(labels);
                    i = end;
                } else {
                    i = next;
                }
            } else if OPERATOR_KEYWORDS.contains(&lower.as_str())
                || AGGREGATIONS.contains(&lower.as_str())
                || chars.get(after) == Some(&'(')
            {
                i = next;
            } else if chars.get(after) == Some(&'{') {
                let (labels, end) = label_list(after, '}');
                refs.selectors.push((name, labels));
                i = end;
            } else {
                refs.selectors.push((name, BTreeSet::new()));
                i = next;
            }
        } else {
            i += 1;
        }
    }
    refs
}

// ---------------------------------------------------------------------------
// What msgx exports

/// The metric names documented in docs/metrics.md (the first cell of each
/// metric table row; `prometheus.rs` keeps that table equal to CATALOG).
fn documented_metrics() -> BTreeSet<String> {
    METRICS_DOC
        .lines()
        .filter_map(|l| l.strip_prefix("| `msgx_"))
        .filter_map(|rest| rest.split('`').next())
        .map(|name| format!("msgx_{name}"))
        .collect()
}

/// The problems of one expression: metrics not documented, labels the
/// metric does not carry. A histogram's `_bucket`/`_sum`/`_count` series
/// count as the histogram, `le` as one of a bucket's labels.
fn problems(expr: &str, documented: &BTreeSet<String>) -> Vec<String> {
    let refs = promql_refs(expr);
    let mut out = Vec::new();
    let mut all_labels: BTreeSet<String> = TARGET_LABELS.iter().map(|s| s.to_string()).collect();
    for (name, labels) in &refs.selectors {
        let (base, bucket) = histogram_base(name);
        if !documented.contains(base) {
            out.push(format!("metric {name} is not in docs/metrics.md"));
            continue;
        }
        let mut allowed: BTreeSet<String> = TARGET_LABELS.iter().map(|s| s.to_string()).collect();
        if let Some(spec) = CATALOG.iter().find(|s| s.name == base) {
            for label in spec.labels {
                allowed.insert((*label).to_string());
                if *label == "job" {
                    allowed.insert("exported_job".to_string());
                }
            }
        } else {
            out.push(format!("metric {base} is documented but not in CATALOG"));
        }
        if bucket {
            allowed.insert("le".to_string());
        }
        for label in labels.difference(&allowed) {
            out.push(format!("{name} has no label {label}"));
        }
        all_labels.extend(allowed);
    }
    for label in refs.grouping.difference(&all_labels) {
        out.push(format!("grouping label {label} is on none of the metrics"));
    }
    out
}

/// `(the histogram's name, whether it is its _bucket series)` for a series
/// name of a documented histogram, else `(name, false)`.
fn histogram_base(name: &str) -> (&str, bool) {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix)
            && CATALOG
                .iter()
                .any(|s| s.name == base && s.kind == Kind::Histogram)
        {
            return (base, suffix == "_bucket");
        }
    }
    (name, false)
}

// ---------------------------------------------------------------------------
// The dashboard

/// Every query of the dashboard: `(where, PromQL)`, the panels' targets and
/// the selectors of the template variables' `label_values(…)`.
fn dashboard_queries(dash: &serde_json::Value) -> Vec<(String, String)> {
    fn panels(list: &serde_json::Value, out: &mut Vec<(String, String)>) {
        for panel in list.as_array().into_iter().flatten() {
            let title = panel["title"].as_str().unwrap_or("?");
            for target in panel["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = target["expr"].as_str() {
                    out.push((format!("panel {title:?}"), expr.to_string()));
                }
            }
            panels(&panel["panels"], out);
        }
    }
    let mut out = Vec::new();
    panels(&dash["panels"], &mut out);
    for var in dash["templating"]["list"].as_array().into_iter().flatten() {
        let name = var["name"].as_str().unwrap_or("?");
        let query = var["query"]["query"]
            .as_str()
            .or_else(|| var["query"].as_str())
            .unwrap_or_default();
        let args = query
            .strip_prefix("label_values(")
            .and_then(|q| q.strip_suffix(')'))
            .unwrap_or_else(|| panic!("variable {name}: not a label_values query: {query}"));
        let (selector, label) = args
            .rsplit_once(',')
            .unwrap_or_else(|| panic!("variable {name}: label_values without a metric"));
        // `metric{…}` by `label`, checked as one selector.
        let as_expr = match selector.trim().strip_suffix('}') {
            Some(open) => format!("{open},{}=\"\"}}", label.trim()),
            None => format!("{}{{{}=\"\"}}", selector.trim(), label.trim()),
        };
        out.push((format!("variable {name}"), as_expr));
    }
    out
}

#[test]
fn the_dashboard_is_an_importable_grafana_dashboard() {
    let dash: serde_json::Value = serde_json::from_str(DASHBOARD).expect("dashboard JSON");
    let inputs = dash["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs
            .iter()
            .any(|i| i["name"] == "DS_PROMETHEUS" && i["pluginId"] == "prometheus"),
        "a DS_PROMETHEUS datasource input"
    );
    assert!(dash["schemaVersion"].as_u64().unwrap_or(0) >= 38);
    assert_eq!(dash["uid"], "msgx-overview", "a stable dashboard uid");
    let vars: BTreeSet<&str> = dash["templating"]["list"]
        .as_array()
        .expect("templating")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for var in ["job", "instance"] {
        assert!(vars.contains(var), "template variable {var}");
    }
    let mut ids = BTreeSet::new();
    let mut rows = Vec::new();
    for panel in dash["panels"].as_array().expect("panels") {
        let id = panel["id"].as_u64().expect("every panel has an id");
        assert!(ids.insert(id), "panel id {id} used twice");
        let grid = &panel["gridPos"];
        let (x, w) = (grid["x"].as_u64(), grid["w"].as_u64());
        assert!(
            matches!((x, w), (Some(x), Some(w)) if x + w <= 24),
            "panel {id} outside the 24-column grid"
        );
        if panel["type"] == "row" {
            rows.push(panel["title"].as_str().unwrap_or_default().to_string());
            continue;
        }
        for target in panel["targets"].as_array().expect("targets") {
            assert_eq!(
                target["datasource"]["uid"], "${DS_PROMETHEUS}",
                "panel {id} queries the input datasource"
            );
        }
    }
    for row in [
        "Throughput",
        "Lag",
        "Holes",
        "DEAD",
        "Outbox",
        "Backfill",
        "Jobs",
        "End-to-end latency",
    ] {
        assert!(rows.iter().any(|r| r == row), "a {row:?} row");
    }
}

#[test]
fn the_dashboard_queries_only_documented_metrics_and_labels() {
    let dash: serde_json::Value = serde_json::from_str(DASHBOARD).expect("dashboard JSON");
    let documented = documented_metrics();
    let queries = dashboard_queries(&dash);
    assert!(queries.len() > 40, "found only {} queries", queries.len());
    let mut used = BTreeSet::new();
    let mut bad = Vec::new();
    for (place, expr) in &queries {
        for (name, _) in promql_refs(expr).selectors {
            used.insert(histogram_base(&name).0.to_string());
        }
        bad.extend(
            problems(expr, &documented)
                .into_iter()
                .map(|p| format!("{place}: {p}")),
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    for name in [
        "msgx_pipeline_messages_processed_total",
        "msgx_ingest_watermark_lag_ids",
        "msgx_ingest_hole_open_seconds",
        "msgx_outbox_oldest_unsent_seconds",
        "msgx_backfill_overdue",
        "msgx_job_duration_seconds",
        "msgx_pipeline_end_to_end_seconds",
        "msgx_instance_lock_held",
    ] {
        assert!(used.contains(name), "the dashboard shows {name}");
    }
}

// ---------------------------------------------------------------------------
// The alert rules

/// One alerting rule of alerts.yml.
#[derive(Debug, Default)]
struct Rule {
    alert: String,
    expr: String,
    severity: String,
    summary: String,
    description: String,
    runbook_url: String,
}

/// The rules of alerts.yml, read line by line: the file keeps to one shape
/// (`- alert:` opens a rule; `expr:` is one line or a `|` block; the other
/// keys are one line each). `promtool check rules` reads it in full, and the
/// promtool test compares its rule count with this one.
fn alert_rules() -> Vec<Rule> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut block: Option<usize> = None; // indent of an `expr: |` key
    for line in ALERTS.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if let Some(key_indent) = block {
            if text.is_empty() || indent > key_indent {
                let rule = rules.last_mut().expect("expr inside a rule");
                rule.expr.push_str(text);
                rule.expr.push('\n');
                continue;
            }
            block = None;
        }
        if let Some(name) = text.strip_prefix("- alert:") {
            rules.push(Rule {
                alert: name.trim().to_string(),
                ..Rule::default()
            });
            continue;
        }
        let Some(rule) = rules.last_mut() else {
            continue;
        };
        let Some((key, value)) = text.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_string();
        match key {
            "expr" if value.starts_with('|') || value.starts_with('>') => block = Some(indent),
            "expr" => rule.expr = value,
            "severity" => rule.severity = value,
            "summary" => rule.summary = value,
            "description" => rule.description = value,
            "runbook_url" => rule.runbook_url = value,
            _ => {}
        }
    }
    rules
}

#[test]
fn every_alert_queries_documented_metrics_and_is_complete() {
    let rules = alert_rules();
    assert!(rules.len() >= 20, "found only {} rules", rules.len());
    let documented = documented_metrics();
    let mut names = BTreeSet::new();
    let mut bad = Vec::new();
    for rule in &rules {
        assert!(names.insert(rule.alert.as_str()), "{} twice", rule.alert);
        assert!(!rule.expr.trim().is_empty(), "{}: no expr", rule.alert);
        assert!(
            ["critical", "warning", "info"].contains(&rule.severity.as_str()),
            "{}: severity {:?}",
            rule.alert,
            rule.severity
        );
        assert!(!rule.summary.is_empty(), "{}: no summary", rule.alert);
        assert!(
            !rule.description.is_empty(),
            "{}: no description",
            rule.alert
        );
        bad.extend(
            problems(&rule.expr, &documented)
                .into_iter()
                .map(|p| format!("{}: {p}", rule.alert)),
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The issue's list (issue 21 item 5).
    for alert in [
        "MsgxIngestStalled",
        "MsgxProcessingStalled",
        "MsgxHoleOpenTooLong",
        "MsgxDeadMessagesRising",
        "MsgxOutboxLag",
        "MsgxBackfillOverdue",
        "MsgxBackfillAbandoned",
        "MsgxNoActiveInstance",
        "MsgxPipelineJobNotRunning",
        "MsgxEndToEndLatencyHigh",
    ] {
        assert!(names.contains(alert), "an alert {alert}");
    }
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_`
/// kept, spaces to `-`, everything else dropped; a repeated slug gets `-1`,
/// `-2`, ….
fn github_slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of every heading of a Markdown text (code fences skipped).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(heading) = (!fenced)
            .then(|| line.trim_start_matches('#'))
            .filter(|rest| rest.len() < line.len() && rest.starts_with(' '))
        else {
            continue;
        };
        let slug = github_slug(heading);
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn github_slugs_match_the_headings_github_renders() {
    assert_eq!(
        github_slug(" 4.5 Backlog rows that will not be processed: `msgx skip`"),
        "45-backlog-rows-that-will-not-be-processed-msgx-skip"
    );
    assert_eq!(github_slug(" MsgxIngestStalled"), "msgxingeststalled");
    let doc = "# A\n```sh\n# not a heading\n```\n## Same\n## Same\n#no-space\n";
    let got = anchors(doc);
    let want: BTreeSet<String> = ["a", "same", "same-1"].map(String::from).into();
    assert_eq!(got, want);
}

#[test]
fn every_runbook_url_lands_on_its_own_heading_in_operations_md() {
    let headings = anchors(OPERATIONS_DOC);
    assert!(headings.contains("8-runbooks"), "a Runbooks section");
    for rule in alert_rules() {
        let (page, anchor) = rule
            .runbook_url
            .split_once('#')
            .unwrap_or_else(|| panic!("{}: runbook_url without an anchor", rule.alert));
        assert!(
            page.ends_with("docs/operations.md"),
            "{}: runbook_url {} is not docs/operations.md",
            rule.alert,
            rule.runbook_url
        );
        assert_eq!(
            anchor,
            rule.alert.to_lowercase(),
            "{}: one runbook subsection per alert, named after it",
            rule.alert
        );
        assert!(
            headings.contains(anchor),
            "{}: docs/operations.md has no heading #{anchor}",
            rule.alert
        );
    }
}

#[test]
fn the_pack_readme_lists_every_alert_with_its_runbook() {
    for rule in alert_rules() {
        let link = format!(
            "[{}](../../docs/operations.md#{})",
            rule.alert,
            rule.alert.to_lowercase()
        );
        assert!(
            PACK_README.contains(&format!("| {link} | {} |", rule.severity)),
            "deploy/observability/README.md: no line `| {link} | {} | …`",
            rule.severity
        );
    }
}

#[test]
fn every_alert_has_a_firing_and_a_healthy_unit_test() {
    let mut firing = BTreeSet::new();
    let mut healthy = BTreeSet::new();
    let mut lines = ALERT_TESTS.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("alertname:") else {
            continue;
        };
        match lines.next() {
            Some("exp_alerts: []") => healthy.insert(name.trim()),
            Some("exp_alerts:") => firing.insert(name.trim()),
            other => panic!("alertname {name} followed by {other:?}"),
        };
    }
    for rule in alert_rules() {
        assert!(
            firing.contains(rule.alert.as_str()),
            "{}: no test where it fires",
            rule.alert
        );
        assert!(
            healthy.contains(rule.alert.as_str()),
            "{}: no test where it stays silent",
            rule.alert
        );
    }
}

// ---------------------------------------------------------------------------
// The extractor itself: a misspelled metric or label must be caught

#[test]
fn the_extractor_finds_metrics_labels_and_ignores_functions_and_variables() {
    let refs = promql_refs(
        r#"histogram_quantile(0.99, sum by (job, le) (rate(msgx_pipeline_end_to_end_seconds_bucket{job=~"$job",instance=~"${instance}"}[$__rate_interval]))) > 1
           unless on (job) time() - max without (instance) (msgx_job_last_success_timestamp_seconds{exported_job="a|b"}) > 3 * 3600
           or absent(msgx_instance_lock_held)"#,
    );
    let names: Vec<&str> = refs.selectors.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "msgx_pipeline_end_to_end_seconds_bucket",
            "msgx_job_last_success_timestamp_seconds",
            "msgx_instance_lock_held"
        ]
    );
    assert_eq!(
        refs.selectors[0].1,
        ["instance", "job"].map(String::from).into()
    );
    assert_eq!(
        refs.selectors[1].1,
        ["exported_job"].map(String::from).into()
    );
    assert_eq!(
        refs.grouping,
        ["instance", "job", "le"].map(String::from).into()
    );
}

#[test]
fn a_misspelled_metric_or_label_is_a_problem() {
    let documented = documented_metrics();
    let good =
        r#"sum by (outcome) (rate(msgx_pipeline_messages_processed_total{outcome="dead"}[5m]))"#;
    assert_eq!(problems(good, &documented), Vec::<String>::new());
    let misspelled = r#"sum(rate(msgx_pipeline_mesages_processed_total[5m]))"#;
    assert_eq!(
        problems(misspelled, &documented),
        ["metric msgx_pipeline_mesages_processed_total is not in docs/metrics.md"]
    );
    let bad_label = r#"sum(rate(msgx_pipeline_messages_processed_total{outcom="dead"}[5m]))"#;
    assert_eq!(
        problems(bad_label, &documented),
        ["msgx_pipeline_messages_processed_total has no label outcom"]
    );
    let bad_grouping = r#"sum by (error_clas) (rate(msgx_pipeline_messages_processed_total[5m]))"#;
    assert_eq!(
        problems(bad_grouping, &documented),
        ["grouping label error_clas is on none of the metrics"]
    );
    // `le` only on a histogram's buckets; `_bucket` only of a histogram.
    assert_eq!(
        problems("msgx_ingest_watermark_bucket", &documented),
        ["metric msgx_ingest_watermark_bucket is not in docs/metrics.md"]
    );
    assert_eq!(
        problems(r#"msgx_job_duration_seconds_count{le="1"}"#, &documented),
        ["msgx_job_duration_seconds_count has no label le"]
    );
}

// ---------------------------------------------------------------------------
// promtool

/// Runs promtool with `args` in the project directory: `None` when promtool
/// is not installed (scripts/services.sh installs it; under `CI` its absence
/// is a failure).
fn promtool(args: &[&str]) -> Option<std::process::Output> {
    match Command::new("promtool")
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
    {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("CI").is_none(),
                "promtool is not installed (scripts/services.sh installs it)"
            );
            eprintln!("SKIPPED: promtool is not installed (run scripts/services.sh)");
            None
        }
        Err(e) => panic!("cannot run promtool: {e}"),
    }
}

fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn promtool_accepts_the_rules_and_their_unit_tests_pass() {
    let Some(check) = promtool(&["check", "rules", "deploy/observability/alerts.yml"]) else {
        return;
    };
    let text = output_text(&check);
    assert!(check.status.success(), "promtool check rules:\n{text}");
    let found = format!("SUCCESS: {} rules found", alert_rules().len());
    assert!(
        text.contains(&found),
        "promtool and this test's reader disagree on the rules (want {found:?}):\n{text}"
    );
    let Some(test) = promtool(&["test", "rules", "deploy/observability/alerts.test.yml"]) else {
        return;
    };
    assert!(
        test.status.success(),
        "promtool test rules:\n{}",
        output_text(&test)
    );
}
