#!/usr/bin/env bash
# The PyTorch check (bench/torch/README.md): every workload, 20 steps each.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=/usr/bin/python3
"$python" -c "import torch" 2>/dev/null || { echo "run.sh: needs Debian's python3-torch (apt-get install python3-torch)" >&2; exit 2; }
cmake --build build --target ipusim-torch-dump >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for w in bench/torch/residual_mlp.json bench/torch/residual_convnet.json bench/torch/depthwise_separable.json \
         bench/torch/residual_conv1d.json bench/torch/conv_transpose.json workloads/resnet20_cifar.json \
         bench/torch/adamw_cosine.json bench/torch/adagrad_exponential.json bench/torch/adamax_piecewise.json \
         bench/torch/nadam_polynomial.json bench/torch/sgd_inverse_time.json; do
  name=$(basename "$w" .json)
  SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bin/ipusim-torch-dump "$w" 20 "$out/$name.json"
  "$python" bench/torch/torch_check.py "$out/$name.json" > "$out/$name.txt" || status=1
  tail -n 1 "$out/$name.txt"
done
exit $status
