#!/usr/bin/env python3
"""Checks ipusim's validation pass (fit with validation) against PyTorch.

`ipusim-torch-dump W STEPS OUT.json` on a workload with training.validation
trains STEPS steps, then runs one validation (the executable's "validation"
entry point) and writes its batches, the loss and accuracy the device outfed
for each, the weights after the training and every batch normalization's
moving statistics. PyTorch computes each validation batch's loss and accuracy
from those weights as Keras's evaluate does (training=False: dropout passes
its input, batch normalization whitens with the moving statistics; the
regularizers' penalties in the loss), in float64 and float32. A batch passes
when ipusim's loss is within the tolerance of float64's or no further than
twice float32's, and its accuracy equals float64's.

    python3 bench/torch/validation_check.py DUMP.json [--tolerance 1e-4]

Exits 1 when a batch is over, 2 on a dump without a validation.
"""
import argparse
import json
import sys

import torch

from torch_check import Model, loss_of


def validate(dump, batch, dtype):
    """PyTorch's loss and accuracy of one validation batch on ipusim's weights after the training."""
    model = Model(dump, dtype)
    model.training, model.moving = False, dump["moving_statistics"]
    for p, values in zip(model.params.values(), dump["final_weights"]):
        with torch.no_grad():
            p.copy_(torch.tensor(values, dtype=dtype).reshape(p.shape))
    images = torch.tensor(batch["images"], dtype=dtype)
    labels = torch.tensor(batch["labels"], dtype=torch.long)
    with torch.no_grad():
        logits = model.forward(images).reshape(len(labels), -1)
        loss = loss_of(dump, logits, labels, model.output_mask) + model.regularization()
        accuracy = (logits.argmax(dim=-1) == labels).to(torch.float64).mean()
    return loss.item(), accuracy.item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    with open(args.dump) as f:
        dump = json.load(f)
    if "validation" not in dump:
        print(f"{args.dump}: no validation (the workload has no training.validation)", file=sys.stderr)
        return 2
    v = dump["validation"]
    passed, worst = True, 0.0
    for i, (batch, device_loss, device_accuracy) in enumerate(zip(v["batches"], v["losses"], v["accuracies"])):
        exact, exact_accuracy = validate(dump, batch, torch.float64)
        single, _ = validate(dump, batch, torch.float32)
        rel, spread = abs(device_loss - exact) / abs(exact), abs(single - exact) / abs(exact)
        ok = rel <= max(args.tolerance, 2 * spread) and abs(device_accuracy - exact_accuracy) < 1e-6
        worst = max(worst, rel)
        passed = passed and ok
        print(f"batch {i:3d}  val_loss ipusim {device_loss:.6f} f64 {exact:.6f}: {rel:.2e} (f32 {spread:.2e}); "
              f"val_accuracy ipusim {device_accuracy:.4f} f64 {exact_accuracy:.4f}" + ("" if ok else "  <-- over"))
    print(f"{dump['workload']}: {len(v['losses'])} validation batches after {len(dump['losses'])} training steps: "
          f"val_loss within {worst:.2e} of PyTorch float64, val_accuracy equal: "
          f"{'every batch passes' if passed else 'OVER'} (tolerance {args.tolerance:g}, or 2x PyTorch float32's own); "
          f"torch {torch.__version__}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
