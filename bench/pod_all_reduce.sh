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
# With RANKS=H, each system runs as H instances (mpirun -n H, timing only: every rank times every replica)
# and IPU 0's exchanges are read from instance 0's profile (profile.rank0.pop, which holds IPU 0). POD256 on
# 16 ranks of a 2-core, 24 GiB machine: 262 s, 23.9 GB in use at the peak (a build running beside it).
# Usage: IPUSIM=build/bin/ipusim bench/pod_all_reduce.sh   (SYSTEMS="pod256" STEPS=2 RANKS=16)
source "$(dirname "$0")/common.sh"
SYSTEMS="${SYSTEMS:-pod64 pod256}"
STEPS="${STEPS:-2}"
RANKS="${RANKS:-}"
launcher=() profile=profile.pop
if [[ -n $RANKS ]]; then
  command -v mpirun >/dev/null || { echo "bench: mpirun is missing (apt-get install openmpi-bin)" >&2; exit 1; }
  launcher=(mpirun --allow-run-as-root --oversubscribe --bind-to none -n "$RANKS") profile=profile.rank0.pop
fi
command -v sqlite3 >/dev/null || { echo "bench: sqlite3 is missing (apt-get install sqlite3)" >&2; exit 1; }
workload="$BENCH_ROOT/workloads/tutorial_mlp_keras.json"
machine_line
for system in $SYSTEMS; do
  out="$BENCH_TMP/$system"
  /usr/bin/time -f '%e s wall, %M KiB peak RSS' -o "$BENCH_TMP/time.txt" \
    env POPLAR_ENGINE_OPTIONS="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$out\"}" \
    "${launcher[@]}" "$IPUSIM" run "$workload" --workload-set "ipu.system=\"$system\"" --steps "$STEPS" --steps-per-execution "$STEPS" \
    --synthetic-data >"$BENCH_TMP/run.txt" 2>&1 || { cat "$BENCH_TMP/run.txt" >&2; exit 1; }
  echo "# $system: $(cat "$BENCH_TMP/time.txt")"
  # IPU 0's all-reduce exchanges (each one phase), in time order; the script takes the first step's.
  sqlite3 -separator $'\t' "$out/$profile" "
    SELECT s.name, s.dur FROM slices s JOIN tracks t ON t.id = s.track_id
    WHERE t.kind = 'bsp' AND t.ipu = 0 AND s.category = 'collective' AND s.name LIKE 'all_reduce/%'
      AND s.name NOT LIKE '%/add' AND s.name NOT LIKE 'all_reduce/mean%' ORDER BY s.ts" >"$BENCH_TMP/phases.tsv"
  "$IPUSIM" params --arch ipu2 --system "$system" >"$BENCH_TMP/params.txt"
  python3 "$BENCH_ROOT/bench/pod_all_reduce_arithmetic.py" "$BENCH_TMP/params.txt" \
    "$BENCH_ROOT/workloads/keras/tutorial_mlp_tf2.json" "$BENCH_TMP/phases.tsv"
done
