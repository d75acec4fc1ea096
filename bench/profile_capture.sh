#!/usr/bin/env bash
# Cost of capturing the execution profile: the tutorial with feeds (functional,
# STEPS steps, default 10,000) without autoReport, then with tile-level capture
# of 2, 10 and 100 runs. Extra wall time is against the run without autoReport;
# slice rows per second = slices in profile.pop / extra CPU time (user+sys;
# wall time on a shared machine is noisier than the cost being measured).
# Usage: IPUSIM=build/bin/ipusim bench/profile_capture.sh
source "$(dirname "$0")/common.sh"
command -v sqlite3 >/dev/null || { echo "bench: sqlite3 is missing (apt-get install sqlite3)" >&2; exit 1; }
STEPS="${STEPS:-10000}"
workload="$BENCH_ROOT/workloads/mnist_with_feeds.json"
machine_line
echo "# mnist_with_feeds, functional, $STEPS steps, tile-level instrumentation (the default)"
unset POPLAR_ENGINE_OPTIONS
base=$(measure run "$workload" --steps "$STEPS")
base_wall=$(cut -f1 <<<"$base")
base_cpu=$(cut -f2 <<<"$base")
printf 'captured_runs\twall_s\tcpu_s\textra_wall_s\textra_cpu_s\tprofile_MiB\tslices\tslices_per_extra_cpu_s\tpeak_rss_MiB\n'
printf '0\t%s\t%s\t0\t0\t-\t-\t-\t%s\n' "$base_wall" "$base_cpu" "$(cut -f5 <<<"$base")"
for count in 2 10 100; do
  dir="$BENCH_TMP/report_$count"
  export POPLAR_ENGINE_OPTIONS="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$dir\",\"autoReport.executionProfileProgramRunCount\":\"$count\"}"
  row=$(measure run "$workload" --steps "$STEPS")
  wall=$(cut -f1 <<<"$row")
  pop=$(find "$dir" -name profile.pop | head -1)
  [[ -n "$pop" ]] || { echo "bench: no profile.pop under $dir" >&2; exit 1; }
  size=$(awk -v b="$(stat -c %s "$pop")" 'BEGIN {printf "%.1f", b / 1048576}')
  slices=$(sqlite3 "$pop" 'SELECT COUNT(*) FROM slices')
  cpu=$(cut -f2 <<<"$row")
  extra=$(awk -v a="$wall" -v b="$base_wall" 'BEGIN {printf "%.3f", a - b}')
  extra_cpu=$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN {printf "%.2f", a - b}')
  rate=$(awk -v s="$slices" -v e="$extra_cpu" 'BEGIN {if (e > 0) printf "%.0f", s / e; else print "-"}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$count" "$wall" "$cpu" "$extra" "$extra_cpu" "$size" "$slices" "$rate" \
    "$(cut -f5 <<<"$row")"
done
