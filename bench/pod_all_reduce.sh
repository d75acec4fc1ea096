#!/usr/bin/env bash
# The gradient all-reduce of an IPU-POD64 and of an IPU-POD256 (four
# IPU-POD64s joined by GW-Links), timing only, against the arithmetic of its
# stages. Per system: the tutorial MLP (workloads/tutorial_mlp_keras.json, one
# replica per IPU) runs STEPS steps with --synthetic-data and a profile; the
# exchanges of IPU 0's all-reduce (BSP slices of category collective named
# all_reduce/<stage>/<step>) are summed per stage and set beside the stage's
# arithmetic, computed here from the gradients' sizes and the parameters
# (bench/pod_all_reduce_arithmetic.py; it does not call the simulator):
#   ring step over IPU-Links: latency + chunk bytes / (links x 32 GB/s), or a
#     tile's port (its bytes / 4 + exchange latency) if that is longer;
#   GW-Link step: latency + the bytes of the gateway's 4 IPUs / (links x 12.5 GB/s).
# Usage: IPUSIM=build/bin/ipusim bench/pod_all_reduce.sh   (SYSTEMS="pod256" STEPS=2 to shorten)
source "$(dirname "$0")/common.sh"
SYSTEMS="${SYSTEMS:-pod64 pod256}"
STEPS="${STEPS:-2}"
command -v sqlite3 >/dev/null || { echo "bench: sqlite3 is missing (apt-get install sqlite3)" >&2; exit 1; }
workload="$BENCH_ROOT/workloads/tutorial_mlp_keras.json"
machine_line
for system in $SYSTEMS; do
  out="$BENCH_TMP/$system"
  /usr/bin/time -f '%e s wall, %M KiB peak RSS' -o "$BENCH_TMP/time.txt" \
    env POPLAR_ENGINE_OPTIONS="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$out\"}" \
    "$IPUSIM" run "$workload" --workload-set "ipu.system=\"$system\"" --steps "$STEPS" --steps-per-execution "$STEPS" \
    --synthetic-data >"$BENCH_TMP/run.txt" 2>&1 || { cat "$BENCH_TMP/run.txt" >&2; exit 1; }
  echo "# $system: $(cat "$BENCH_TMP/time.txt")"
  # IPU 0's all-reduce exchanges (each one phase), in time order; the script takes the first step's.
  sqlite3 -separator $'\t' "$out/profile.pop" "
    SELECT s.name, s.dur FROM slices s JOIN tracks t ON t.id = s.track_id
    WHERE t.kind = 'bsp' AND t.ipu = 0 AND s.category = 'collective' AND s.name LIKE 'all_reduce/%'
      AND s.name NOT LIKE '%/add' AND s.name NOT LIKE 'all_reduce/mean%' ORDER BY s.ts" >"$BENCH_TMP/phases.tsv"
  "$IPUSIM" params --arch ipu2 --system "$system" >"$BENCH_TMP/params.txt"
  python3 "$BENCH_ROOT/bench/pod_all_reduce_arithmetic.py" "$BENCH_TMP/params.txt" \
    "$BENCH_ROOT/workloads/keras/tutorial_mlp_tf2.json" "$BENCH_TMP/phases.tsv"
done
