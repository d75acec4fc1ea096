#!/usr/bin/env bash
# ipusim against the yardstick: the tutorial's training (functional, with
# feeds, autoReport capturing 10 runs, as in issue 12) and the same training
# with numpy (bench/numpy_yardstick.py), run alternately: numpy, ipusim with
# the default threads, ipusim on one thread, REPS times (each repetition in
# another order); first on the machine as it is ("quiet"), then with a CPU
# hog (one busy loop per CPU) running.
# Both ipusim programs run the same command line; one thread is asked for by
# IPUSIM_WORKER_THREADS=1 (the same one-thread pool as `--threads 1`), not by
# the flag: on the 2-vCPU VM of bench/RESULTS.md, the flag alone moved the run
# by 6-10 %, whatever the thread count (`--threads 2` against no flag, the same
# two threads; `--threads 1` against IPUSIM_WORKER_THREADS=1, the same one).
# Prints every run and the median ratios (wall and CPU = user+sys; a ratio
# below 1 means ipusim or the default threads is faster), with the quartiles
# of the repetitions' ratios.
# Usage: IPUSIM=build/bin/ipusim bench/yardstick.sh
# Environment: STEPS (10000), REPS (6: each order once), WORKLOAD (workloads/mnist_with_feeds.json;
#   also the large MLP, or a Keras model such as workloads/mnist_convnet.json:
#   what bench/numpy_yardstick.py can train),
#   CONDITIONS ("quiet hog"), PROFILE (1: autoReport on, 0: off),
#   CONTROL (1: "default" runs on one thread as well: an A/A control),
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

# numpy on Debian's OpenBLAS, the fastest BLAS Debian packages: the yardstick
# must be the hard one. python3-numpy alone brings the reference BLAS
# (libblas3), which made numpy's tutorial step several times slower
# (bench/RESULTS.md, issue 12's first measurements).
missing=()
"$PYTHON" -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q 'ok installed' || missing+=(libopenblas0-pthread)
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "bench: installing Debian's ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "bench: ${missing[*]} missing: run 'apt-get install ${missing[*]}' as root" >&2
    exit 1
  fi
fi

# The BLAS numpy's matrix products run on (Debian's alternatives: reference
# BLAS from libblas3, or OpenBLAS from libopenblas0-*): it decides numpy's speed.
blas="$(readlink -f "/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libblas.so.3" 2>/dev/null || echo unknown)"
[[ $blas == *openblas* ]] ||
  echo "bench: numpy's BLAS is $blas, not OpenBLAS (update-alternatives --config libblas.so.3-$(gcc -print-multiarch)): numpy is slower than it can be" >&2

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

# timed COMMAND...: runs COMMAND under /usr/bin/time, prints "wall cpu pooled"
# (pooled: the large phases ipusim ran on its worker pool, from its summary
# line; "-" for numpy and for one thread).
timed() {
  local timing="$BENCH_TMP/time.txt"
  if ! /usr/bin/time -f '%e %U %S' -o "$timing" "$@" >"$BENCH_TMP/out.txt" 2>"$BENCH_TMP/err.txt"; then
    echo "bench: $* failed:" >&2
    cat "$BENCH_TMP/err.txt" >&2
    return 1
  fi
  local pooled
  pooled="$(sed -n 's/.*large phases on the pool: \([0-9]*\) of.*/\1/p' "$BENCH_TMP/out.txt")"
  awk -v pooled="${pooled:--}" '{printf "%.2f %.2f %s\n", $1, $2 + $3, pooled}' "$timing"
}

options=""
[[ $PROFILE == 1 ]] && options="{\"autoReport.all\":\"true\",\"autoReport.directory\":\"$BENCH_TMP/report\",\"autoReport.executionProfileProgramRunCount\":\"10\"}"
# The default is what a user gets: no thread setting from this shell either.
unset IPUSIM_WORKER_THREADS IPUSIM_WORKER_CHOICE
# timed_ipusim [VAR=VALUE...]: the one ipusim command line, timed.
timed_ipusim() { timed env "POPLAR_ENGINE_OPTIONS=$options" "$@" "$IPUSIM" run "$WORKLOAD" --steps "$STEPS"; }
# CONTROL=1: the "default" program runs on one thread too, so that its ratio
# to threads1 shows what the harness and the machine alone make of two equal runs.
default_env=()
[[ $CONTROL == 1 ]] && default_env=(IPUSIM_WORKER_THREADS=1)

machine_line
echo "# $STEPS steps of $(basename "$WORKLOAD"), profile capture $PROFILE, $REPS alternating repetitions; numpy's BLAS: $blas, $NUMPY_THREADS thread(s)$([[ $CONTROL == 1 ]] && echo "; CONTROL: default runs on one thread")"
printf 'condition\trep\tprogram\twall_s\tcpu_s\tpooled_phases\n'
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
        default) t=$(timed_ipusim "${default_env[@]}") ;;
        threads1) t=$(timed_ipusim IPUSIM_WORKER_THREADS=1) ;;
      esac
      printf '%s\t%d\t%s\t%s\t%s\t%s\n' "$condition" "$rep" "$program" ${t}
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
