# Helpers shared by the bench/*.sh scripts (sourced, not run).
# IPUSIM: the ipusim binary (default build/bin/ipusim, from .ci/setup).
# Needs /usr/bin/time (Debian package `time`) and jq.
set -euo pipefail
BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IPUSIM="${IPUSIM:-$BENCH_ROOT/build/bin/ipusim}"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
[[ -x "$IPUSIM" ]] || { echo "bench: $IPUSIM is not an executable (set IPUSIM=path/to/ipusim)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: jq is missing (apt-get install jq)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
BENCH_TMP="$(mktemp -d)"
trap 'rm -rf "$BENCH_TMP"' EXIT

# Machine and load, for the record.
machine_line() {
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
       "load average $(cut -d' ' -f1-3 /proc/loadavg), ipusim $IPUSIM"
}

# measure ARGS...: runs `ipusim ARGS... --json` once under /usr/bin/time -v and
# prints one tab-separated row:
#   wall_s cpu_s(user+sys) simulated_s speed_factor peak_rss_MiB final_loss
measure() {
  local json="$BENCH_TMP/out.json" timing="$BENCH_TMP/time.txt"
  if ! /usr/bin/time -v -o "$timing" "$IPUSIM" "$@" --json >"$json" 2>"$BENCH_TMP/err.txt"; then
    echo "bench: ipusim $* failed:" >&2
    cat "$BENCH_TMP/err.txt" >&2
    return 1
  fi
  local user sys rss
  user=$(awk -F': ' '/User time/ {print $2}' "$timing")
  sys=$(awk -F': ' '/System time/ {print $2}' "$timing")
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$timing")
  jq -r --arg user "$user" --arg sys "$sys" --arg rss "$rss" \
    '[(.wall_seconds * 1000 | round / 1000), (($user | tonumber) + ($sys | tonumber) | . * 100 | round / 100),
      (.simulated_seconds * 1000 | round / 1000), (.speed_factor * 1000 | round / 1000), ($rss | tonumber),
      (.final_loss // "n/a")] | @tsv' "$json"
}

# median_of N ARGS...: `measure` N times, prints the row of median wall time.
median_of() {
  local n="$1"
  shift
  local rows=()
  for ((i = 0; i < n; ++i)); do rows+=("$(measure "$@")"); done
  printf '%s\n' "${rows[@]}" | sort -n -k1,1 | sed -n "$(((n + 1) / 2))p"
}
