# Shared parts of the pipeline benchmarks (bench-pipeline.sh, bench-large-schd.sh):
# sourced after `cd` to the project root with BUILD (1 = build) and DB (the
# database name stem) set. Starts the local services, builds the release
# binary, and exports the connection of a database pair `$DB` / `${DB}_mb`.
bash scripts/services.sh >/dev/null
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null; }
command -v bc >/dev/null || { apt-get install -y -qq bc >/dev/null; }
[ "$BUILD" = 1 ] && cargo build --release --locked --quiet --bin msgx
MSGX=${MSGX_BIN:-target/release/msgx}
PG=postgres://msgx:msgx@127.0.0.1:5432
export PGOPTIONS='--client-min-messages=warning'
export MSGX_DATABASE_URL=$PG/$DB MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/${DB}_mb
export MSGX_CONFIG=config/msgx.toml RUST_LOG=warn

# measure JOB -> "seconds items peak_rss_kb run_seconds" of `msgx run JOB
# --until-empty`: the process's wall time (connections and the schema check
# included: a `msgx run` opens its TLS sessions to PostgreSQL and the
# mailbox first) and the run's own, from its JOB_RUN row (issue 38 item 1).
measure() {
  local out t0 t1 items rss run
  t0=$(date +%s.%N)
  out=$(/usr/bin/time -f 'RSS %M' $MSGX run "$1" --until-empty --max-items 10000000 --json 2>&1)
  t1=$(date +%s.%N)
  items=$(echo "$out" | grep -o '"items":[0-9]*' | head -1 | cut -d: -f2)
  rss=$(echo "$out" | grep -o 'RSS [0-9]*' | cut -d' ' -f2)
  run=$(psql "$MSGX_DATABASE_URL" -qtAX -c "SELECT extract(epoch FROM finished_at - started_at) FROM job_run
         WHERE job = '$1' ORDER BY id DESC LIMIT 1")
  echo "$(echo "$t1 - $t0" | bc -l) $items $rss ${run:-0}"
}
load() { cut -d' ' -f1 /proc/loadavg; }
