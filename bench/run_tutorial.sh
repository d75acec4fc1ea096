#!/usr/bin/env bash
# The tutorial, full length (10,000 steps, ipu2): with feeds and without,
# functional and --synthetic-data, with autoReport capturing 10 runs at tile
# level (the issue's configuration). Median of REPS runs (default 3).
# Usage: IPUSIM=build/bin/ipusim bench/run_tutorial.sh
source "$(dirname "$0")/common.sh"
REPS="${REPS:-3}"
STEPS="${STEPS:-10000}"
machine_line
echo "# median of $REPS, $STEPS steps, POPLAR_ENGINE_OPTIONS autoReport.all, executionProfileProgramRunCount 10"
printf 'workload\tmode\twall_s\tcpu_s\tsimulated_s\tspeed_factor\tpeak_rss_MiB\tfinal_loss\n'
for workload in mnist_with_feeds mnist_without_feeds; do
  for mode in functional synthetic; do
    flags=()
    [[ $mode == synthetic ]] && flags+=(--synthetic-data)
    export POPLAR_ENGINE_OPTIONS="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$BENCH_TMP/report\",\"autoReport.executionProfileProgramRunCount\":\"10\"}"
    row=$(median_of "$REPS" run "$BENCH_ROOT/workloads/$workload.json" --steps "$STEPS" "${flags[@]}")
    printf '%s\t%s\t%s\n' "$workload" "$mode" "$row"
  done
done
