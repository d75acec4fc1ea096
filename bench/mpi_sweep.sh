#!/usr/bin/env bash
# `mpirun ipusim sweep` on 1 and 2 ranks against the one-process sweep: the
# same sweep (the tutorial, functional, POINTS over --tiles, STEPS steps a
# point) run as one process with -j 1, on 1 rank and on 2 ranks of mpirun
# (-j 1 on each, --bind-to none), and as one process with -j 2 (the 2 ranks'
# parallelism without MPI). Per run the wall time (median of REPS), its
# ratio to 1 rank, and the check that its sweep.csv, sweep.json and
# sweep.png are the one-process sweep's byte for byte. The overhead of
# mpirun (its start, MPI_Init and MPI_Finalize of every rank) is the 1-rank
# run less the one-process -j 1 run. This machine has 2 cores (shared): 2
# ranks can at best halve the time, and do so only when the points are long
# against mpirun's start. Each point's model runs on one host thread
# (IPUSIM_WORKER_THREADS=1, THREADS= to change): by default a functional run
# takes a second thread where it is faster, and one point alone would then
# use both cores. CPU time (user+sys) counts every process of the run.
# Usage: IPUSIM=build/bin/ipusim bench/mpi_sweep.sh   (REPS=1, STEPS=500, POINTS=16,32 to shorten)
source "$(dirname "$0")/common.sh"
REPS="${REPS:-3}"
STEPS="${STEPS:-2000}"
POINTS="${POINTS:-16,32,64,128,256,512,1024,1472}"
export IPUSIM_WORKER_THREADS="${THREADS:-1}"
command -v mpirun >/dev/null || { echo "bench: mpirun is missing (apt-get install openmpi-bin)" >&2; exit 1; }
# As tests/mpi_sweep/check: shared memory, ob1, loopback, no CMA (sim/cluster/README.md).
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x IPUSIM_WORKER_THREADS)
workload="$BENCH_ROOT/workloads/mnist_with_feeds.json"
sweep=(sweep "$workload" --vary "tiles=$POINTS" --steps "$STEPS")
unset POPLAR_ENGINE_OPTIONS

# run NAME COMMAND...: "wall_s cpu_s" of COMMAND (its output into $BENCH_TMP/NAME).
run() {
  local name=$1
  shift
  rm -rf "${BENCH_TMP:?}/$name"
  /usr/bin/time -f '%e %U %S' -o "$BENCH_TMP/$name.time" "$@" -o "$BENCH_TMP/$name" >"$BENCH_TMP/$name.out" \
    2>"$BENCH_TMP/$name.err" || { echo "bench: $* failed:" >&2; cat "$BENCH_TMP/$name.err" >&2; return 1; }
  awk '{ print $1, $2 + $3 }' "$BENCH_TMP/$name.time"
}

# command_of NAME: the command line of run NAME.
command_of() {
  case $1 in
    one_j1) command=("$IPUSIM" "${sweep[@]}" -j 1) ;;
    rank1) command=("${mpi[@]}" -n 1 "$IPUSIM" "${sweep[@]}" -j 1) ;;
    rank2) command=("${mpi[@]}" -n 2 "$IPUSIM" "${sweep[@]}" -j 1) ;;
    one_j2) command=("$IPUSIM" "${sweep[@]}" -j 2) ;;
  esac
}

machine_line
echo "# $(echo "$POINTS" | tr ',' '\n' | wc -l) points (--tiles $POINTS), $STEPS functional steps each, median of $REPS"
# The runs interleaved (one of each, REPS times), so that a change of the
# machine's load falls on all of them; per run the median wall time's row.
names=(one_j1 rank1 rank2 one_j2)
declare -A rows wall cpu
for ((rep = 0; rep < REPS; ++rep)); do
  for name in "${names[@]}"; do
    command_of "$name"
    rows[$name]+="$(run "$name" "${command[@]}")"$'\n'
  done
done
for name in "${names[@]}"; do
  read -r wall[$name] cpu[$name] <<<"$(printf '%s' "${rows[$name]}" | sort -n -k1,1 | sed -n "$(((REPS + 1) / 2))p")"
done
printf 'run\twall_s\tcpu_s\t1_rank_over_this\tsame_outputs\n'
for name in "${names[@]}"; do
  same=yes
  for file in sweep.csv sweep.json sweep.png; do
    cmp -s "$BENCH_TMP/one_j1/$file" "$BENCH_TMP/$name/$file" || same="no ($file)"
  done
  label=$name
  case $name in
    one_j1) label="one process, -j 1" ;;
    rank1) label="mpirun -n 1" ;;
    rank2) label="mpirun -n 2" ;;
    one_j2) label="one process, -j 2" ;;
  esac
  ratio=$(awk -v a="${wall[rank1]}" -v b="${wall[$name]}" 'BEGIN { print a / b }')
  printf '%s\t%.2f\t%.2f\t%.2f\t%s\n' "$label" "${wall[$name]}" "${cpu[$name]}" "$ratio" "$same"
done
printf '# mpirun overhead (1 rank less one process, -j 1): %.2f s wall, %.2f s CPU; 2 ranks over 1: x%.2f\n' \
  "$(awk -v a="${wall[rank1]}" -v b="${wall[one_j1]}" 'BEGIN { print a - b }')" \
  "$(awk -v a="${cpu[rank1]}" -v b="${cpu[one_j1]}" 'BEGIN { print a - b }')" \
  "$(awk -v a="${wall[rank1]}" -v b="${wall[rank2]}" 'BEGIN { print a / b }')"
grep -h "points per rank" "$BENCH_TMP/rank2.err" | sed 's/^/# 2 ranks: /'
