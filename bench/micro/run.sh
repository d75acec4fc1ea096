#!/usr/bin/env bash
# The microbenchmark suite in one command: runs every microbenchmark of
# ipusim-micro on ipu1 and ipu2 (each in its own process) and prints the
# markdown table of bench/VALIDATION.md (simulated, published, ratio, source).
# Usage: bench/micro/run.sh [build dir, default build]   (after building ipusim-micro)
set -euo pipefail
cd "$(dirname "$0")/../.."
micro="${1:-build}/bin/ipusim-micro"
[[ -x "$micro" ]] || { echo "bench/micro/run.sh: $micro not found; build the ipusim-micro target first" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench/micro/run.sh: needs jq (listed in .ci/setup)" >&2; exit 1; }
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

echo "| benchmark | arch | what | simulated | published | unit | ratio | within | source / note |"
echo "|---|---|---|---|---|---|---|---|---|"
for bench in $("$micro" --list); do
  for arch in ipu1 ipu2; do
    "$micro" --bench "$bench" --arch "$arch" | jq -r '
      def num: if . == null then "—" else (. * 1000 | round / 1000 | tostring) end;
      "| \(.bench) | \(.arch) | \(.what) | \(.simulated | num) | \(.published | num) | \(.unit) | " +
      "\(.ratio | num) | \(if .published == null then "n/a" elif .within then "yes" else "NO" end) | " +
      "\(.source)\(if .note != "" then "; " + .note else "" end) |"'
  done
done
