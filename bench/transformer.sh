#!/usr/bin/env bash
# The transformers' benchmark (issue "Every model users bring (2)"):
#  1. BERT-base (workloads/bert_base_sl128.json): compile time and peak host
#     memory (goal: at most 60 s and 4 GB), then a timing-only run
#     (--synthetic-data, STEPS steps): wall time per step, the step's cycles
#     and sequences/s;
#  2. a small transformer's functional training step (2 encoder layers,
#     hidden 128, 4 heads, sequence 64, batch 16, float32) in ipusim against
#     PyTorch training the same model on the same CPU (bench/torch's model,
#     float32, the same weights and batches; goal: ipusim no slower).
# Usage: bench/transformer.sh   (IPUSIM as in common.sh; STEPS, default 10)
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-10}"
machine_line

echo "## BERT-base, sequence 128, 4 IPUs sharded, micro-batch 2, float16"
/usr/bin/time -v -o "$BENCH_TMP/time.txt" "$IPUSIM" compile "$BENCH_ROOT/workloads/bert_base_sl128.json" --json >"$BENCH_TMP/c.json"
printf 'compile: %s s wall (ipusim: %s s), peak RSS %s MiB, estimated step %s cycles, %s vertices\n' \
  "$(awk -F': ' '/Elapsed/ {print $2}' "$BENCH_TMP/time.txt")" "$(jq -r '.compile_seconds' "$BENCH_TMP/c.json")" \
  "$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$BENCH_TMP/time.txt")" \
  "$(jq -r '.estimated_step_cycles' "$BENCH_TMP/c.json")" "$(jq -r '.vertices' "$BENCH_TMP/c.json")"
/usr/bin/time -v -o "$BENCH_TMP/time.txt" "$IPUSIM" run "$BENCH_ROOT/workloads/bert_base_sl128.json" --synthetic-data \
  --steps "$STEPS" --steps-per-execution "$STEPS" --json >"$BENCH_TMP/r.json"
jq -r --arg steps "$STEPS" --arg rss "$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$BENCH_TMP/time.txt")" \
  '"timing-only run: \($steps) steps in \(.wall_seconds) s wall (\(.wall_seconds / ($steps | tonumber) * 1000 | round) ms a step, compile included), peak RSS \($rss) MiB, \(.step_cycles.total | round) cycles a step, \(.examples_per_second * 10 | round / 10) sequences/s"' \
  "$BENCH_TMP/r.json"

echo "## A small transformer's functional step, ipusim against PyTorch on this CPU"
cat >"$BENCH_TMP/small.json" <<JSON
{"name": "small_transformer", "dataset": {"format": "synthetic", "batch_size": 16, "shuffle_seed": 1, "input_shape": [64],
  "classes": 1000, "examples": 256},
 "model": {"layers": [
  {"type": "embedding", "input_dim": 1000, "output_dim": 128, "name": "tokens"},
  {"type": "position_embedding", "sequence_length": 64, "name": "positions"},
  {"type": "add", "inputs": ["tokens", "positions"], "name": "embeddings"},
  {"type": "multi_head_attention", "num_heads": 4, "key_dim": 32, "inputs": ["embeddings", "embeddings"], "name": "a0"},
  {"type": "add", "inputs": ["embeddings", "a0"], "name": "r0"}, {"type": "layer_normalization", "name": "n0"},
  {"type": "dense", "units": 512, "activation": "gelu", "name": "f0"}, {"type": "dense", "units": 128, "name": "g0"},
  {"type": "add", "inputs": ["n0", "g0"], "name": "s0"}, {"type": "layer_normalization", "name": "m0"},
  {"type": "multi_head_attention", "num_heads": 4, "key_dim": 32, "inputs": ["m0", "m0"], "name": "a1"},
  {"type": "add", "inputs": ["m0", "a1"], "name": "r1"}, {"type": "layer_normalization", "name": "n1"},
  {"type": "dense", "units": 512, "activation": "gelu", "name": "f1"}, {"type": "dense", "units": 128, "name": "g1"},
  {"type": "add", "inputs": ["n1", "g1"], "name": "s1"}, {"type": "layer_normalization", "name": "m1"},
  {"type": "dense", "units": 1000, "activation": "softmax", "name": "logits"}]},
 "optimizer": {"type": "sgd", "learning_rate": 0.01},
 "training": {"steps": $STEPS, "steps_per_execution": $STEPS}, "ipu": {"arch": "ipu2"}, "seed": 1}
JSON
"$IPUSIM" run "$BENCH_TMP/small.json" --json >"$BENCH_TMP/s.json"
cmake --build "$BENCH_ROOT/build" --target ipusim-torch-dump >/dev/null
"$BENCH_ROOT/build/bin/ipusim-torch-dump" "$BENCH_TMP/small.json" "$STEPS" "$BENCH_TMP/dump.json" >/dev/null
# PyTorch on one thread and on as many as ipusim uses (its host threads).
threads=$(jq -r '.host_threads.threads' "$BENCH_TMP/s.json")
torch_seconds() {
  (cd "$BENCH_ROOT/bench/torch" && /usr/bin/python3 - "$BENCH_TMP/dump.json" "$1" <<'PY'
import json, sys, time, torch
import torch_check
dump = json.load(open(sys.argv[1]))
torch.set_num_threads(int(sys.argv[2]))
start = time.perf_counter()
torch_check.train(dump, torch.float32)
print(f"{time.perf_counter() - start:.3f}")
PY
  )
}
torch_one=$(torch_seconds 1)
torch_same=$(torch_seconds "$threads")
jq -r --arg steps "$STEPS" --arg one "$torch_one" --arg same "$torch_same" \
  '"ipusim: \($steps) steps in \(.wall_seconds) s wall (compile and simulation included; \(.host_threads.threads) host threads); PyTorch float32: \($one) s on one thread, \($same) s on \(.host_threads.threads); ratio ipusim / PyTorch \(.wall_seconds / ($one | tonumber) * 100 | round / 100) (one thread), \(.wall_seconds / ($same | tonumber) * 100 | round / 100) (the same threads)"' \
  "$BENCH_TMP/s.json"
