#!/usr/bin/env python3
"""Checks shared by the resilience harnesses (issue 11; docs/RESILIENCE.md).

Python 3 standard library only; PostgreSQL through `psql`, the mailbox through
the `mariadb` client, Kafka through `msgx tail`.

  harness.py drained   --pg URL --mailbox URL          exit 0 when everything is done
  harness.py snapshot  --pg URL --msgx BIN --out FILE  the outcome of one run, as JSON
  harness.py compare   CLEAN.json CHAOS.json           differences → exit 1
  harness.py verify    --pg URL --mailbox URL --msgx BIN [--w-log FILE]
                                                       the soak's invariants → exit 1
  harness.py caught-up --pg URL --mailbox URL --upto ID every row ≤ ID done (0), not yet (1),
                                                       a DEAD/abandonment (3)
  harness.py watch-w   --pg URL --out FILE             sample W every 0.5 s (until killed)
  harness.py latency   --msgx BIN --feed-log FILE --out FILE
                                                       consume the msg topic (until killed)
  harness.py latency-report --feed-log FILE --recv-log FILE [--skip-first-s S]
  harness.py broker-verify --pg URL --mailbox URL --msgx BIN
                                                       the topics on an independent broker → exit 1
  harness.py tls-proxy --listen PORT --upstream PORT --cert FILE --key FILE
                                                       TLS in front of a plaintext broker (until killed)

"Done" (drained): no PENDING/FAILED message, W at the mailbox's last ID, one
PROC_STATE row per mailbox row, every outbox event SENT (or DEAD), every
terminal message's backfill mark confirmed or abandoned.
"""

import argparse
from collections import Counter
import json
import signal
import subprocess
import sys
import time
import urllib.parse

# Clock-derived columns/keys: they differ between two runs of the same input.
CLOCK_KEYS = {"created_at", "updated_at", "archived_at"}


# ----------------------------------------------------------------- access --


def psql(url, sql):
    """Rows of one query, one string per row (`psql -tAX`)."""
    out = subprocess.run(
        ["psql", url, "-qtAX", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line for line in out.splitlines() if line != ""]


def psql_json(url, sql):
    """`SELECT row_to_json(t) FROM (<sql>) t` as dicts."""
    return [json.loads(r) for r in psql(url, f"SELECT row_to_json(t) FROM ({sql}) t")]


def mariadb_args(url):
    u = urllib.parse.urlparse(url)
    args = ["mariadb", "-N", "-B", "-h", u.hostname or "127.0.0.1",
            "-P", str(u.port or 3306), "-u", urllib.parse.unquote(u.username or "")]
    if u.password:
        args.append("-p" + urllib.parse.unquote(u.password))
    args.append(u.path.lstrip("/"))
    return args


def mysql(url, sql):
    out = subprocess.run(mariadb_args(url) + ["-e", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line != ""]


def tail(msgx, topic):
    """Every record of `topic` from the beginning (`msgx tail --json`)."""
    out = subprocess.run(
        [msgx, "tail", topic, "--from-beginning", "--json", "--idle", "5s"],
        check=True, capture_output=True, text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def strip_clock(obj):
    if isinstance(obj, dict):
        return {k: strip_clock(v) for k, v in obj.items() if k not in CLOCK_KEYS}
    if isinstance(obj, list):
        return [strip_clock(v) for v in obj]
    return obj


# ---------------------------------------------------------------- drained --


def drained_problems(pg, mailbox):
    """What is still to do (empty = drained)."""
    mb = mysql(mailbox, "SELECT COUNT(*), COALESCE(MAX(CMINMSGS_ID), 0) FROM cminmsgs")[0]
    rows, max_id = int(mb[0]), int(mb[1])
    q = psql(pg, """
        SELECT (SELECT w FROM inbox_cursor),
               (SELECT count(*) FROM proc_state WHERE state <> 'ARCHIVED'),
               (SELECT count(*) FROM proc_state WHERE state IN ('PENDING', 'FAILED')),
               (SELECT count(*) FROM msg_event WHERE status = 'PENDING'),
               (SELECT count(*) FROM proc_state WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')
                  AND backfill_at IS NULL AND backfill_abandoned_at IS NULL)""")[0].split("|")
    w, ps_rows, open_msgs, pending_events, unmarked = (int(x or 0) for x in q)
    problems = []
    if w < max_id:
        problems.append(f"W {w} < last mailbox ID {max_id}")
    if ps_rows != rows:
        problems.append(f"{ps_rows} PROC_STATE rows for {rows} mailbox rows")
    if open_msgs:
        problems.append(f"{open_msgs} messages PENDING/FAILED")
    if pending_events:
        problems.append(f"{pending_events} outbox events PENDING")
    if unmarked:
        problems.append(f"{unmarked} backfill marks outstanding")
    return problems


def fatal_problems(pg):
    """Outcomes an outage must never cause: a DEAD message that is not
    malformed, a DEAD outbox event, an abandoned backfill mark."""
    out = []
    dead = psql(pg, """SELECT msg_id || ' ' || coalesce(error_class, '') || ' ' || coalesce(last_error, '')
                        FROM proc_state WHERE state = 'DEAD' AND coalesce(error_class, '') <> 'MALFORMED'""")
    if dead:
        out.append(f"{len(dead)} DEAD messages not caused by their content: {dead[:3]}")
    dead_events = int(psql(pg, "SELECT count(*) FROM msg_event WHERE status = 'DEAD'")[0])
    if dead_events:
        out.append(f"{dead_events} DEAD outbox events")
    abandoned = int(psql(pg, "SELECT count(*) FROM proc_state WHERE backfill_abandoned_at IS NOT NULL")[0])
    if abandoned:
        out.append(f"{abandoned} backfill marks abandoned")
    return out


def cmd_caught_up(a):
    """Every mailbox row with ID ≤ --upto is processed, its events SENT and its
    mark written (exit 0); still catching up (exit 1); a fatal outcome (exit 3)."""
    try:
        fatal = fatal_problems(a.pg)
        if fatal:
            print("FATAL " + "; ".join(fatal))
            return 3
        rows = int(mysql(a.mailbox, f"SELECT COUNT(*) FROM cminmsgs WHERE CMINMSGS_ID <= {a.upto}")[0][0])
        unmarked = int(mysql(a.mailbox, f"SELECT COUNT(*) FROM cminmsgs WHERE CMINMSGS_ID <= {a.upto} "
                                        f"AND {a.processed_column} IS NULL")[0][0])
        q = psql(a.pg, f"""
            SELECT (SELECT count(*) FROM proc_state WHERE msg_id <= {a.upto}
                      AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND backfill_at IS NOT NULL),
                   (SELECT count(*) FROM msg_event WHERE msg_id <= {a.upto} AND status <> 'SENT')""")[0]
        done, unsent = (int(x) for x in q.split("|"))
    except subprocess.CalledProcessError as e:
        print(f"not reachable: {e.stderr.strip()[:200]}")
        return 1
    waiting = []
    if done != rows:
        waiting.append(f"{rows - done} of {rows} messages not yet processed and marked")
    if unmarked:
        waiting.append(f"{unmarked} mailbox marks missing")
    if unsent:
        waiting.append(f"{unsent} events not yet SENT")
    print("; ".join(waiting) if waiting else f"caught up to ID {a.upto}")
    return 1 if waiting else 0


def cmd_drained(a):
    try:
        problems = drained_problems(a.pg, a.mailbox)
    except subprocess.CalledProcessError as e:
        print(f"not reachable: {e.stderr.strip()}")
        return 2
    if problems:
        print("; ".join(problems))
        return 1
    print("drained")
    return 0


# --------------------------------------------------------------- snapshot --


def flight_tables(pg):
    return psql(pg, """SELECT table_name FROM information_schema.tables
                        WHERE table_schema = 'public' AND table_name LIKE 'flight\\_%'
                        ORDER BY table_name""")


def cmd_snapshot(a):
    pg = a.pg
    snap = {
        # Final outcomes: attempts and timestamps are left out (a kill between
        # the attempt and its outcome legitimately counts one more attempt).
        "proc_state": psql_json(pg, """
            SELECT msg_id, state, identity_key, msg_type, msg_styp, error_class, outcome_reason,
                   backfill_at IS NOT NULL AS marked, backfill_abandoned_reason
              FROM proc_state ORDER BY msg_id"""),
        "flights": {},
        "outbox": psql_json(pg, """SELECT target, status, count(*) AS n FROM msg_event
                                    GROUP BY 1, 2 ORDER BY 1, 2"""),
        "holes_released": int(psql(pg, "SELECT count(*) FROM inbox_hole")[0]),
    }
    for table in flight_tables(pg):
        rows = [strip_clock(r) for r in psql_json(pg, f"SELECT * FROM {table}")]
        if table == "flight_history":
            for r in rows:
                r.pop("id", None)
        snap["flights"][table] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    snap["msg_records"] = [
        {"key": r["key"], "partition": r["partition"], "offset": r["offset"],
         "state_version": int(r["headers"].get("state-version", -1)),
         "event_id": int(r["headers"].get("event-id", -1)),
         "value": strip_clock(json.loads(r["value"])) if r["value"] is not None else None}
        for r in tail(a.msgx, "msg")
    ]
    schd_last = {}
    for r in tail(a.msgx, "schd"):  # offset order within a key's partition
        schd_last[r["key"]] = strip_clock(json.loads(r["value"])) if r["value"] is not None else None
    snap["schd_last"] = schd_last
    with open(a.out, "w") as f:
        json.dump(snap, f)
    print(f"snapshot: {len(snap['proc_state'])} messages, "
          f"{len(snap['flights'].get('flight_schd', []))} flights, "
          f"{len(snap['msg_records'])} msg records, {len(schd_last)} schd keys → {a.out}")
    return 0


# ---------------------------------------------------------------- compare --


def msg_sequence_check(records):
    """Per FLID, STATE_VERSION only increases (a re-send of the same version
    is allowed). Returns (violations, duplicates, {(flid, version): value})."""
    last = {}
    seen = {}
    violations, duplicates = [], 0
    for r in sorted(records, key=lambda r: (r["partition"], r["offset"])):
        flid, v = r["key"], r["state_version"]
        if flid in last and v < last[flid]:
            violations.append(f"FLID {flid}: version {v} after {last[flid]} "
                              f"(partition {r['partition']} offset {r['offset']})")
        last[flid] = max(v, last.get(flid, v))
        k = (flid, v)
        if k in seen:
            duplicates += 1
            if seen[k] != r["value"]:
                violations.append(f"FLID {flid} version {v} re-sent with different content")
        else:
            seen[k] = r["value"]
    return violations, duplicates, seen


def diff_rows(name, a_rows, b_rows, key, limit=5):
    a = {key(r): r for r in a_rows}
    b = {key(r): r for r in b_rows}
    out = []
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            out.append(f"{name} {k}: clean={json.dumps(a.get(k))} chaos={json.dumps(b.get(k))}")
    shown = out[:limit] + ([f"{name}: … {len(out) - limit} more"] if len(out) > limit else [])
    return len(out), shown


def cmd_compare(a):
    with open(a.clean) as f:
        clean = json.load(f)
    with open(a.chaos) as f:
        chaos = json.load(f)
    total, lines = 0, []

    n, shown = diff_rows("PROC_STATE", clean["proc_state"], chaos["proc_state"], lambda r: r["msg_id"])
    total += n
    lines += shown
    for table in sorted(set(clean["flights"]) | set(chaos["flights"])):
        ca, cb = clean["flights"].get(table, []), chaos["flights"].get(table, [])
        if ca != cb:
            # The primary key of every flight table (history: FLID and version).
            n, shown = diff_rows(table, ca, cb, lambda r: tuple(
                r.get(k) for k in ("flid", "route_kind", "ordinal", "state_version")
                if k in r and (table == "flight_history" or k != "state_version")))
            total += n
            lines += shown
    n, shown = diff_rows("schd", [{"k": k, "v": v} for k, v in clean["schd_last"].items()],
                         [{"k": k, "v": v} for k, v in chaos["schd_last"].items()], lambda r: r["k"])
    total += n
    lines += shown

    dup = {}
    seen = {}
    for name, snap in (("clean", clean), ("chaos", chaos)):
        violations, dup[name], seen[name] = msg_sequence_check(snap["msg_records"])
        total += len(violations)
        lines += [f"msg ({name}): {v}" for v in violations[:5]]
    # Every event of the clean run arrives in the chaos run with the same content, and no other.
    n, shown = diff_rows("msg event", [{"k": list(k), "v": v} for k, v in seen["clean"].items()],
                         [{"k": list(k), "v": v} for k, v in seen["chaos"].items()],
                         lambda r: tuple(r["k"]))
    total += n
    lines += shown
    for name, snap in (("clean", clean), ("chaos", chaos)):
        # Every flight has a schd record. The mock cluster keeps only 5 MB per
        # partition and drops the oldest records beyond that (no compaction):
        # a gap here means the topic lost records, so the comparison would
        # not be sound (harness-lib.sh gives dev-kafka enough partitions).
        flights = {str(r["flid"]) for r in snap["flights"].get("flight_schd", [])}
        no_schd = sorted(flights - set(snap["schd_last"]))
        if no_schd:
            total += 1
            lines.append(f"schd ({name}): no record for {len(no_schd)} flights, e.g. {no_schd[:5]}")
        not_sent = [o for o in snap["outbox"] if o["status"] != "SENT"]
        if not_sent:
            total += 1
            lines.append(f"outbox ({name}) not all SENT: {not_sent}")

    result = {
        "messages": len(chaos["proc_state"]),
        "flights": len(chaos["flights"].get("flight_schd", [])),
        "msg_events": len(seen["chaos"]),
        "msg_records_clean": len(clean["msg_records"]),
        "msg_records_chaos": len(chaos["msg_records"]),
        "duplicates_clean": dup["clean"],
        "duplicates_chaos": dup["chaos"],
        "holes_released": chaos["holes_released"],
        "outcomes": dict(sorted(Counter(r["state"] for r in chaos["proc_state"]).items())),
        "differences": total,
    }
    for line in lines:
        print("DIFF " + line)
    print("compare: " + json.dumps(result))
    return 1 if total else 0


# ----------------------------------------------------------------- verify --


def cmd_verify(a):
    """The soak's invariants after the run (and the W log taken during it)."""
    pg, failures = a.pg, []

    problems = drained_problems(pg, a.mailbox)
    failures += [f"not drained: {p}" for p in problems]

    mb_ids = {int(r[0]) for r in mysql(a.mailbox, "SELECT CMINMSGS_ID FROM cminmsgs")}
    ps_ids = {int(r) for r in psql(pg, "SELECT msg_id FROM proc_state")}
    lost = sorted(mb_ids - ps_ids)
    if lost:
        failures.append(f"lost: {len(lost)} mailbox rows never enqueued, e.g. {lost[:5]}")
    unmarked = mysql(a.mailbox, f"SELECT COUNT(*) FROM cminmsgs WHERE {a.processed_column} IS NULL")
    if int(unmarked[0][0]):
        failures.append(f"{unmarked[0][0]} mailbox rows without a processing mark")

    failures += fatal_problems(pg)

    # Every KAFKA:msg event of the outbox is on the topic with its payload.
    expected = {(r["partition_key"], int(r["state_version"])): strip_clock(json.loads(r["payload"]))
                for r in psql_json(pg, """SELECT partition_key, state_version,
                                                  convert_from(payload, 'UTF8') AS payload
                                           FROM msg_event WHERE target = 'KAFKA:msg'""")}
    records = [{"key": r["key"], "partition": r["partition"], "offset": r["offset"],
                "state_version": int(r["headers"].get("state-version", -1)),
                "value": strip_clock(json.loads(r["value"])) if r["value"] else None}
               for r in tail(a.msgx, "msg")]
    violations, duplicates, seen = msg_sequence_check(records)
    failures += violations[:5]
    missing = [k for k in expected if seen.get(k) != expected[k]]
    if missing:
        failures.append(f"{len(missing)} outbox events not delivered (or different), e.g. {missing[:3]}")

    w_samples = 0
    if a.w_log:
        prev = None
        with open(a.w_log) as f:
            for line in f:
                t, w = line.split()
                w_samples += 1
                if prev is not None and int(w) < prev[1]:
                    failures.append(f"W moved backwards at {t}: {prev[1]} → {w}")
                prev = (t, int(w))

    summary = {"mailbox_rows": len(mb_ids), "msg_events": len(expected),
               "msg_records": len(records), "duplicates": duplicates,
               "w_samples": w_samples, "failures": len(failures)}
    for f_ in failures:
        print("FAIL " + f_)
    print("verify: " + json.dumps(summary))
    return 1 if failures else 0


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
    """Follows the msg topic; writes `receive_time msg_id` per record."""
    proc = subprocess.Popen([a.msgx, "tail", "msg", "--follow", "--json"],
                            stdout=subprocess.PIPE, text=True, bufsize=1)

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


def cmd_latency_report(a):
    """Insert (feed log: `insert_time msg_id`) → first receipt per message."""
    inserted = {}
    with open(a.feed_log) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                inserted[int(parts[1])] = float(parts[0])
    received = {}
    with open(a.recv_log) as f:
        for line in f:
            t, mid = line.split()
            received.setdefault(int(mid), float(t))
    start = min(inserted.values()) if inserted else 0
    lat = sorted(received[m] - t for m, t in inserted.items()
                 if m in received and t - start >= a.skip_first_s)
    missing = sum(1 for m in inserted if m not in received)
    result = {"inserted": len(inserted), "measured": len(lat), "without_event": missing,
              "p50_s": round(percentile(lat, 50), 3), "p99_s": round(percentile(lat, 99), 3),
              "max_s": round(lat[-1], 3) if lat else None}
    print("latency: " + json.dumps(result))
    return 0


# ------------------------------------------------ independent broker (TLS) --


def cmd_broker_verify(a):
    """scripts/real-broker.sh: after a drain, the topics hold exactly the
    outbox. msg: every KAFKA:msg event with its payload, per FLID one
    partition and strictly increasing STATE_VERSION (no faults were injected:
    not even a duplicate is expected). schd: per FLID the last record is the
    outbox row's version and payload (null for a tombstone); every FLID seen
    on msg has one."""
    pg, failures = a.pg, []
    failures += [f"not drained: {p}" for p in drained_problems(pg, a.mailbox)]
    failures += fatal_problems(pg)

    expected = {(r["partition_key"], int(r["state_version"])): json.loads(r["payload"])
                for r in psql_json(pg, """SELECT partition_key, state_version,
                                                  convert_from(payload, 'UTF8') AS payload
                                           FROM msg_event WHERE target = 'KAFKA:msg'""")}
    msg = tail(a.msgx, "msg")
    seen, last, partitions, order = {}, {}, {}, []
    for r in sorted(msg, key=lambda r: (r["partition"], r["offset"])):
        flid, v = r["key"], int(r["headers"].get("state-version", -1))
        partitions.setdefault(flid, set()).add(r["partition"])
        if flid in last and v <= last[flid]:
            order.append(f"FLID {flid}: version {v} after {last[flid]} "
                         f"(partition {r['partition']} offset {r['offset']})")
        last[flid] = v
        seen[(flid, v)] = json.loads(r["value"]) if r["value"] is not None else None
    failures += order[:5] + ([f"… {len(order) - 5} more order violations"] if len(order) > 5 else [])
    split = [f for f, ps in partitions.items() if len(ps) > 1]
    if split:
        failures.append(f"{len(split)} FLIDs on more than one partition, e.g. {split[:3]}")
    missing = [k for k in expected if k not in seen]
    different = [k for k in expected if k in seen and seen[k] != expected[k]]
    extra = [k for k in seen if k not in expected]
    for name, keys in (("missing from the msg topic", missing), ("with a different payload", different),
                       ("on the msg topic but not in the outbox", extra)):
        if keys:
            failures.append(f"{len(keys)} msg events {name}, e.g. {keys[:3]}")

    schd_rows = psql_json(pg, """SELECT partition_key, state_version, event_type,
                                        convert_from(payload, 'UTF8') AS payload
                                   FROM msg_event WHERE target = 'KAFKA:schd'""")
    schd_last = {}
    for r in sorted(tail(a.msgx, "schd"), key=lambda r: (r["partition"], r["offset"])):
        schd_last[r["key"]] = r
    wrong = []
    for row in schd_rows:
        rec = schd_last.get(row["partition_key"])
        want = json.loads(row["payload"]) if row["payload"] is not None else None
        got = None if rec is None or rec["value"] is None else json.loads(rec["value"])
        if rec is None or int(rec["headers"].get("state-version", -1)) != int(row["state_version"]) \
                or got != want:
            wrong.append(row["partition_key"])
    if wrong:
        failures.append(f"{len(wrong)} of {len(schd_rows)} flights without their latest schd record, "
                        f"e.g. {wrong[:3]}")
    no_schd = sorted({f for f, _ in expected} - {r["partition_key"] for r in schd_rows})
    if no_schd:
        failures.append(f"{len(no_schd)} FLIDs on msg without a schd outbox row, e.g. {no_schd[:3]}")

    tombstones = sum(1 for r in schd_rows if r["payload"] is None)
    summary = {"msg_events": len(expected), "msg_records": len(msg), "flids": len(last),
               "schd_flights": len(schd_rows), "schd_tombstones": tombstones,
               "schd_records": len(schd_last), "failures": len(failures)}
    for f_ in failures:
        print("FAIL " + f_)
    print("broker-verify: " + json.dumps(summary))
    return 1 if failures else 0


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
    s = sub.add_parser("drained")
    s.add_argument("--pg", required=True)
    s.add_argument("--mailbox", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("--pg", required=True)
    s.add_argument("--msgx", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("compare")
    s.add_argument("clean")
    s.add_argument("chaos")
    s = sub.add_parser("verify")
    s.add_argument("--pg", required=True)
    s.add_argument("--mailbox", required=True)
    s.add_argument("--msgx", required=True)
    s.add_argument("--w-log")
    s.add_argument("--processed-column", default="CMINMSGS_DATE_PROCESSED")
    s = sub.add_parser("caught-up")
    s.add_argument("--pg", required=True)
    s.add_argument("--mailbox", required=True)
    s.add_argument("--upto", type=int, required=True)
    s.add_argument("--processed-column", default="CMINMSGS_DATE_PROCESSED")
    s = sub.add_parser("watch-w")
    s.add_argument("--pg", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("latency")
    s.add_argument("--msgx", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("latency-report")
    s.add_argument("--feed-log", required=True)
    s.add_argument("--recv-log", required=True)
    s.add_argument("--skip-first-s", type=float, default=0.0)
    s = sub.add_parser("broker-verify")
    s.add_argument("--pg", required=True)
    s.add_argument("--mailbox", required=True)
    s.add_argument("--msgx", required=True)
    s = sub.add_parser("tls-proxy")
    s.add_argument("--listen", type=int, required=True)
    s.add_argument("--upstream", type=int, required=True)
    s.add_argument("--cert", required=True)
    s.add_argument("--key", required=True)
    a = p.parse_args()
    return {"drained": cmd_drained, "snapshot": cmd_snapshot, "compare": cmd_compare,
            "verify": cmd_verify, "caught-up": cmd_caught_up, "watch-w": cmd_watch_w, "latency": cmd_latency,
            "latency-report": cmd_latency_report, "broker-verify": cmd_broker_verify,
            "tls-proxy": cmd_tls_proxy}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
