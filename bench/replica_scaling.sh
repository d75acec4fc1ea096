#!/usr/bin/env bash
# Data-parallel scaling: the tutorial (feeds) replicated over 1, 2, 4, 8, 16
# IPUs (ipu.num_ipus; batch 32 per replica, so the global batch grows), with
# the host as fitted and with the host made free (every host.* time and the
# host link's latency 0, its bandwidth 1e15 B/s). Per row: the simulated
# step (cycles), throughput (examples per simulated second), the all-reduce
# share of IPU 0's step (category collective: the gradient all-reduce's syncs,
# exchanges over the links and additions), and the simulator's own wall and CPU time
# (timing only, --synthetic-data, and functional), with their growth over
# one replica.
# Timing-only runs compile one replica's program for all of them
# (sim/README.md, "Replicas in timing-only mode"); RUN_FLAGS=--full-replicas
# lays out and times every replica instead.
# Usage: IPUSIM=build/bin/ipusim bench/replica_scaling.sh   (REPLICAS="1 4" STEPS=100 to shorten;
#        HOSTS="fitted" MODES="synthetic" for one host and mode; RUN_FLAGS="..." added to every run)
source "$(dirname "$0")/common.sh"
REPLICAS="${REPLICAS:-1 2 4 8 16}"
STEPS="${STEPS:-200}"
HOSTS="${HOSTS:-fitted free}"
MODES="${MODES:-synthetic functional}"
read -r -a run_flags <<<"${RUN_FLAGS:-}"
workload="$BENCH_ROOT/workloads/mnist_with_feeds.json"
free_host=(--set host.runDispatchSeconds=0 --set host.streamStartupSeconds=0 --set host.streamServiceSeconds=0
           --set host.batchPrepareSeconds=0 --set host.outfeedDequeueSeconds=0 --set hostLink.latencySeconds=0
           --set hostLink.bytesPerSecond=1e15)
unset POPLAR_ENGINE_OPTIONS
machine_line
printf 'replicas\thost\tmode\tstep_cycles\texamples_per_s\tallreduce_share\twall_s\tcpu_s\twall_vs_1\tcpu_vs_1\n'
declare -A base cpu_base
for host in $HOSTS; do
  extra=()
  [[ $host == free ]] && extra=("${free_host[@]}")
  for mode in $MODES; do
    flags=()
    [[ $mode == synthetic ]] && flags=(--synthetic-data)
    flags+=("${run_flags[@]}")
    for r in $REPLICAS; do
      json="$BENCH_TMP/r.json"
      start=$(date +%s.%N)
      /usr/bin/time -f '%U %S' -o "$BENCH_TMP/t.txt" "$IPUSIM" run "$workload" --steps "$STEPS" \
        --workload-set "ipu.num_ipus=$r" "${flags[@]}" "${extra[@]}" --json >"$json" 2>"$BENCH_TMP/err.txt" ||
        { cat "$BENCH_TMP/err.txt" >&2; exit 1; }
      wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
      cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$BENCH_TMP/t.txt")
      key="$host/$mode"
      [[ -z "${base[$key]:-}" ]] && base[$key]=$wall
      [[ -z "${cpu_base[$key]:-}" ]] && cpu_base[$key]=$cpu
      jq -r --arg r "$r" --arg h "$host" --arg m "$mode" --arg w "$wall" --arg c "$cpu" --arg b "${base[$key]}" --arg cb "${cpu_base[$key]}" '
        [$r, $h, $m, (.step_cycles.total | round),
         ((($r | tonumber) * 32 * .steps / .simulated_seconds) | round),
         ((.step_cycles.collective / .step_cycles.total * 1000 | round) / 1000),
         $w, $c, (((($w | tonumber) / ($b | tonumber)) * 100 | round) / 100),
         (((($c | tonumber) / ($cb | tonumber)) * 100 | round) / 100)] | @tsv' "$json"
    done
  done
done
