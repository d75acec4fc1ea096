#!/usr/bin/env bash
# ipusim against the yardstick: the tutorial's training (functional, with
# feeds, autoReport capturing 10 runs, as in issue 12) and the same training
# with numpy (bench/numpy_yardstick.py), run alternately: numpy, ipusim with
# the default threads, ipusim --threads 1, REPS times (each repetition in
# another order); first on the machine as it is ("quiet"), then with a CPU
# hog (one busy loop per CPU) running.
# Prints every run and the median ratios (wall and CPU = user+sys; a ratio
# below 1 means ipusim or the default threads is faster), with the quartiles
# of the repetitions' ratios.
# Usage: IPUSIM=build/bin/ipusim bench/yardstick.sh
# Environment: STEPS (10000), REPS (6: each order once), WORKLOAD (workloads/mnist_with_feeds.json;
#   also the large MLP, or a Keras model such as workloads/mnist_convnet.json:
#   what bench/numpy_yardstick.py can train),
#   CONDITIONS ("quiet hog"), PROFILE (1: autoReport on, 0: off),
#   CONTROL (1: "default" runs --threads 1 as well: an A/A control),
#   NUMPY_THREADS (1: the BLAS threads of numpy; products of 32 x 784 x 128
#   gain nothing from more, and a threaded OpenBLAS on a loaded machine was
#   measured up to 20x slower in wall time than on one thread).
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-10000}"
REPS="${REPS:-6}"
WORKLOAD="${WORKLOAD:-$BENCH_ROOT/workloads/mnist_with_feeds.json}"
CONDITIONS="${CONDITIONS:-quiet hog}"
PROFILE="${PROFILE:-1}"
CONTROL="${CONTROL:-0}"
NUMPY_THREADS="${NUMPY_THREADS:-1}"
PYTHON=/usr/bin/python3  # Debian's, with Debian's python3-numpy
CPUS="$(nproc)"  # the CPUs this process may use: one busy loop each for the hog
export OPENBLAS_NUM_THREADS="$NUMPY_THREADS"

if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  if [[ $(id -u) -eq 0 ]]; then
    echo "bench: installing Debian's python3-numpy" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-numpy >&2
  else
    echo "bench: numpy is missing: run 'apt-get install python3-numpy' as root" >&2
    exit 1
  fi
fi

# The BLAS numpy's matrix products run on (Debian's alternatives: reference
# BLAS from libblas3, or OpenBLAS from libopenblas0-*): it decides numpy's speed.
blas="$(readlink -f "/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libblas.so.3" 2>/dev/null || echo unknown)"

hogs=()
start_hog() {  # one busy loop per CPU this process may use
  for ((c = 0; c < CPUS; ++c)); do
    bash -c 'while :; do :; done' &
    hogs+=($!)
  done
}
stop_hog() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
  hogs=()
}
trap 'stop_hog; rm -rf "$BENCH_TMP"' EXIT

# timed NAME COMMAND...: runs COMMAND under /usr/bin/time, prints "wall cpu".
timed() {
  local timing="$BENCH_TMP/time.txt"
  if ! /usr/bin/time -f '%e %U %S' -o "$timing" "$@" >"$BENCH_TMP/out.txt" 2>"$BENCH_TMP/err.txt"; then
    echo "bench: $* failed:" >&2
    cat "$BENCH_TMP/err.txt" >&2
    return 1
  fi
  awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$timing"
}

options=""
[[ $PROFILE == 1 ]] && options="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$BENCH_TMP/report\",\"autoReport.executionProfileProgramRunCount\":\"10\"}"
ipusim_run=(env "POPLAR_ENGINE_OPTIONS=$options" "$IPUSIM" run "$WORKLOAD" --steps "$STEPS")
# CONTROL=1: the "default" program runs --threads 1 too, so that its ratio to
# threads1 shows what the harness and the machine alone make of two equal runs.
default_threads=()
[[ $CONTROL == 1 ]] && default_threads=(--threads 1)

machine_line
echo "# $STEPS steps of $(basename "$WORKLOAD"), profile capture $PROFILE, $REPS alternating repetitions; numpy's BLAS: $blas, $NUMPY_THREADS thread(s)$([[ $CONTROL == 1 ]] && echo "; CONTROL: default runs --threads 1")"
printf 'condition\trep\tprogram\twall_s\tcpu_s\n'
summary=()
for condition in $CONDITIONS; do
  [[ $condition == hog ]] && start_hog
  rows="$BENCH_TMP/rows.txt"
  : >"$rows"
  # Each repetition runs the programs in another of their 6 orders (REPS a
  # multiple of 6 gives each program each place, after each other program,
  # equally often). Rotating one order (N D T, D T N, T N D) was not enough:
  # with CONTROL=1 the "default" place, running --threads 1 as well, took
  # 1.09x the time of the threads1 place over 6 repetitions.
  orders=("numpy default threads1" "threads1 default numpy" "default threads1 numpy"
          "numpy threads1 default" "threads1 numpy default" "default numpy threads1")
  for ((rep = 1; rep <= REPS; ++rep)); do
    for program in ${orders[$(((rep - 1) % 6))]}; do
      case $program in
        numpy) t=$(timed "$PYTHON" "$BENCH_ROOT/bench/numpy_yardstick.py" --workload "$WORKLOAD" --steps "$STEPS") ;;
        default) t=$(timed "${ipusim_run[@]}" "${default_threads[@]}") ;;
        threads1) t=$(timed "${ipusim_run[@]}" --threads 1) ;;
      esac
      printf '%s\t%d\t%s\t%s\t%s\n' "$condition" "$rep" "$program" ${t}
      echo "$rep $program $t" >>"$rows"
    done
  done
  [[ $condition == hog ]] && stop_hog
  # Ratios per repetition (runs side by side), then their median and, in
  # brackets, their quartiles: how far one repetition's ratio may stray on
  # this machine (a difference inside them is not one this run can show).
  ratio() {  # ratio NUM DEN COLUMN(3 wall, 4 cpu)
    awk -v n="$1" -v d="$2" -v c="$3" '$2 == n {a[$1] = $c} $2 == d {b[$1] = $c} END {for (r in a) print a[r] / b[r]}' "$rows" |
      sort -g | awk '{v[NR] = $1} END {printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[int((NR + 3) / 4)], v[NR + 1 - int((NR + 3) / 4)]}'
  }
  summary+=("$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s' "$condition" \
    "$(ratio default numpy 3)" "$(ratio default numpy 4)" "$(ratio threads1 numpy 3)" "$(ratio threads1 numpy 4)" \
    "$(ratio default threads1 3)" "$(ratio default threads1 4)")")
done
echo "# median ratios of the runs side by side (< 1: the first is faster), with their quartiles"
printf 'condition\tdefault/numpy wall\tdefault/numpy cpu\tthreads1/numpy wall\tthreads1/numpy cpu\tdefault/threads1 wall\tdefault/threads1 cpu\n'
printf '%s\n' "${summary[@]}"
