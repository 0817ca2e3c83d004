#!/usr/bin/env bash
# before-after.sh BEFORE_DIR AFTER_DIR OUT [ROUNDS]: the match, hash-and-match and event JMH suites and
# the trace bench from two built checkouts of kvprefix (./kvprefix setup in each), alternating
# (before, after; after, before; ...), each run's output in OUT. docs/BENCHMARKS.md section 1 says
# how to read JMH's figures; benchmarks/JOURNAL.md section 10.2 is one such run.
set -u
[ $# -ge 3 ] || { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
BEFORE=$1; AFTER=$2; OUT=$3; ROUNDS=${4:-2}
TRACE=${TRACE:-$(cd "$(dirname "$0")/.." && pwd)/../shared/traces/conversation_trace.jsonl}
for d in "$BEFORE" "$AFTER"; do [ -x "$d/kvprefix" ] || { echo "before-after.sh: $d/kvprefix not found" >&2; exit 2; }; done
[ -f "$TRACE" ] || { echo "before-after.sh: trace $TRACE not found (set TRACE=...)" >&2; exit 2; }
mkdir -p "$OUT"
JMH=(-f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc -rf json)
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then sides="before after"; else sides="after before"; fi
  for s in $sides; do
    d=$BEFORE; [ "$s" = after ] && d=$AFTER
    echo "$(date -u +%T) round $r $s" >&2
    "$d/kvprefix" jmh MatchBenchmark -p impl=heap,offheap-java,offheap-native -p workers=16 -p depth=64,512 \
        -p scenario=all-hit,holes "${JMH[@]}" -rff "$OUT/match-$s-$r.json" > "$OUT/match-$s-$r.log" 2>&1
    "$d/kvprefix" jmh 'EventsBenchmark.storeRemove' -p impl=heap,offheap-java -p batch=1,16,64 "${JMH[@]}" \
        -rff "$OUT/events-$s-$r.json" > "$OUT/events-$s-$r.log" 2>&1
    "$d/kvprefix" bench --trace "$TRACE" --writers 1 --readers 1 --repeat 20 --warmup 5 \
        --impl heap,offheap-java,offheap-native > "$OUT/trace-$s-$r.out" 2> "$OUT/trace-$s-$r.err"
  done
done
echo "$(date -u +%T) finished: $OUT" >&2
