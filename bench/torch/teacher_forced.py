#!/usr/bin/env python3
"""Checks each training step of ipusim on ipusim's own weights (teacher forcing).

torch_check.py compares whole trajectories: PyTorch trains from the initial
weights and each step's loss is compared. In a deep net with batch
normalization the trajectories part however exact each step is, since a
rounding difference in one step is amplified by the next (ResNet-20 drifts
about 8e-2 over 20 steps, and PyTorch float32 drifts from float64 as far).
This check takes ipusim's weights before every step instead (written by
`ipusim-torch-dump W STEPS OUT.json --trajectory`) and asks, per step:

- the loss: PyTorch float64's on ipusim's weights and batch, against ipusim's;
- the gradient: the one ipusim applied, recovered by inverting the SGD
  update (Keras's rule: v = m v - lr g, w += v; Nesterov: w += m v - lr g)
  from its momentum slots before and after the step (or, without momentum,
  from its weights, within the rounding of their float32 digits), against PyTorch float64's gradient at
  ipusim's weights, tensor by tensor, as |g_ipusim - g_f64| / |g_f64|
  (Euclidean norms); a gradient that is zero in exact arithmetic (a bias
  before a batch normalization) against the largest tensor's gradient norm.

Beside each figure stands PyTorch float32's own distance from float64 on the
same weights: a step passes when ipusim's loss is within the tolerance of
float64's or no further than twice float32's, and every gradient tensor is
within the tolerance or no further than ten times float32's (a gradient is a
sum over the batch and the image: its rounding depends on the summation
order, which differs by design).

    python3 bench/torch/teacher_forced.py DUMP.json [--tolerance 1e-4]

SGD (with or without momentum, Nesterov) at a constant rate, without weight
decay or clipping, only: the update of Adam and
RMSprop cannot be inverted from the weights alone. Exits 1 when a step is
over, 2 on a model or optimizer it cannot check.
"""
import argparse
import json
import sys

import torch

from torch_check import Model, loss_of


def step_on(dump, weights, batch, dtype):
    """PyTorch's loss and gradients on `weights` (ipusim's, per tensor) and one batch."""
    model = Model(dump, dtype)
    for p, values in zip(model.params.values(), weights):
        with torch.no_grad():
            p.copy_(torch.tensor(values, dtype=dtype).reshape(p.shape))
    images = torch.tensor(batch["images"], dtype=dtype)
    labels = torch.tensor(batch["labels"], dtype=torch.long)
    logits = model.forward(images).reshape(len(labels), -1)  # a row per label (per step: a sequence's)
    loss = loss_of(dump, logits, labels, model.output_mask)
    loss = loss + model.regularization()  # Keras's total: the regularizers' penalties too
    loss.backward()
    # (a frozen layer's weight: no gradient, as ipusim applies none)
    return loss.item(), [p.grad.detach().reshape(-1).to(torch.float64) if p.requires_grad
                         else torch.zeros(p.numel(), dtype=torch.float64) for p in model.params.values()]


def applied_gradients(dump):
    """Per step, the gradient ipusim applied to each tensor, and the bound of the
    recovery's own rounding (None: exact to float32's rounding of the result).

    With momentum, from the device's momentum slots before and after (Keras:
    v' = m v - lr g in both forms), which hold lr g to float32's precision;
    without, from the weights before and after, whose difference loses the
    digits of the weights (a gradient far smaller than its weight / lr is
    lost in them): the bound, per element (ulp(w) + ulp(w')) / (2 lr), is
    then added to the allowed difference."""
    o = dump["optimizer"]
    lr, m, nesterov = o["learning_rate"], o["momentum"], o["nesterov"]
    if "momentum_before" in dump:
        slots = [[torch.tensor(t, dtype=torch.float64) for t in step] for step in dump["momentum_before"]]
        slots.append([torch.tensor(t, dtype=torch.float64) for t in dump["final_momentum"]])
        return [[((m * v0 - v1) / lr, None) for v0, v1 in zip(before, after)] for before, after in zip(slots, slots[1:])]
    trajectory = [[torch.tensor(t, dtype=torch.float64) for t in step] for step in dump["weights_before"]]
    trajectory.append([torch.tensor(t, dtype=torch.float64) for t in dump["final_weights"]])
    velocity = [torch.zeros_like(t) for t in trajectory[0]]
    steps = []
    for before, after in zip(trajectory, trajectory[1:]):
        grads = []
        for i, (w0, w1) in enumerate(zip(before, after)):
            delta = w1 - w0
            if nesterov:  # delta = m^2 v - (1 + m) lr g, v' = m v - lr g
                g = (m * m * velocity[i] - delta) / ((1 + m) * lr)
            else:  # delta = v' = m v - lr g
                g = (m * velocity[i] - delta) / lr
            velocity[i] = m * velocity[i] - lr * g
            ulp = lambda w: torch.finfo(torch.float32).eps * w.abs()  # at most one ulp of a float32
            grads.append((g, (ulp(w0) + ulp(w1)) / (2 * lr)))
        steps.append(grads)
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    with open(args.dump) as f:
        dump = json.load(f)
    if "weights_before" not in dump:
        print(f"{args.dump}: no weights_before (write it with ipusim-torch-dump ... --trajectory)", file=sys.stderr)
        return 2
    if dump["optimizer"]["type"] != "sgd" or dump["dtype"] != "float32":
        print(f"{args.dump}: the check inverts float32 SGD updates; this is {dump['dtype']} "
              f"{dump['optimizer']['type']}", file=sys.stderr)
        return 2
    # The inversion takes one constant rate and the gradient itself: a schedule, weight decay or clipping
    # would come back as a gradient PyTorch does not compute (torch_check.py checks those over the trajectory).
    extras = [k for k in ("schedule", "weight_decay", "clipnorm", "clipvalue", "global_clipnorm") if dump["optimizer"].get(k)]
    if extras:
        print(f"{args.dump}: the check inverts SGD at a constant rate on the raw gradient; this has {', '.join(extras)}",
              file=sys.stderr)
        return 2
    names = [w["name"] for w in dump["weights"]]
    applied = applied_gradients(dump)
    passed, worst_loss, worst_grad = True, 0.0, 0.0
    for step, (weights, batch, device_loss, device_grads) in enumerate(
            zip(dump["weights_before"], dump["batches"], dump["losses"], applied)):
        try:
            exact, exact_grads = step_on(dump, weights, batch, torch.float64)
            single, single_grads = step_on(dump, weights, batch, torch.float32)
        except NotImplementedError as e:
            print(f"{args.dump}: not checked: {e}", file=sys.stderr)
            return 2
        rel, spread = abs(device_loss - exact) / abs(exact), abs(single - exact) / abs(exact)
        ok = rel <= max(args.tolerance, 2 * spread)
        worst_loss = max(worst_loss, rel)
        line = (f"step {step:3d}  loss ipusim-f64 {rel:.2e} (f32 {spread:.2e})")
        over, largest = [], ("", 0.0, 0.0)
        scale = max(g64.norm().item() for g64 in exact_grads) or 1.0
        for name, (g, bound), g64, g32 in zip(names, device_grads, exact_grads, single_grads):
            # A gradient that is zero in exact arithmetic (a convolution's bias
            # before a batch normalization, whose mean removes it) is rounding
            # only: measured against the largest tensor's gradient instead.
            norm = g64.norm().item() if g64.norm().item() > 1e-6 * scale else scale
            d, d32 = (g - g64).norm().item() / norm, (g32 - g64).norm().item() / norm
            recovery = 0.0 if bound is None else bound.norm().item() / norm
            worst_grad = max(worst_grad, d)
            largest = max(largest, (name, d, d32), key=lambda t: t[1])
            if d > max(args.tolerance, 10 * d32) + recovery:
                over.append(f"{name} {d:.2e} (f32 {d32:.2e})")
        line += f"  largest gradient difference {largest[0]} {largest[1]:.2e} (f32 {largest[2]:.2e})"
        ok = ok and not over
        passed = passed and ok
        print(line + ("" if ok else "  <-- over: " + ("loss " if rel > max(args.tolerance, 2 * spread) else "") +
                      ", ".join(over)))
    print(f"{dump['workload']}: {len(applied)} steps teacher-forced on ipusim's weights: loss within "
          f"{worst_loss:.2e} of PyTorch float64, gradients within {worst_grad:.2e} (relative norm); "
          f"{'every step passes' if passed else 'OVER'} (tolerance {args.tolerance:g}, or 2x / 10x PyTorch "
          f"float32's own); torch {torch.__version__}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
