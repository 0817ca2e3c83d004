#!/usr/bin/env bash
# Measures `kvprefix listen` recovering a long replay and its process size under a memory budget
# (benchmarks/RESULTS.md section 8). One vLLM-shaped engine in another process
# (listener/src/test/python/vllm_publisher.py: vLLM's wire format, a replay ROUTER with ZMQ's default
# send high-water mark of 1,000) publishes BATCHES batches before anyone subscribes and keeps them for
# replay; then `listen` starts, asks for them at once (docs/LISTENER.md section 3) and is polled on
# /health/ready, which turns 200 once no replay is outstanding.
#
#   benchmarks/listen-recovery.sh BATCHES [BUDGET] [SEED] [CLEARS]
#
# BUDGET is --memory-budget (default: unlimited); CLEARS false makes the engine send no
# AllBlocksCleared, so its cache (and the index) only grows.
#
# Prints one line: batches, budget, seconds from the metrics endpoint being up to ready, the replay
# requests it took, replayed batches, resyncs, capacity_exceeded stores, blocks held, VmHWM and VmRSS
# of the listen JVM (KVPREFIX_JAVA_OPTS is passed to it, e.g. -Xmx256m). Needs python3-zmq,
# python3-msgpack and curl. Run from the repository root after ./kvprefix setup.
set -euo pipefail
BATCHES=${1:?usage: benchmarks/listen-recovery.sh BATCHES [BUDGET] [SEED]}
BUDGET=${2:-unlimited}
SEED=${3:-7}
CLEARS=${4:-true}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
PUB_PID=
LISTEN_PID=
cleanup() {
  [[ -n "$LISTEN_PID" ]] && kill "$LISTEN_PID" 2>/dev/null || true
  [[ -n "$PUB_PID" ]] && kill "$PUB_PID" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "listen-recovery.sh: line $LINENO failed (exit $?)" >&2' ERR

cat >"$WORK/spec.json" <<EOF
{"seed": $SEED, "interval": 0, "engines": [
 {"name": "E", "encoding": "array", "replay": "plain", "ranks": [0], "batches": $BATCHES,
  "early": $BATCHES, "buffer": $BATCHES, "clears": $CLEARS}]}
EOF
mkfifo "$WORK/stdin"
/usr/bin/python3 "$ROOT/listener/src/test/python/vllm_publisher.py" "$WORK/spec.json" "$WORK/truth.txt" \
  <"$WORK/stdin" >"$WORK/pub.out" 2>"$WORK/pub.err" &
PUB_PID=$!
exec 3>"$WORK/stdin" # held open: the publisher answers replays until its standard input closes
for _ in $(seq 600); do
  grep -q "^READY" "$WORK/pub.out" && break
  kill -0 "$PUB_PID" 2>/dev/null || break
  sleep 0.1
done
grep -q "^READY" "$WORK/pub.out" || { echo "publisher did not start: $(cat "$WORK/pub.err")" >&2; exit 1; }
PORTS=$(sed -n 's/^READY //p' "$WORK/pub.out")
PUB=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["E"]["pub"])' "$PORTS")
REPLAY=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["E"]["replay"])' "$PORTS")
# The stand-in writes its truth file once a subscriber has arrived and answers no replay meanwhile:
# a throwaway subscriber lets it do that first, so the times below are listen's alone.
/usr/bin/python3 -c 'import sys, time, zmq
s = zmq.Context().socket(zmq.SUB); s.subscribe(b""); s.connect(sys.argv[1]); time.sleep(120)' \
  "tcp://127.0.0.1:$PUB" &
WARM_PID=$!
for _ in $(seq 1200); do
  grep -q "^DONE" "$WORK/pub.out" && break
  kill -0 "$PUB_PID" 2>/dev/null || break
  sleep 0.1
done
kill "$WARM_PID" 2>/dev/null || true
wait "$WARM_PID" 2>/dev/null || true
grep -q "^DONE" "$WORK/pub.out" || { echo "publisher did not finish: $(cat "$WORK/pub.err")" >&2; exit 1; }

ARGS=(listen --engine "tcp://127.0.0.1:$PUB=1,replay=tcp://127.0.0.1:$REPLAY" --metrics-port 0
  --metrics-host 127.0.0.1 --duration 600 --stats-interval 3600)
[[ "$BUDGET" != unlimited ]] && ARGS+=(--memory-budget "$BUDGET")
: >"$WORK/listen.err" # exists before the background job opens it: the loop below reads it at once
"$ROOT/kvprefix" "${ARGS[@]}" >"$WORK/listen.out" 2>"$WORK/listen.err" &
LISTEN_PID=$!
URL=
for _ in $(seq 3000); do
  URL=$(sed -n 's/^kvprefix listen: metrics on \(.*\)\/metrics$/\1/p' "$WORK/listen.err")
  [[ -n "$URL" ]] && break
  sleep 0.01
done
[[ -n "$URL" ]] || { echo "listen did not start: $(cat "$WORK/listen.err")" >&2; exit 1; }
UP=$(date +%s.%N)
READY=
for _ in $(seq 30000); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health/ready")" == 200 ]]; then
    READY=$(date +%s.%N)
    break
  fi
  sleep 0.01
done
[[ -n "$READY" ]] || { echo "listen never became ready" >&2; exit 1; }
METRICS=$(curl -s "$URL/metrics")
metric() { # the sum of a metric's samples
  awk -v m="$1" '$1 ~ "^"m"([{]|$)" {s += $2} END {printf "%d", s}' <<<"$METRICS"
}
HWM=$(awk '/^VmHWM/ {print $2 " " $3}' "/proc/$LISTEN_PID/status")
RSS=$(awk '/^VmRSS/ {print $2 " " $3}' "/proc/$LISTEN_PID/status")
kill -TERM "$LISTEN_PID"
wait "$LISTEN_PID" || true
LISTEN_PID=
HELD=$(sed -n 's/^kvprefix listen: the index holds \([0-9]*\) blocks.*/\1/p' "$WORK/listen.err")
HELD_MIB=$(sed -n 's/^kvprefix listen: the index holds .* in \([0-9.]*\) MiB.*/\1/p' "$WORK/listen.err")
printf 'batches=%s budget=%s ready_after_s=%.2f replays=%s replayed=%s resyncs=%s capacity_exceeded=%s blocks_held=%s index_mib=%s vm_hwm="%s" vm_rss="%s"\n' \
  "$BATCHES" "$BUDGET" "$(echo "$READY - $UP" | bc)" \
  "$(metric kvprefix_subscriber_replays_total)" "$(metric kvprefix_subscriber_replayed_batches_total)" \
  "$(metric kvprefix_subscriber_resyncs_total)" \
  "$(awk '$1 ~ /^kvprefix_subscriber_events_total[{]/ && /status="capacity_exceeded"/ {s += $2} END {printf "%d", s}' <<<"$METRICS")" \
  "${HELD:-?}" "${HELD_MIB:-?}" "$HWM" "$RSS"
