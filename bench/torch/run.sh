#!/usr/bin/env bash
# The PyTorch check (bench/torch/README.md): every workload, 20 steps each.
# Per workload: the trajectory check (torch_check.py: PyTorch trains from the
# same initial weights), and, for SGD workloads, the per-step check on
# ipusim's own weights (teacher_forced.py). A workload fails when its
# per-step check fails, or, without one, when its trajectory check does.
# Then fit's validation pass (validation_check.py on validation.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
python=/usr/bin/python3
"$python" -c "import torch" 2>/dev/null || { echo "run.sh: needs Debian's python3-torch (apt-get install python3-torch)" >&2; exit 2; }
cmake --build build --target ipusim-torch-dump >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for w in bench/torch/residual_mlp.json bench/torch/residual_convnet.json bench/torch/depthwise_separable.json \
         bench/torch/residual_conv1d.json bench/torch/conv_transpose.json bench/torch/loss_mae.json \
         bench/torch/loss_huber.json bench/torch/loss_label_smoothing.json bench/torch/loss_binary_classifier.json \
         bench/torch/upsample_permute.json bench/torch/activations.json bench/torch/layer_norm.json bench/torch/group_norm.json \
         bench/torch/autoencoder_mse.json \
         workloads/resnet20_cifar.json \
         bench/torch/adamw_cosine.json bench/torch/adagrad_exponential.json \
         bench/torch/adamax_piecewise.json bench/torch/nadam_polynomial.json bench/torch/sgd_inverse_time.json \
         bench/torch/regularizers.json bench/torch/loss_kl_divergence.json bench/torch/embedding.json \
         bench/torch/recurrent.json bench/torch/masked_recurrent.json bench/torch/masked_mean.json bench/torch/masked_attention.json bench/torch/masked_tagger.json bench/torch/masking.json bench/torch/attention.json bench/torch/einsum_dense.json \
         bench/torch/language_model.json bench/torch/recomputed_convnet.json bench/torch/frozen_transfer.json; do
  name=$(basename "$w" .json)
  SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bin/ipusim-torch-dump "$w" 20 "$out/$name.json" --trajectory
  trajectory=0
  "$python" bench/torch/torch_check.py "$out/$name.json" > "$out/$name.txt" || trajectory=$?
  tail -n 1 "$out/$name.txt"
  forced=0
  (cd bench/torch && "$python" teacher_forced.py "$out/$name.json") > "$out/$name.forced.txt" || forced=$?
  tail -n 1 "$out/$name.forced.txt"
  if [[ $forced -eq 2 ]]; then
    [[ $trajectory -eq 0 ]] || status=1  # no per-step check for this optimizer: the trajectory decides
  elif [[ $forced -ne 0 ]]; then
    status=1
  fi
  rm -f "$out/$name.json"
done
# Fit with validation: one validation after 20 steps, on the weights and moving statistics the training left.
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bin/ipusim-torch-dump bench/torch/validation.json 20 "$out/validation.json"
(cd bench/torch && "$python" validation_check.py "$out/validation.json") > "$out/validation.txt" || status=1
tail -n 1 "$out/validation.txt"
exit $status
