#!/usr/bin/env bash
# `mpirun ipusim run` of the tutorial's REPLICAS functional replicas (8 by
# default: workloads/mnist_replicated_4ipus.json with ipu.num_ipus=REPLICAS,
# STEPS steps) as one process and on 1, 2 and 4 ranks (mpirun --bind-to none --oversubscribe): per run the wall
# and CPU time (user+sys of every process, median of REPS, the runs
# interleaved), the most seconds a rank spent in MPI (its gathers, as the
# rank's stderr line says), and whether rank 0's weights digest and cycles
# are the one process's. This machine has 2 cores: the gain, if any, stops
# at 2 ranks. BATCH= changes dataset.batch_size (more compute a step for
# the same gradients).
# Usage: IPUSIM=build/bin/ipusim bench/mpi_run.sh   (REPS=1, STEPS=100 to shorten)
source "$(dirname "$0")/common.sh"
REPS="${REPS:-3}"
STEPS="${STEPS:-300}"
BATCH="${BATCH:-32}"
REPLICAS="${REPLICAS:-8}"
command -v mpirun >/dev/null || { echo "bench: mpirun is missing (apt-get install openmpi-bin)" >&2; exit 1; }
# As tests/mpi_run/check: shared memory, ob1, loopback, no CMA (sim/cluster/README.md).
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
run=(run "$BENCH_ROOT/workloads/mnist_replicated_4ipus.json" --steps "$STEPS" --json
     --workload-set "dataset.batch_size=$BATCH" --workload-set "ipu.num_ipus=$REPLICAS")
unset POPLAR_ENGINE_OPTIONS

# run_one NAME COMMAND...: "wall_s cpu_s mpi_s digest cycles" of COMMAND.
run_one() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$BENCH_TMP/$name.time" "$@" >"$BENCH_TMP/$name.json" 2>"$BENCH_TMP/$name.err" ||
    { echo "bench: $* failed:" >&2; cat "$BENCH_TMP/$name.err" >&2; return 1; }
  local mpi_s
  mpi_s=$(grep -o '[0-9.e-]* s in MPI' "$BENCH_TMP/$name.err" | awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }')
  local digest cycles
  digest=$(jq -r '.weights_digest' "$BENCH_TMP/$name.json")
  cycles=$(jq -r '.cycles' "$BENCH_TMP/$name.json")
  echo "$(awk '{ print $1, $2 + $3 }' "$BENCH_TMP/$name.time") $mpi_s $digest $cycles"
}

machine_line
echo "# $REPLICAS functional replicas, $STEPS steps, batch $BATCH a replica, median of $REPS"
names=(one rank1 rank2 rank4)
declare -A rows
for ((rep = 0; rep < REPS; ++rep)); do
  for name in "${names[@]}"; do
    case $name in
      one) rows[$name]+="$(run_one one "$IPUSIM" "${run[@]}")"$'\n' ;;
      rank*) rows[$name]+="$(run_one "$name" "${mpi[@]}" -n "${name#rank}" "$IPUSIM" "${run[@]}")"$'\n' ;;
    esac
  done
done
printf 'run\twall_s\tcpu_s\tmpi_s_most\tsame_as_one\n'
read -r _ _ _ digest cycles <<<"$(printf '%s' "${rows[one]}" | head -1)"
for name in "${names[@]}"; do
  read -r wall cpu mpi_s d c <<<"$(printf '%s' "${rows[$name]}" | sort -n -k1,1 | sed -n "$(((REPS + 1) / 2))p")"
  same=yes
  [[ $d == "$digest" && $c == "$cycles" ]] || same="no (digest $d, cycles $c)"
  label=$([[ $name == one ]] && echo "one process" || echo "mpirun -n ${name#rank}")
  printf '%s\t%.2f\t%.2f\t%.2f\t%s\n' "$label" "$wall" "$cpu" "$mpi_s" "$same"
done
