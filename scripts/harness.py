#!/usr/bin/env python3
"""Benchmark arithmetic and helpers of the resilience harnesses (docs/RESILIENCE.md).

Python 3 standard library only; PostgreSQL through `psql`, Kafka through
`msgx tail`.

  harness.py watch-w   --pg URL --out FILE             sample W every 0.5 s (until killed)
  harness.py latency   --msgx BIN --out FILE [--config FILE]
                                                       consume the msg topic (until killed)
  harness.py latency-report --feed-log FILE… --recv-log FILE [--rate R] [--skip-first-s S]
  harness.py burst-catch-up --pg URL --feed-log FILE… --expect N
                                                       after the burst, poll every 0.1 s until it is out
  harness.py consumer-delay --pg URL --recv-log FILE…  receipt − SENT per message (what the consumer adds)
  harness.py idle-report --seconds S --pg-log F --pg-db DB --pg-range A:B
                         --my-log F --my-db DB --my-range A:B
                                                       statements per second of the daemon's sessions
  harness.py latency-tables --run NAME=SCHEDULE=FILE…  bench-latency.sh's report (ratios of two runs)
  harness.py tls-proxy --listen PORT --upstream PORT --cert FILE --key FILE
                                                       TLS in front of a plaintext broker (until killed)

The checks are hidden commands of the binary, on the typed lifecycle
(src/domain/run_compare.rs, src/commands/dev.rs): `msgx dev drained`,
`snapshot` and `compare-runs` (scripts/chaos.sh), `compare-runs
--after-rollback` and `purge-report` (scripts/failover.sh), `caught-up` and
`verify` (scripts/soak.sh), `broker-verify` (scripts/real-broker.sh).
"""

import argparse
from collections import Counter
import json
import os
import re
import signal
import subprocess
import sys
import time


# ----------------------------------------------------------------- access --


def psql(url, sql):
    """Rows of one query, one string per row (`psql -tAX`)."""
    out = subprocess.run(
        ["psql", url, "-qtAX", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line for line in out.splitlines() if line != ""]


# ----------------------------------------------------------------- watch-w --


def cmd_watch_w(a):
    """Samples W twice a second; an unreachable database is skipped."""
    with open(a.out, "a", buffering=1) as f:
        while True:
            try:
                rows = psql(a.pg, "SELECT w FROM inbox_cursor")
                if rows:
                    f.write(f"{time.time():.3f} {rows[0]}\n")
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.5)


# ---------------------------------------------------------------- latency --


def cmd_latency(a):
    """Follows the msg topic; writes `receive_time msg_id` per record.

    `--config` gives `msgx tail` its own configuration (bench-latency.sh: a
    low `fetch.wait.max.ms`): librdkafka's mock cluster answers an empty fetch
    only after the consumer's whole `fetch.wait.max.ms` (500 ms by default) and
    does not cut the wait short when a record arrives, so a default consumer
    adds up to half a second to every figure (issue 20, item 4)."""
    env = None
    if a.config:
        env = dict(os.environ, MSGX_CONFIG=a.config)
    proc = subprocess.Popen([a.msgx, "tail", "msg", "--follow", "--json"],
                            stdout=subprocess.PIPE, text=True, bufsize=1, env=env)

    def stop(*_):
        proc.terminate()
        proc.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    with open(a.out, "a", buffering=1) as out:
        for line in proc.stdout:
            now = time.time()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r["value"] is None:
                continue
            out.write(f"{now:.6f} {json.loads(r['value'])['msg_id']}\n")
    return 0


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(p / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[i]


def read_feed(path):
    """A feed log (`msgx mailbox generate --rate`: `commit_time mailbox_id`
    per insert, 0 for a hole) as a list of (time, id)."""
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                rows.append((float(parts[0]), int(parts[1])))
    return rows


def read_receipts(path):
    """A receipt log (`harness.py latency`: `receive_time msg_id` per record)
    as {msg_id: first receipt time}."""
    received = {}
    with open(path) as f:
        for line in f:
            t, mid = line.split()
            received.setdefault(int(mid), float(t))
    return received


def feed_stats(feeds, rate):
    """How well the feeders kept the requested total `rate`: the achieved
    rate over the whole phase, and the furthest any insert fell behind its
    feeder's schedule (each of the k feeders runs at rate / k from its first
    insert). The generator catches up after a slow insert instead of
    dropping messages, so a lag here means the mailbox could not take the rate."""
    times = sorted(t for rows in feeds for t, _ in rows)
    out = {"feeders": len(feeds)}
    if len(times) >= 2 and times[-1] > times[0]:
        out["feed_rate"] = round((len(times) - 1) / (times[-1] - times[0]), 1)
    if rate:
        period = len(feeds) / rate
        lag = max((t - rows[0][0] - i * period for rows in feeds for i, (t, _) in enumerate(rows)),
                  default=0.0)
        out["feed_max_lag_s"] = round(lag, 3)
    return out


def cmd_latency_report(a):
    """Insert (feed logs: `insert_time msg_id`) → first receipt per message,
    plus how well the feed kept its rate and, for a burst, how long after the
    last insert the last message arrived (the consumer's view of catch-up)."""
    feeds = [read_feed(p) for p in a.feed_log]
    inserted = {m: t for rows in feeds for t, m in rows if m}
    received = read_receipts(a.recv_log)
    start = min(inserted.values()) if inserted else 0
    lat = sorted(received[m] - t for m, t in inserted.items()
                 if m in received and t - start >= a.skip_first_s)
    missing = sum(1 for m in inserted if m not in received)
    result = {"inserted": len(inserted), "measured": len(lat), "without_event": missing,
              "p50_s": round(percentile(lat, 50), 4), "p99_s": round(percentile(lat, 99), 4),
              "max_s": round(lat[-1], 4) if lat else None}
    result.update(feed_stats(feeds, a.rate))
    if inserted:
        last_insert = max(inserted.values())
        result["first_id"], result["last_id"] = min(inserted), max(inserted)
        result["last_insert"] = round(last_insert, 6)
        got = [received[m] for m in inserted if m in received]
        if got:
            result["last_receipt_after_last_insert_s"] = round(max(got) - last_insert, 3)
    print("latency: " + json.dumps(result))
    return 0


def cmd_consumer_delay(a):
    """What the measuring consumer adds: per message, its first receipt −
    the moment dispatch-msg recorded its msg event SENT (after the broker's
    acknowledgement; same host clock). A consumer that gets a record as soon
    as the broker has it shows a few milliseconds (its fetch round trip,
    against the ack and the SENT update); one waiting out fetch.wait.max.ms
    on the mock cluster shows up to that wait."""
    sent = {int(m): float(t) for m, t in (r.split("|") for r in psql(a.pg, """
        SELECT msg_id, extract(epoch FROM min(sent_at)) FROM msg_event
         WHERE target = 'KAFKA:msg' AND status = 'SENT' AND msg_id IS NOT NULL GROUP BY msg_id"""))}
    out = {}
    for path in a.recv_log:
        received = read_receipts(path)
        d = sorted(t - sent[m] for m, t in received.items() if m in sent)
        out[os.path.basename(path)] = {"messages": len(d), "p50_s": round(percentile(d, 50), 3),
                                       "p99_s": round(percentile(d, 99), 3),
                                       "max_s": round(d[-1], 3) if d else None}
    print("consumer-delay: " + json.dumps(out))
    return 0


def cmd_stages(a):
    """Where a message's time goes (issue 38 item 5): per message, the
    stretches between the timestamps the pipeline already records, each
    on the host clock the feed and the consumer use —
      poll + read   insert commit → PROC_STATE.ENQUEUED_AT (ingest's round
                    time: the mailbox poll's wait and the read),
      ingest → pump ENQUEUED_AT → FINISHED_AT (ingest's transaction and
                    commit, the hand-off, the pump's head read, raw read,
                    decode and decision),
      pump → SENT   FINISHED_AT → the msg event's SENT_AT (the pump's writes
                    and commit, the hand-off, dispatch's read, the produce
                    and the broker's acks=all acknowledgement),
      SENT → receipt  SENT_AT → first receipt (dispatch's SENT update, the
                    broker, the measuring consumer's fetch).
    The stretches add up to the latency per message; their p50/p99 do not
    add up (each is its own distribution). A stretch's end is the time a
    stage took before its commit, so a commit's own duration lands in the
    stretch after it."""
    feeds = [read_feed(p) for p in a.feed_log]
    inserted = {m: t for rows in feeds for t, m in rows if m}
    received = read_receipts(a.recv_log)
    if not inserted:
        print("stages: {}")
        return 0
    lo, hi = min(inserted), max(inserted)
    rows = psql(a.pg, f"""
        SELECT p.msg_id, extract(epoch FROM p.enqueued_at), extract(epoch FROM p.finished_at),
               extract(epoch FROM min(e.sent_at))
          FROM proc_state p JOIN msg_event e ON e.msg_id = p.msg_id AND e.target = 'KAFKA:msg'
         WHERE p.msg_id BETWEEN {lo} AND {hi} AND e.status = 'SENT'
         GROUP BY p.msg_id, p.enqueued_at, p.finished_at""")
    names = ["poll + read", "ingest → pump", "pump → SENT", "SENT → receipt", "total"]
    spans = {n: [] for n in names}
    for r in rows:
        mid, enq, fin, sent = r.split("|")
        mid = int(mid)
        if mid not in inserted or mid not in received or not enq or not fin or not sent:
            continue
        t = [inserted[mid], float(enq), float(fin), float(sent), received[mid]]
        for i, n in enumerate(names[:4]):
            spans[n].append(t[i + 1] - t[i])
        spans["total"].append(t[4] - t[0])
    out = {}
    for n in names:
        v = sorted(spans[n])
        out[n] = {"messages": len(v), "p50_s": round(percentile(v, 50), 4),
                  "p99_s": round(percentile(v, 99), 4),
                  "mean_s": round(sum(v) / len(v), 4) if v else None}
    print("stages: " + json.dumps(out, ensure_ascii=False))
    return 0


class PsqlSession:
    """One `psql` process fed query after query on stdin: polling ten times a
    second must not start a TLS session (and a backend) per poll on a
    two-core machine whose pipeline is being measured."""

    END = "__harness_end__"

    def __init__(self, url):
        self.proc = subprocess.Popen(["psql", url, "-qtAX", "-v", "ON_ERROR_STOP=1"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def query(self, sql):
        self.proc.stdin.write(sql.strip().rstrip(";") + ";\n\\echo " + self.END + "\n")
        self.proc.stdin.flush()
        rows = []
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            if line == self.END:
                return rows
            if line:
                rows.append(line)
        raise RuntimeError(f"psql ended (exit {self.proc.wait()})")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def wait_for_feed(paths, expect, timeout):
    """Follows the feed logs until `expect` inserts are logged; returns
    (time of the last insert, highest mailbox ID). Started with the feeders,
    so that the catch-up poll begins within one interval of the last insert
    (not after the feeders' exit and a new process's start)."""
    files = [open(p) for p in paths]
    last_t, last_id, count, partial = 0.0, 0, 0, [""] * len(files)
    deadline = time.time() + timeout
    try:
        while count < expect:
            for i, f in enumerate(files):
                chunk = f.read()
                if not chunk:
                    continue
                lines = (partial[i] + chunk).split("\n")
                partial[i] = lines.pop()
                for line in lines:
                    parts = line.split()
                    if len(parts) == 2:
                        count += 1
                        last_t, last_id = max(last_t, float(parts[0])), max(last_id, int(parts[1]))
            if count < expect:
                if time.time() > deadline:
                    raise TimeoutError(f"{count} of {expect} inserts logged after {timeout:g} s")
                time.sleep(0.02)
    finally:
        for f in files:
            f.close()
    return last_t, last_id


def cmd_catch_up(a):
    """Follows the burst's feed logs until its --expect inserts are done,
    then polls every --interval s; times from the burst's last insert. Two
    moments: every burst message processed and its KAFKA:msg events SENT (the
    backlog the catch-up target is about: the conditions of `drained`,
    restricted to the msg topic), then everything of `drained` (schd events,
    backfill marks) for those rows. Every condition reads a partial index
    (head, pending, backfill), so a poll costs next to nothing while the
    pipeline catches up."""
    session = PsqlSession(a.pg)
    left = ""
    try:
        since, upto = wait_for_feed(a.feed_log, a.expect, a.feed_timeout)
        sql = f"""
            SELECT (SELECT w FROM inbox_cursor) >= {upto},
                   NOT EXISTS (SELECT 1 FROM proc_state WHERE state IN ('PENDING', 'FAILED')
                                 AND msg_id <= {upto}),
                   NOT EXISTS (SELECT 1 FROM msg_event WHERE status = 'PENDING' AND target = 'KAFKA:msg'
                                 AND msg_id <= {upto}),
                   NOT EXISTS (SELECT 1 FROM msg_event WHERE status = 'PENDING'),
                   NOT EXISTS (SELECT 1 FROM proc_state WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')
                                 AND backfill_at IS NULL AND backfill_abandoned_at IS NULL
                                 AND msg_id <= {upto})"""
        result = {"upto": upto, "polls": 0, "interval_s": a.interval}
        while True:
            now = time.time()
            row = session.query(sql)[0].split("|")
            enqueued, processed, msg_sent, all_sent, marked = (v == "t" for v in row)
            result["polls"] += 1
            result.setdefault("first_poll_s", round(now - since, 3))
            if enqueued and processed and msg_sent:
                result.setdefault("caught_up_s", round(now - since, 3))
                if all_sent and marked:
                    result["drained_s"] = round(now - since, 3)
                    break
            if now - since > a.timeout:
                left = ", ".join(name for name, ok in (
                    ("rows not yet enqueued (W below the burst)", enqueued),
                    ("messages PENDING/FAILED", processed), ("msg events PENDING", msg_sent),
                    ("outbox events PENDING", all_sent), ("backfill marks outstanding", marked)) if not ok)
                result["timeout_s"] = a.timeout
                result["left"] = left
                break
            time.sleep(max(0.0, a.interval - (time.time() - now)))
    except TimeoutError as e:
        result, left = {"left": str(e), "timeout_s": a.timeout}, str(e)
    finally:
        session.close()
    print("burst-catch-up: " + json.dumps(result))
    return 1 if left else 0


# PostgreSQL's default Debian log_line_prefix, '%m [%p] %q%u@%d ': time,
# zone, [pid], user@database, then the level.
PG_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (\S*)@(\S*) "
                         r"([A-Z]+\d?):  (.*)$")
PG_STATEMENT = re.compile(r"^(?:statement: |execute [^:]*: )(.*)$", re.S)
# MariaDB's general log: [YYMMDD HH:MM:SS]\t  thread Command\targument.
MY_LOG_LINE = re.compile(r"^(?:\d{6} [ \d]\d:\d\d:\d\d)?\t+ *(\d+) ([A-Za-z][A-Za-z ]*?)\t(.*)$")


def log_slice(path, start, end):
    """Bytes [start, end) of a log file as text lines."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(max(0, end - start)).decode("utf-8", "replace").splitlines()


def normalize_sql(sql):
    """One line per statement shape: literals → ?, whitespace collapsed."""
    s = re.sub(r"\s+", " ", sql).strip()
    s = re.sub(r"'(?:[^'\\]|\\.|'')*'", "?", s)
    s = re.sub(r"(?<![\w$])-?\d+(?:\.\d+)?\b", "?", s)
    s = re.sub(r"\?(?:\s*,\s*\?)+", "?, …", s)
    return s[:160] + ("…" if len(s) > 160 else "")


def pg_statements(lines, db):
    """The statements the server logged for `db` (log_statement = all): one
    per `statement:` (simple protocol) or `execute …:` (extended) entry, its
    continuation lines (tab-indented) joined."""
    out, current = [], None
    for line in lines:
        if line.startswith("\t") and current is not None:
            current[1] += "\n" + line[1:]
            continue
        if current is not None:
            out.append(current)
            current = None
        m = PG_LOG_LINE.match(line)
        if m and m.group(3) == db and m.group(4) == "LOG":
            s = PG_STATEMENT.match(m.group(5))
            if s:
                current = [m.group(1), s.group(1)]
    if current is not None:
        out.append(current)
    return [(pid, sql) for pid, sql in out]


def my_commands(lines_before, lines, db):
    """The commands MariaDB's general log recorded for the threads connected
    to `db` (a Connect or Change user `… on db`, or an Init DB): only those,
    so that other clients of a shared server and the harness's own status
    query are not counted. Threads are learned from `lines_before` too (the
    daemon's connections are opened before the window)."""
    ours = set()

    def learn(thread, command, arg):
        if command in ("Connect", "Change user"):
            if re.search(rf" on {re.escape(db)}(?: |$)", arg):
                ours.add(thread)
            else:
                ours.discard(thread)
        elif command == "Init DB":
            (ours.add if arg.strip() == db else ours.discard)(thread)

    for line in lines_before:
        m = MY_LOG_LINE.match(line)
        if m:
            learn(m.group(1), m.group(2), m.group(3))
    out, current = [], None
    for line in lines:
        m = MY_LOG_LINE.match(line)
        if not m:
            if current is not None:
                current[2] += "\n" + line
            continue
        if current is not None:
            out.append(current)
        thread, command, arg = m.groups()
        learn(thread, command, arg)
        current = [thread, command, arg] if thread in ours else None
    if current is not None:
        out.append(current)
    return out


def top(counter, seconds, n):
    return [{"per_s": round(c / seconds, 2), "count": c, "statement": k}
            for k, c in counter.most_common(n)]


def parse_range(text):
    a, b = text.split(":")
    return int(a), int(b)


def cmd_idle_report(a):
    """Statements per second of the daemon's sessions over an idle window
    (issue 20, item 4: mailbox ≤ 5/s, PostgreSQL ≤ 10/s), from the byte
    ranges the window spans in PostgreSQL's log (log_statement = all for
    the bench database) and in MariaDB's general log; the top statements."""
    result = {"seconds": a.seconds}
    pg_from, pg_to = parse_range(a.pg_range)
    stmts = pg_statements(log_slice(a.pg_log, pg_from, pg_to), a.pg_db)
    kinds = Counter(normalize_sql(sql) for _, sql in stmts)
    result["pg"] = {"statements": len(stmts), "per_s": round(len(stmts) / a.seconds, 2),
                    "sessions": len({pid for pid, _ in stmts}), "top": top(kinds, a.seconds, a.top)}
    my_from, my_to = parse_range(a.my_range)
    cmds = my_commands(log_slice(a.my_log, 0, my_from), log_slice(a.my_log, my_from, my_to), a.my_db)
    by_command = Counter(c for _, c, _ in cmds)
    # Statements: every command but the connection's own Connect and Quit,
    # as the server's `Questions` counts them (a Prepare is a parse and a
    # round trip of its own); Query + Execute alone beside it.
    lifecycle = {"Connect", "Quit"}
    statements = [(c, arg) for _, c, arg in cmds if c not in lifecycle]
    executed = [c for c, _ in statements if c in ("Query", "Execute")]
    result["mailbox"] = {
        "statements": len(statements), "per_s": round(len(statements) / a.seconds, 2),
        "executed_per_s": round(len(executed) / a.seconds, 2),
        "commands": dict(by_command.most_common()),
        "threads": len({t for t, _, _ in cmds}),
        "top": top(Counter(f"{c}: {normalize_sql(arg)}" for c, arg in statements),
                   a.seconds, a.top),
    }
    print("idle: " + json.dumps(result))
    return 0


def fmt_s(v):
    """Seconds as read: milliseconds below one second (issue 38's targets
    are tens of milliseconds), else seconds."""
    if v is None or v != v:
        return "—"
    return f"{v * 1000:.1f} ms" if abs(v) < 1 else f"{v:.2f} s"


def verdict(value, target):
    if value is None or target is None:
        return "—"
    return f"{value / target:.2f} — {'met' if value <= target else 'not met'}"


def latency_row(r):
    """The rows of one rate or burst phase: latency, then catch-up."""
    name = f"{'burst ' if r['phase'] == 'burst' else ''}{r['rate']:,g}/s, {r['duration_s']} s"
    if r.get("feeders", 1) > 1:
        name += f" ({r['feeders']} inserters)"
    feed = f"{r.get('feed_rate', float('nan')):,.1f}/s, lag ≤ {r.get('feed_max_lag_s', float('nan')):.2f} s"
    target, target50 = r.get("target_p99_s"), r.get("target_p50_s")
    goal = " and ".join(g for g in (f"p50 ≤ {fmt_s(target50)}" if target50 else "",
                                    f"p99 ≤ {fmt_s(target)}" if target else "") if g) or "—"
    result = "; ".join(v for v in (f"p50 {verdict(r['p50_s'], target50)}" if target50 else "",
                                   f"p99 {verdict(r['p99_s'], target)}" if target else "") if v) or "—"
    cells = [name, f"{r['measured']:,} of {r['inserted']:,}", feed, fmt_s(r["p50_s"]), fmt_s(r["p99_s"]),
             fmt_s(r["max_s"]), goal, result, f"{r['load_before']} → {r['load_after']}", floors_cell(r)]
    rows = ["| " + " | ".join(cells) + " |"]
    c = r.get("catch_up")
    if c:
        got, target = c.get("caught_up_s"), r.get("target_catch_up_s")
        extra = [f"first poll {c['first_poll_s']:.2f} s after it" if "first_poll_s" in c else "no poll"]
        if c.get("drained_s") is not None:
            extra.append(f"all drained (schd, marks) {c['drained_s']:.2f} s")
        if r.get("last_receipt_after_last_insert_s") is not None:
            extra.append(f"last receipt {r['last_receipt_after_last_insert_s']:.2f} s")
        if c.get("left"):
            extra.append(f"after {c['timeout_s']:g} s still: {c['left']}")
        result = "not caught up" if got is None else verdict(got, target)
        rows.append(f"| ↳ catch-up: last insert → every message's msg event SENT | | | | {fmt_s(got)} | "
                    f"| {f'≤ {target:g} s' if target else '—'} | {result} | {'; '.join(extra)} | |")
    if r.get("consumer_delay"):
        d = [f"{'default-settings' if 'default' in k else 'measuring'} consumer p50 {fmt_s(v['p50_s'])}, "
             f"p99 {fmt_s(v['p99_s'])}"
             for k, v in sorted(r["consumer_delay"].items(), key=lambda kv: "default" in kv[0])]
        rows.append(f"| ↳ consumer check: receipt − msg event SENT | | | | | | | | {'; '.join(d)} | |")
    for stage, v in (r.get("stages") or {}).items():
        if stage != "total" and v.get("messages"):
            rows.append(f"| ↳ stage {stage} | {v['messages']:,} | | {fmt_s(v['p50_s'])} | {fmt_s(v['p99_s'])} "
                        f"| mean {fmt_s(v['mean_s'])} | | | | |")
    return rows


def floors_cell(r):
    """The machine's floors measured just before the phase (issue 38
    item 4): a slow disk shows here instead of in msgx's figures."""
    f = r.get("floors")
    if not f:
        return "—"
    show = (lambda k, fmt: "?" if f.get(k) is None else fmt.format(f[k]))
    return (f"fsync: open_datasync {show('open_datasync_us', '{:,.0f}')} µs, fdatasync "
            f"{show('fdatasync_us', '{:,.0f}')} µs; MariaDB 1 connection {show('mariadb_commits_per_s', '{:,.0f}')} "
            f"commits/s; pgbench 1 client {show('pgbench_tps', '{:,.0f}')} TPS")


def cmd_latency_tables(a):
    """The report of scripts/bench-latency.sh: per run (schedule) the latency
    table, the idle rates and their top statements; with two runs the ratios
    old / new (issue 20, item 4: the gain as a ratio from one run)."""
    runs = []
    for spec in a.run:
        name, rest = spec.split("=", 1)
        schedule, path = rest.rsplit("=", 1)
        with open(path) as f:
            runs.append((name, schedule, [json.loads(line) for line in f if line.strip()]))
    for name, schedule, phases in runs:
        print(f"\n### {name}: schedule {schedule}\n")
        print("| phase | messages measured | feed (achieved, max lag) | p50 | p99 | max | target | value / target "
              "| load before → after | floors before the phase |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in phases:
            if r["phase"] in ("rate", "burst"):
                for row in latency_row(r):
                    print(row)
        for r in phases:
            if r["phase"] != "idle":
                continue
            m, pg = r["mailbox"], r["pg"]
            print(f"\n| idle {r['seconds']:g} s (daemon restarted, {r['settle_s']} s settle; load "
                  f"{r['load_before']} → {r['load_after']}) | per second | target | per second / target |")
            print("|---|---|---|---|")
            commands = ", ".join(f"{c} {n}" for c, n in m["commands"].items())
            print(f"| mailbox statements (the daemon's connections: {m['threads']}; every command but "
                  f"Connect/Quit: {commands}) | {m['per_s']:.2f} | ≤ {r['target_mailbox_per_s']} "
                  f"| {verdict(m['per_s'], r['target_mailbox_per_s'])} |")
            print(f"| of which Query + Execute | {m['executed_per_s']:.2f} | — | — |")
            print(f"| PostgreSQL statements (the bench database; sessions: {pg['sessions']}) | {pg['per_s']:.2f} "
                  f"| ≤ {r['target_pg_per_s']} | {verdict(pg['per_s'], r['target_pg_per_s'])} |")
            print(f"| MariaDB server-wide `Questions` (every client of the server) "
                  f"| {r['server_questions_per_s']:.2f} | — | — |")
            print("\n| top statements | per second | statement |\n|---|---|---|")
            for server, rows in (("mailbox", m["top"]), ("PostgreSQL", pg["top"])):
                for t in rows:
                    print(f"| {server} | {t['per_s']:.2f} | `{t['statement'].replace('|', '∣')}` |")
    if len(runs) == 2:
        (old, old_s, old_p), (new, new_s, new_p) = sorted(runs, key=lambda r: r[0] != "old")
        print(f"\n### {old} / {new}: the same sequence, schedule {os.path.basename(old_s)} / "
              f"{os.path.basename(new_s)}\n")
        print(f"| figure | {old} | {new} | {old} / {new} |\n|---|---|---|---|")

        def figures(phases):
            out = {}
            for r in phases:
                if r["phase"] == "rate":
                    out[f"p99 at {r['rate']:g}/s"] = r["p99_s"]
                elif r["phase"] == "burst":
                    out[f"p99 of the {r['rate']:,}/s burst"] = r["p99_s"]
                    out["burst catch-up"] = r["catch_up"].get("caught_up_s")
                elif r["phase"] == "idle":
                    out["idle mailbox statements/s"] = r["mailbox"]["per_s"]
                    out["idle PostgreSQL statements/s"] = r["pg"]["per_s"]
            return out

        fo, fn = figures(old_p), figures(new_p)
        for k in fo:
            o, n = fo.get(k), fn.get(k)
            ratio = f"{o / n:.2f}" if o is not None and n else "—"
            unit = "" if "/s" in k and k.startswith("idle") else " s"
            show = (lambda v: "—" if v is None else f"{v:.2f}{unit}")
            print(f"| {k} | {show(o)} | {show(n)} | {ratio} |")
    return 0


# ------------------------------------------------ independent broker (TLS) --


def cmd_tls_proxy(a):
    """TLS-terminating TCP proxy (Python's ssl: the system OpenSSL) to a
    plaintext upstream on 127.0.0.1; one line per handshake on stdout."""
    import asyncio
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(a.cert, a.key)

    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def handle(reader, writer):
        tls = writer.get_extra_info("ssl_object")
        print(f"tls {tls.version() if tls else '?'} {writer.get_extra_info('peername')}", flush=True)
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", a.upstream)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, c: print(f"tls-fail {c.get('exception', c.get('message'))}",
                                                          flush=True))
        server = await asyncio.start_server(handle, "127.0.0.1", a.listen, ssl=ctx)
        print(f"listening 127.0.0.1:{a.listen} → 127.0.0.1:{a.upstream}", flush=True)
        async with server:
            await server.serve_forever()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    asyncio.run(main())
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("watch-w")
    s.add_argument("--pg", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("latency")
    s.add_argument("--msgx", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--config", help="MSGX_CONFIG for `msgx tail` (consumer settings)")
    s = sub.add_parser("latency-report")
    s.add_argument("--feed-log", required=True, action="append", help="one per feeder")
    s.add_argument("--recv-log", required=True)
    s.add_argument("--rate", type=float, help="the requested total rate (feed check)")
    s.add_argument("--skip-first-s", type=float, default=0.0)
    s = sub.add_parser("consumer-delay")
    s.add_argument("--pg", required=True)
    s.add_argument("--recv-log", required=True, action="append")
    s = sub.add_parser("stages")
    s.add_argument("--pg", required=True)
    s.add_argument("--feed-log", action="append", required=True)
    s.add_argument("--recv-log", required=True)
    s = sub.add_parser("burst-catch-up")
    s.add_argument("--pg", required=True)
    s.add_argument("--feed-log", required=True, action="append", help="one per feeder")
    s.add_argument("--expect", type=int, required=True, help="inserts of the burst (all feeders)")
    s.add_argument("--interval", type=float, default=0.1)
    s.add_argument("--timeout", type=float, default=600.0, help="after the last insert")
    s.add_argument("--feed-timeout", type=float, default=3600.0, help="for the inserts")
    s = sub.add_parser("idle-report")
    s.add_argument("--seconds", type=float, required=True)
    s.add_argument("--pg-log", required=True)
    s.add_argument("--pg-db", required=True)
    s.add_argument("--pg-range", required=True, help="START:END byte offsets of the window")
    s.add_argument("--my-log", required=True)
    s.add_argument("--my-db", required=True)
    s.add_argument("--my-range", required=True, help="START:END byte offsets of the window")
    s.add_argument("--top", type=int, default=10)
    s = sub.add_parser("latency-tables")
    s.add_argument("--run", action="append", required=True, help="NAME=SCHEDULE=RESULTS.jsonl")
    s = sub.add_parser("tls-proxy")
    s.add_argument("--listen", type=int, required=True)
    s.add_argument("--upstream", type=int, required=True)
    s.add_argument("--cert", required=True)
    s.add_argument("--key", required=True)
    a = p.parse_args()
    return {"watch-w": cmd_watch_w, "latency": cmd_latency,
            "latency-report": cmd_latency_report, "burst-catch-up": cmd_catch_up,
            "consumer-delay": cmd_consumer_delay, "idle-report": cmd_idle_report,
            "latency-tables": cmd_latency_tables, "stages": cmd_stages,
            "tls-proxy": cmd_tls_proxy}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
