#!/usr/bin/env bash
# The compiler's benchmark (issue "The compiler plans like PopLibs"):
#  1. compile time and peak host memory of every bundled workload, of the
#     3 x Dense(4096) MLP in float32 and float16, and of a model that cannot
#     fit (3 x Dense(16384): it must fail with the out-of-memory summary);
#     then the same with the load and one synthetic step (the wait before
#     the first step);
#  2. the MLP's device step (compute + exchange + sync), measured by running
#     STEPS synthetic steps, against the AMP lower bound (training MACs /
#     (16 float MACs x 1,472 tiles) per cycle), and the AMP efficiency of
#     each matmul's compute sets, read from the run's profile;
#  3. the tutorial's device step against the 82,070 cycles of the first
#     compiler (run with that compiler's machine constants when OLD_CONSTANTS=1).
# Usage: bench/compiler.sh   (IPUSIM, STEPS as in common.sh)
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-20}"
machine_line

# timed_row WORKLOAD DESCRIBE COMMAND...: runs COMMAND (its stdout to
# $BENCH_TMP/c.json) under /usr/bin/time and prints the workload, wall s, CPU s
# (user+sys), peak RSS MiB and what the function DESCRIBE prints, or the start
# of the error.
timed_row() {
  local w="$1" describe="$2" timing="$BENCH_TMP/time.txt" result
  shift 2
  if /usr/bin/time -v -o "$timing" "$@" >"$BENCH_TMP/c.json" 2>"$BENCH_TMP/err.txt"; then
    result="$("$describe")"
  else
    result="fails: $(head -c 160 "$BENCH_TMP/err.txt" | tr '\n' ' ')"
  fi
  local wall cpu rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$timing")
  cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u + s}' "$timing")
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$timing")
  echo -e "$(basename "$w")\t$wall\t$cpu\t$rss\t$result"
}

compiled() {
  echo "fits: fullest tile $(jq .max_tile_bytes "$BENCH_TMP/c.json") B, estimated step $(jq .estimated_step_cycles "$BENCH_TMP/c.json") cycles"
}
ran() { echo ran; }

echo -e "\n## compile: wall s, CPU s (user+sys), peak RSS MiB, result"
for w in "$BENCH_ROOT"/workloads/*.json "$BENCH_ROOT"/bench/workloads/*.json; do
  timed_row "$w" compiled "$IPUSIM" compile "$w" --json
done

# What a user waits for before the first step: compile, load (memory laid
# out, every exchange planned) and the first weight update (one step, or the
# gradient accumulation's mini-batches), synthetic. The load was most of it
# for the large models before the planner stopped listing 2-D regions row by row.
echo -e "\n## compile + load + first weight update, synthetic: wall s, CPU s (user+sys), peak RSS MiB"
for w in "$BENCH_ROOT"/workloads/*.json "$BENCH_ROOT"/bench/workloads/*.json; do
  n=$(jq '.pipeline.gradient_accumulation_count // .training.gradient_accumulation_count // 1' "$w")
  timed_row "$w" ran "$IPUSIM" run "$w" --steps "$n" --steps-per-execution "$n" --synthetic-data --json
done

# device_step WORKLOAD: runs STEPS synthetic steps with a profile, prints the
# measured step, the AMP bound and the matmul compute sets' efficiency.
device_step() {
  local w="$1" dir="$BENCH_TMP/$(basename "$1" .json)"
  POPLAR_ENGINE_OPTIONS="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$dir\"}" \
    "$IPUSIM" run "$w" --steps "$STEPS" --synthetic-data --json >"$BENCH_TMP/run.json"
  "$IPUSIM" compile "$w" --json >"$BENCH_TMP/plan.json"
  local step bound
  step=$(jq '.step_cycles.compute + .step_cycles.exchange + .step_cycles.sync' "$BENCH_TMP/run.json")
  bound=$(jq '.step_macs / (16 * 1472)' "$BENCH_TMP/plan.json")
  echo -e "$(basename "$w")\tdevice step $step cycles\tfloat32 AMP bound $(printf %.0f "$bound")\tratio $(awk -v a="$step" -v b="$bound" 'BEGIN {printf "%.2f", a / b}')"
  # Each matmul's AMP compute sets (one per serial pass): MACs / (peak x measured cycles).
  local peak
  peak=$(jq '.amp_macs_per_cycle' "$BENCH_TMP/plan.json")
  jq -r '.matmuls[] | [.op, .m * .k * .n, .serial] | @tsv' "$BENCH_TMP/plan.json" | while IFS=$'\t' read -r op macs serial; do
    cycles=$(sqlite3 "$dir/profile.pop" "SELECT max(c) FROM (SELECT p.id, max(t.cycles) AS c FROM phases p JOIN tile_phase_cycles t ON t.phase_id = p.id WHERE p.kind = 'compute' AND (p.name = '$op' OR p.name LIKE '$op/rows_%') GROUP BY p.id)")
    passes=$(sqlite3 "$dir/profile.pop" "SELECT count(*) FROM phases WHERE kind = 'compute' AND (name = '$op' OR name LIKE '$op/rows_%')")
    [[ -n "$cycles" && "$passes" -gt 0 ]] || continue
    echo -e "  $op\t$macs MACs\t$passes compute set(s) of $cycles cycles\tAMP efficiency $(awk -v m="$macs" -v p="$peak" -v c="$cycles" -v n="$passes" 'BEGIN {printf "%.0f%%", 100 * m / (p * c * n)}')"
  done
}

echo -e "\n## device step (STEPS=$STEPS, synthetic data)"
device_step "$BENCH_ROOT/workloads/mlp_4096.json"
device_step "$BENCH_ROOT/workloads/mlp_4096_float16.json"

echo -e "\n## the tutorial's device step (the first compiler: 82,070 cycles)"
old=()
if [[ "${OLD_CONSTANTS:-0}" == 1 ]]; then
  old=(--set tile.supervisorOverheadCycles=50 --set sync.internalCycles=150 --set sync.externalCycles=1500)
fi
"$IPUSIM" run "$BENCH_ROOT/workloads/mnist_with_feeds.json" --steps 200 --synthetic-data --json "${old[@]}" >"$BENCH_TMP/t.json"
jq -r '"mnist_with_feeds\tdevice step \(.step_cycles.compute + .step_cycles.exchange + .step_cycles.sync) cycles (compute \(.step_cycles.compute), exchange \(.step_cycles.exchange), sync \(.step_cycles.sync)), \(.tiles_used) tiles"' "$BENCH_TMP/t.json"
