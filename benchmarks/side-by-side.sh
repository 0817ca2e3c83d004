#!/usr/bin/env bash
# side-by-side.sh: side-by-side throughput of kvprefix and the Rust yardstick (Dynamo PositionalIndexer).
#
#   side-by-side.sh [options] KVPREFIX_DIR YARDSTICK_BIN OPS_FILE ROUNDS
#   side-by-side.sh --report RAW_DIR      (prints the tables of a finished run again from its raw folder)
#
# For each order (default: free, then trace), ROUNDS rounds; one round = one yardstick run
#   YARDSTICK_BIN bench OPS --writers W --readers R --repeat K --order O
# immediately followed by one kvprefix run (every implementation, interleaved inside one JVM)
#   KVPREFIX_DIR/kvprefix bench --ops OPS --writers W --readers R --repeat K --warmup N --order O --impl I
# Then prints, per order, best and median block ops/s of each tool/impl and the per-round ratios
# kvprefix/yardstick, parsed from the JSON last lines of both tools (best = best pass of any round;
# median = median over rounds of each run's median pass; both tools count stored + match blocks,
# which the script checks). Output goes to stdout; progress and errors to stderr; exit 1 on any error.
#
# Options:
#   --orders LIST     comma-separated, from free,trace        (default: free,trace)
#   --repeat K        timed passes per run, both tools         (default: 20)
#   --warmup N        kvprefix untimed passes per impl         (default: 5)
#   --impls LIST      kvprefix implementations                 (default: heap,offheap-java,offheap-native)
#   --writers W / --readers R                                  (default: 1 / 1)
#   --kvp-args "..."  extra arguments for kvprefix bench, e.g. "--latency-at none"
#   --raw DIR         keep every run's stdout/stderr and summary.json there (default: a new mktemp dir)
#   --allow-stale     run even if KVPREFIX_DIR's sources are newer than its built CLI jar
#   --max-load X      refuse to start if the 1-minute load average is above X (default: 0 = no check)
#   --quiet-cpu C     before each round, wait until the machine uses at most C cores over 3 s (default: 0.10)
#   --wait-quiet S    give up (error) after waiting S seconds for that (default: 900)
#   --max-foreign C   a round during which other processes used more than C cores on average (machine
#                     busy time minus the tools' own CPU time; at least 0.05 s) is discarded and redone
#                     (default: 0.05); discarded attempts are kept as ORDER-rN.discardedK.* in the raw folder
#   --retries N       attempts per round before a disturbed round is kept, flagged NOISY and left
#                     out of the best/median aggregates (default: 4)
#   --bracket         one more yardstick run after each kvprefix run (Y K Y): the yardstick figures
#                     of a round pool both runs' passes, and the drift between them (speed of the
#                     second run's median pass over the first's) shows whether the machine changed
#                     speed during the round; a round with drift beyond 15% is flagged UNSTABLE
#                     (kept; the summary also gives the ratios of the stable rounds alone)
#   --allow-no-match  report even if the yardstick matched nothing (see below); marks the table INVALID
#
# Robustness: the CLI jar is copied to the raw folder at the start and run from there through the
# checkout's launcher with KVPREFIX_CLASSPATH (which never builds), so edits or rebuilds in the
# checkout during the rounds cannot change what is measured, and nothing is built here. Build the
# checkout first (`./kvprefix setup`). The yardstick takes a stored block_hash for the Dynamo chain
# hash of the local hashes; kvprefix gen-ops writes its own engine-hash scheme, on which the
# yardstick matches nothing and its matches do no work. The script checks the stream before it
# starts (and every trace-order yardstick result after) and stops with an error on such a stream
# (write the stream with `kvprefix gen-ops --engine-hashes dynamo`, docs/BENCHMARKS.md).
set -euo pipefail

die() { echo "side-by-side.sh: error: $*" >&2; exit 1; }
log() { echo "side-by-side.sh: $*" >&2; }
usage() { awk 'NR>1 && !/^#/{exit} NR>1{sub(/^# ?/,""); print}' "${BASH_SOURCE[0]}"; }

# report_table RAW ORDERS ROUNDS IMPLS ALLOW_NO_MATCH STREAM_BAD: the tables, from the raw files
report_table() {
python3 - "$@" <<'PY'
import json, statistics, sys, os
raw, orders, rounds, impls = sys.argv[1], sys.argv[2].split(','), int(sys.argv[3]), sys.argv[4].split(',')
allow_no_match = sys.argv[5] == "1"
invalid = sys.argv[6] == "1"

def fail(msg):
    print("side-by-side.sh: error: " + msg, file=sys.stderr); sys.exit(1)

def json_tail(path):
    """The JSON objects on the last lines of a file (kvprefix: one per impl; yardstick: one)."""
    objs = []
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip()]
    for l in reversed(lines):
        if not l.startswith('{'):
            break
        try:
            objs.append(json.loads(l))
        except json.JSONDecodeError as e:
            fail(f"{path}: last line is not JSON ({e})")
    if not objs:
        fail(f"{path}: no JSON result line at the end")
    return list(reversed(objs))

def median_wall(walls):
    w = sorted(walls); n = len(w)
    return w[n // 2] if n % 2 else (w[n // 2 - 1] + w[n // 2]) / 2

summary = {"orders": {}}
M = 1e6
for order in orders:
    rows = []
    for r in range(1, rounds + 1):
        base = os.path.join(raw, f"{order}-r{r}")
        y = json_tail(base + ".yardstick.out")[-1]
        if y.get("tool") != "yardstick":
            fail(f"{base}.yardstick.out: last line is not a yardstick result")
        yblocks = y["stored_blocks"] + y["query_blocks"]
        # Only trace order guarantees that a match sees the events before it: in free order the
        # reader often finishes before the writer has stored anything, and matching nothing is normal.
        if order == "trace" and y["matches"] > 0 and y["matched_workers"] == 0 and allow_no_match:
            invalid = True
        elif order == "trace" and y["matches"] > 0 and y["matched_workers"] == 0:
            fail(f"{base}.yardstick.out: the yardstick matched no worker in {y['matches']} matches: the stream's "
                 "block_hash values are not Dynamo chain hashes of its local hashes, so its matches do no work; "
                 "write the stream with kvprefix gen-ops --engine-hashes dynamo")
        ywalls = [p["wall_s"] for p in y["runs"]]
        drift = None
        if os.path.exists(base + ".yardstick2.out"):
            y2 = json_tail(base + ".yardstick2.out")[-1]
            w2 = [p["wall_s"] for p in y2["runs"]]
            drift = median_wall(ywalls) / median_wall(w2)     # median pass after / before, as speed
            ywalls = ywalls + w2
        ybest = yblocks / min(ywalls)
        ymed = yblocks / median_wall(ywalls)
        ks = {o["impl"]: o for o in json_tail(base + ".kvprefix.out") if "impl" in o}
        for i in impls:
            if i not in ks:
                fail(f"{base}.kvprefix.out: no JSON result for impl {i}")
            if ks[i]["block_ops"] != yblocks:
                fail(f"{base}: the tools count different block ops: yardstick {yblocks} "
                     f"(stored {y['stored_blocks']} + query {y['query_blocks']}), kvprefix {ks[i]['block_ops']}")
        load = open(base + ".load").read().split()[0]
        yc = open(base + ".yardstick.cpu").read().split(); kc = open(base + ".kvprefix.cpu").read().split()
        rows.append({"round": r, "load1": float(load), "noisy": os.path.exists(base + ".noisy"),
                     "yardstick_drift": drift, "unstable": drift is not None and not (1 / 1.15 <= drift <= 1.15),
                     "foreign_cpu_s": {"yardstick": float(yc[3]), "kvprefix": float(kc[3])},
                     "run_wall_s": {"yardstick": float(yc[0]), "kvprefix": float(kc[0])},
                     "yardstick": {"best": ybest, "median": ymed, "tool_median": y["median_pass_block_ops_per_s"],
                                   "writers_s": y["writers_s"], "readers_s": y["readers_s"]},
                     **{i: {"best": ks[i]["block_ops_per_s"], "median": ks[i]["median_block_ops_per_s"],
                            "writers_s": ks[i]["writers_done_s"], "readers_s": ks[i]["readers_done_s"]} for i in impls}})
    names = ["yardstick"] + impls
    clean = [row for row in rows if not row["noisy"]]
    if not clean:
        print(f"side-by-side.sh: warning: every {order} round was disturbed; the aggregates use them all", file=sys.stderr)
        clean = rows
    agg = {}
    for n in names:
        bests = [row[n]["best"] for row in clean]; meds = [row[n]["median"] for row in clean]
        agg[n] = {"best_of_rounds": max(bests), "median_of_round_bests": statistics.median(bests),
                  "median_of_round_medians": statistics.median(meds),
                  "min_of_round_bests": min(bests), "max_of_round_medians": max(meds), "min_of_round_medians": min(meds)}
    ratios = {}
    for i in impls:
        rb = [row[i]["best"] / row["yardstick"]["best"] for row in clean]
        rm = [row[i]["median"] / row["yardstick"]["median"] for row in clean]
        ratios[i] = {"per_round_best": rb, "per_round_median": rm,
                     "median_per_round_best": statistics.median(rb), "median_per_round_median": statistics.median(rm),
                     "best_over_best": agg[i]["best_of_rounds"] / agg["yardstick"]["best_of_rounds"],
                     "median_over_median": agg[i]["median_of_round_medians"] / agg["yardstick"]["median_of_round_medians"]}
    summary["orders"][order] = {"rounds": rows, "aggregate": agg, "ratios": ratios}

    if invalid:
        print("\n!! INVALID COMPARISON: the yardstick matched no worker (stream block_hash values are not Dynamo "
              "chain hashes), so its matches returned after one lookup; its figures are not comparable")
    print(f"\n== order {order}: {rounds} round(s), {len(clean)} undisturbed used for the aggregates; "
          "M block ops/s (stored + match blocks over wall time)")
    print(f"{'impl':<16} {'best':>8} {'median':>8}   {'round bests min..max':>20} {'round medians min..max':>23}")
    for n in names:
        a = agg[n]
        print(f"{n:<16} {a['best_of_rounds']/M:8.2f} {a['median_of_round_medians']/M:8.2f}   "
              f"{a['min_of_round_bests']/M:9.2f}..{a['best_of_rounds']/M:<9.2f} "
              f"{a['min_of_round_medians']/M:11.2f}..{a['max_of_round_medians']/M:<9.2f}")
    print("  best = best pass over all rounds; median = median over rounds of each run's median pass")
    hdr = f"{'round':>5} {'yardstick b/m':>13}" + "".join(f" {i + ' b/m':>17}" for i in impls) + "   foreign CPU s (ys/kvp)"
    print("\nper round: yardstick M block ops/s best/median, then ratio kvprefix/yardstick (b = best pass, m = median pass)")
    print(hdr)
    for row in rows:
        line = f"{row['round']:>5} {row['yardstick']['best']/M:6.2f}/{row['yardstick']['median']/M:<6.2f}"
        for i in impls:
            line += f" {row[i]['best']/row['yardstick']['best']:10.2f}x/{row[i]['median']/row['yardstick']['median']:.2f}x"
        line += f"   {row['foreign_cpu_s']['yardstick']:.2f}/{row['foreign_cpu_s']['kvprefix']:.2f}"
        if row["yardstick_drift"] is not None:
            line += f"   drift {row['yardstick_drift']:.2f}"
        print(line + ("  NOISY" if row["noisy"] else "") + ("  UNSTABLE" if row["unstable"] else ""))
    stable = [row for row in clean if not row["unstable"]]
    if any(row["yardstick_drift"] is not None for row in rows):
        print(f"  yardstick columns pool the runs before and after kvprefix; drift = after/before median-pass speed; "
              f"{len(stable)} stable round(s)")
    if stable and len(stable) < len(clean):
        for i in impls:
            rb = statistics.median(row[i]["best"] / row["yardstick"]["best"] for row in stable)
            rm = statistics.median(row[i]["median"] / row["yardstick"]["median"] for row in stable)
            ratios[i]["stable_median_per_round_best"] = rb; ratios[i]["stable_median_per_round_median"] = rm
            print(f"{i:<16} stable rounds only: median of per-round ratios best {rb:.2f}x, median {rm:.2f}x")
    for i in impls:
        q = ratios[i]
        print(f"{i:<16} best/best {q['best_over_best']:.2f}x  median/median {q['median_over_median']:.2f}x  "
              f"(median of per-round ratios: best {q['median_per_round_best']:.2f}x, median {q['median_per_round_median']:.2f}x)")
summary["invalid_yardstick_matched_nothing"] = invalid
with open(os.path.join(raw, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
print(f"\nraw runs, meta.txt and summary.json: {raw}")
print("yardstick median = from its per-pass walls, mean of the two middle passes for an even count (as kvprefix);"
      " its own median_pass_block_ops_per_s takes the upper-middle pass and is kept in summary.json as tool_median")
PY
}

ORDERS=free,trace REPEAT=20 WARMUP=5 IMPLS=heap,offheap-java,offheap-native WRITERS=1 READERS=1
KVP_ARGS="" RAW="" ALLOW_STALE=0 MAX_LOAD=0 ALLOW_NO_MATCH=0 STREAM_BAD=0
QUIET_CPU=0.10 WAIT_QUIET=900 MAX_FOREIGN=0.05 RETRIES=4 BRACKET=0
POS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --report)
      [ $# -ge 2 ] || die "--report needs a raw folder"
      [ -f "$2/report.args" ] || die "$2/report.args not found: not a finished side-by-side.sh raw folder"
      mapfile -t A < "$2/report.args"
      report_table "$(cd "$2" && pwd)" "${A[@]}"
      exit 0 ;;
    --orders|--repeat|--warmup|--impls|--writers|--readers|--kvp-args|--raw|--max-load|--quiet-cpu|--wait-quiet|--max-foreign|--retries)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --orders) ORDERS=$2 ;; --repeat) REPEAT=$2 ;; --warmup) WARMUP=$2 ;; --impls) IMPLS=$2 ;;
        --writers) WRITERS=$2 ;; --readers) READERS=$2 ;; --kvp-args) KVP_ARGS=$2 ;; --raw) RAW=$2 ;;
        --max-load) MAX_LOAD=$2 ;; --quiet-cpu) QUIET_CPU=$2 ;; --wait-quiet) WAIT_QUIET=$2 ;;
        --max-foreign) MAX_FOREIGN=$2 ;; --retries) RETRIES=$2 ;;
      esac
      shift 2 ;;
    --allow-stale) ALLOW_STALE=1; shift ;;
    --allow-no-match) ALLOW_NO_MATCH=1; shift ;;
    --bracket) BRACKET=1; shift ;;
    --*) die "unknown option $1 (see --help)" ;;
    *) POS+=("$1"); shift ;;
  esac
done
[ ${#POS[@]} -eq 4 ] || { usage >&2; die "expected 4 arguments: KVPREFIX_DIR YARDSTICK_BIN OPS_FILE ROUNDS (got ${#POS[@]})"; }
KVP_DIR=$(cd "${POS[0]}" 2>/dev/null && pwd) || die "kvprefix checkout '${POS[0]}' is not a directory"
YS=${POS[1]} OPS=${POS[2]} ROUNDS=${POS[3]}

is_posint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
is_posint "$ROUNDS" || die "ROUNDS must be a positive integer, got '$ROUNDS'"
is_posint "$REPEAT" || die "--repeat must be a positive integer, got '$REPEAT'"
[[ "$WARMUP" =~ ^[0-9]+$ ]] || die "--warmup must be a non-negative integer, got '$WARMUP'"
is_posint "$WRITERS" || die "--writers must be a positive integer"
is_posint "$READERS" || die "--readers must be a positive integer"
for v in "$MAX_LOAD" "$QUIET_CPU" "$MAX_FOREIGN"; do
  [[ "$v" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--max-load, --quiet-cpu and --max-foreign take numbers, got '$v'"
done
[[ "$WAIT_QUIET" =~ ^[0-9]+$ ]] || die "--wait-quiet must be a number of seconds"
is_posint "$RETRIES" || die "--retries must be a positive integer"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
IFS=, read -r -a ORDER_LIST <<<"$ORDERS"
[ ${#ORDER_LIST[@]} -gt 0 ] || die "--orders is empty"
for o in "${ORDER_LIST[@]}"; do
  [ "$o" = free ] || [ "$o" = trace ] || die "--orders: '$o' is not free or trace"
done
[ -x "$KVP_DIR/kvprefix" ] || die "$KVP_DIR/kvprefix (the launcher) not found or not executable"
[ -f "$YS" ] && [ -x "$YS" ] || die "yardstick binary '$YS' not found or not executable (build it: see the yardstick's README, docs/BENCHMARKS.md)"
[ -f "$OPS" ] && [ -r "$OPS" ] || die "ops file '$OPS' not found or not readable"
OPS=$(cd "$(dirname "$OPS")" && pwd)/$(basename "$OPS")
command -v python3 >/dev/null || die "python3 is needed to parse the JSON results"

# The CLI jar the launcher runs: its CLI_JAR line (benchmarks/target at 3ddcb38, cli/target later).
JAR_REL=$(sed -n 's|^CLI_JAR="\$ROOT/\(.*\)"$|\1|p' "$KVP_DIR/kvprefix" | head -1)
[ -n "$JAR_REL" ] || die "cannot find the CLI_JAR=\"\$ROOT/...\" line in $KVP_DIR/kvprefix"
JAR="$KVP_DIR/$JAR_REL"
[ -f "$JAR" ] || die "$JAR not found: build the checkout first (cd $KVP_DIR && ./kvprefix setup)"
grep -q KVPREFIX_CLASSPATH "$KVP_DIR/kvprefix" \
  || die "$KVP_DIR/kvprefix does not support KVPREFIX_CLASSPATH (needed to run a jar snapshot without building)"
NEWER=$(find "$KVP_DIR/pom.xml" "$KVP_DIR/CMakeLists.txt" "$KVP_DIR/include" "$KVP_DIR/native" \
          "$KVP_DIR"/*/pom.xml "$KVP_DIR"/*/src/main -newer "$JAR" -type f -print -quit 2>/dev/null || true)
if [ -n "$NEWER" ]; then
  [ "$ALLOW_STALE" = 1 ] || die "the built jar is older than $NEWER: rebuild (cd $KVP_DIR && ./kvprefix setup) or pass --allow-stale"
  log "warning: the built jar is older than $NEWER (--allow-stale)"
fi

# Pre-flight: the yardstick (like Dynamo's PositionalIndexer) takes a stored block_hash for the
# Dynamo chain hash, whose first link is the local hash itself (C[0] = L[0]). Check the first
# stored event from position 0 (parent_hash null) for that.
if ! CHAIN_MSG=$(python3 - "$OPS" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    for n, line in enumerate(f, 1):
        if '"stored"' not in line:
            continue
        o = json.loads(line)
        if o.get("op") != "stored" or o.get("parent_hash") is not None or not o.get("blocks"):
            continue
        b = o["blocks"][0]
        if b["block_hash"] != b["tokens_hash"]:
            print(f"line {n}: first block stored from position 0 has block_hash {b['block_hash']} != tokens_hash "
                  f"{b['tokens_hash']}")
            sys.exit(1)
        print(f"line {n}: block_hash == tokens_hash at position 0 (Dynamo chain hashes)")
        sys.exit(0)
print("no stored event from position 0 found")
PY
); then
  if [ "$ALLOW_NO_MATCH" = 1 ]; then
    STREAM_BAD=1
    log "warning: $OPS: $CHAIN_MSG: the yardstick will match nothing on it (--allow-no-match: figures marked INVALID)"
  else
    die "$OPS: $CHAIN_MSG: its engine hashes are not Dynamo chain hashes, so the yardstick would match nothing and its
  matches would do no work. Write the stream with kvprefix gen-ops --engine-hashes dynamo or pass --allow-no-match"
  fi
fi

if [ -z "$RAW" ]; then RAW=$(mktemp -d /tmp/sbs.XXXXXX); fi
mkdir -p "$RAW" || die "cannot create $RAW"
RAW=$(cd "$RAW" && pwd)
cp "$JAR" "$RAW/kvprefix-cli.jar"
COMMIT=$(git -C "$KVP_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
DIRTY=$(git -C "$KVP_DIR" status --porcelain --untracked-files=no 2>/dev/null | wc -l || echo "?")

LOAD1=$(cut -d' ' -f1 /proc/loadavg)
if [ "$MAX_LOAD" != 0 ] && python3 -c "import sys; sys.exit(0 if float('$LOAD1') > float('$MAX_LOAD') else 1)"; then
  die "load average $LOAD1 is above --max-load $MAX_LOAD: the machine is not idle ($(cat /proc/loadavg))"
fi

{
  echo "kvprefix_dir=$KVP_DIR"; echo "commit=$COMMIT"; echo "dirty_tracked_files=$DIRTY"
  echo "jar_sha256=$(sha256sum "$RAW/kvprefix-cli.jar" | cut -d' ' -f1)"
  echo "yardstick=$YS"; echo "yardstick_sha256=$(sha256sum "$YS" | cut -d' ' -f1)"
  echo "ops=$OPS"; echo "ops_bytes=$(stat -c %s "$OPS")"
  echo "rounds=$ROUNDS repeat=$REPEAT warmup=$WARMUP writers=$WRITERS readers=$READERS impls=$IMPLS orders=$ORDERS kvp_args=$KVP_ARGS"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) nproc=$(nproc) cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "start_loadavg=$(cat /proc/loadavg)"
} > "$RAW/meta.txt"
log "commit $COMMIT (${DIRTY} modified tracked files), raw results in $RAW, load $LOAD1"

# shellcheck disable=SC2206
EXTRA=($KVP_ARGS)
TCK=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
# wait_quiet: until the whole machine used less than QUIET_CPU cores over a 3 s sample.
wait_quiet() {
  local waited=0 b0 b1 used
  while :; do
    b0=$(busy_ticks); sleep 3; b1=$(busy_ticks)
    used=$(python3 -c "print(f'{($b1-$b0)/$TCK/3:.2f}')")
    if python3 -c "import sys; sys.exit(0 if $used <= $QUIET_CPU else 1)"; then return 0; fi
    [ "$waited" -ge "$WAIT_QUIET" ] && die "the machine did not become quiet (${used} cores busy, limit $QUIET_CPU) within ${WAIT_QUIET}s"
    [ "$waited" -eq 0 ] && log "machine busy (${used} cores used by others); waiting for it to be quiet (up to ${WAIT_QUIET}s)"
    sleep 5; waited=$((waited + 8))
  done
}
# timed_run BASE NAME CMD...: runs CMD with stdout/stderr to BASE.NAME.{out,err}; writes BASE.NAME.cpu
# "wall_s own_cpu_s machine_busy_s foreign_cpu_s": foreign = the machine's busy CPU time during the
# run minus the run's own (user + system, children included), i.e. what other processes took.
timed_run() {
  local base=$1 name=$2; shift 2
  local b0 b1 rc=0
  b0=$(busy_ticks)
  /usr/bin/time -o "$base.$name.time" -f "%e %U %S" "$@" > "$base.$name.out" 2> "$base.$name.err" || rc=$?
  b1=$(busy_ticks)
  [ $rc -eq 0 ] || return $rc
  read -r wall usr sys < <(tail -1 "$base.$name.time")
  python3 -c "w,u,s,b=$wall,$usr,$sys,($b1-$b0)/$TCK; print(f'{w} {u+s:.2f} {b:.2f} {max(0.0,b-u-s):.2f}')" > "$base.$name.cpu"
}
# noisy BASE NAME: true if others used more than MAX_FOREIGN cores on average during the run
noisy() {
  read -r wall own busy foreign < "$1.$2.cpu"
  # 0.05 s floor: /proc/stat and /usr/bin/time both count in 10 ms ticks
  python3 -c "import sys; sys.exit(0 if $foreign > max($MAX_FOREIGN * $wall, 0.05) else 1)"
}
for order in "${ORDER_LIST[@]}"; do
  for r in $(seq 1 "$ROUNDS"); do
    base="$RAW/$order-r$r"
    attempt=1
    while :; do
      wait_quiet
      cut -d' ' -f1-3 /proc/loadavg > "$base.load"
      ycmd=("$YS" bench "$OPS" --writers "$WRITERS" --readers "$READERS" --repeat "$REPEAT" --order "$order")
      echo "${ycmd[*]}" > "$base.yardstick.cmd"
      timed_run "$base" yardstick "${ycmd[@]}" \
        || die "yardstick failed (round $r, $order); see $base.yardstick.err: $(tail -3 "$base.yardstick.err")"
      kcmd=(./kvprefix bench --ops "$OPS" --writers "$WRITERS" --readers "$READERS" --repeat "$REPEAT"
            --warmup "$WARMUP" --order "$order" --impl "$IMPLS" ${EXTRA[@]+"${EXTRA[@]}"})
      echo "(cd $KVP_DIR && KVPREFIX_CLASSPATH=$RAW/kvprefix-cli.jar ${kcmd[*]})" > "$base.kvprefix.cmd"
      (cd "$KVP_DIR" && export KVPREFIX_CLASSPATH="$RAW/kvprefix-cli.jar" && timed_run "$base" kvprefix "${kcmd[@]}") \
        || die "kvprefix bench failed (round $r, $order); see $base.kvprefix.err: $(tail -3 "$base.kvprefix.err")"
      if [ "$BRACKET" = 1 ]; then
        echo "${ycmd[*]}" > "$base.yardstick2.cmd"
        timed_run "$base" yardstick2 "${ycmd[@]}" \
          || die "yardstick failed (round $r, $order, after kvprefix); see $base.yardstick2.err"
      fi
      if noisy "$base" yardstick || noisy "$base" kvprefix || { [ "$BRACKET" = 1 ] && noisy "$base" yardstick2; }; then
        msg="foreign CPU s: yardstick $(cut -d' ' -f4 "$base.yardstick.cpu"), kvprefix $(cut -d' ' -f4 "$base.kvprefix.cpu")"
        [ "$BRACKET" = 1 ] && msg="$msg, yardstick after $(cut -d' ' -f4 "$base.yardstick2.cpu")"
        if [ "$attempt" -lt "$RETRIES" ]; then
          log "$order round $r: other processes used the CPU during it ($msg); discarded, redoing (attempt $((attempt + 1))/$RETRIES)"
          for f in "$base".load "$base".yardstick.* "$base".yardstick2.* "$base".kvprefix.*; do
            [ -e "$f" ] || continue
            mv "$f" "${f/$order-r$r./$order-r$r.discarded$attempt.}"
          done
          attempt=$((attempt + 1)); continue
        fi
        log "warning: $order round $r still disturbed after $RETRIES attempts ($msg); kept and flagged"
        touch "$base.noisy"
      fi
      break
    done
    log "$order round $r/$ROUNDS done (foreign CPU s: yardstick $(cut -d' ' -f4 "$base.yardstick.cpu"), kvprefix $(cut -d' ' -f4 "$base.kvprefix.cpu"); load $(cat "$base.load"))"
  done
done
echo "end_loadavg=$(cat /proc/loadavg)" >> "$RAW/meta.txt"

printf '%s\n' "$ORDERS" "$ROUNDS" "$IMPLS" "$ALLOW_NO_MATCH" "$STREAM_BAD" > "$RAW/report.args"
report_table "$RAW" "$ORDERS" "$ROUNDS" "$IMPLS" "$ALLOW_NO_MATCH" "$STREAM_BAD"
