#!/usr/bin/env bash
# How wall time grows with tiles and steps: the tutorial with feeds
# (functional, no autoReport) at --tiles 16, 64, 256, 1472 and 1,000 / 10,000
# steps, then the exponents of wall ~ tiles^a (at the largest step count) and
# wall ~ steps^b (at 1472 tiles), least-squares fits in log-log.
# Usage: IPUSIM=build/bin/ipusim bench/scaling.sh   (TILES="16 64" STEPS_LIST="1000" to shorten)
source "$(dirname "$0")/common.sh"
TILES="${TILES:-16 64 256 1472}"
STEPS_LIST="${STEPS_LIST:-1000 10000}"
workload="$BENCH_ROOT/workloads/mnist_with_feeds.json"
unset POPLAR_ENGINE_OPTIONS
machine_line
printf 'tiles\tsteps\twall_s\tcpu_s\tsimulated_s\tspeed_factor\tpeak_rss_MiB\tfinal_loss\n'
table="$BENCH_TMP/table.tsv"
for tiles in $TILES; do
  for steps in $STEPS_LIST; do
    row=$(measure run "$workload" --tiles "$tiles" --steps "$steps")
    printf '%s\t%s\t%s\n' "$tiles" "$steps" "$row" | tee -a "$table"
  done
done
max_steps=$(tr ' ' '\n' <<<"$STEPS_LIST" | sort -n | tail -1)
max_tiles=$(tr ' ' '\n' <<<"$TILES" | sort -n | tail -1)
fit() {  # fit COLUMN_X FILTER_COLUMN FILTER_VALUE: slope of log(wall) on log(x)
  awk -F'\t' -v x="$1" -v fc="$2" -v fv="$3" '$fc == fv {
      lx = log($x); ly = log($3); n++; sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly }
    END { if (n < 2 || n * sxx == sx * sx) print "n/a"; else printf "%.2f", (n * sxy - sx * sy) / (n * sxx - sx * sx) }' "$table"
}
echo "# wall ~ tiles^$(fit 1 2 "$max_steps") at $max_steps steps; wall ~ steps^$(fit 2 1 "$max_tiles") at $max_tiles tiles"
