#!/usr/bin/python3
"""The yardstick: ipusim's trainings in numpy, for ipusim's speed to be
measured against (bench/yardstick.sh runs both, alternating).

Trains the workload's model in float32 on the same batches ipusim feeds:
the tutorial's (flatten, dense layers with relu / softmax, plain SGD), or a
Keras model (Conv2D, MaxPooling2D, Dropout, Flatten, Dense; SGD or Adam;
bench/numpy_layers.py), with sparse categorical cross-entropy. The data:
Fashion-MNIST from Debian's dataset-fashion-mnist, pixels / 255, or for a
"synthetic" dataset random data of its shapes (for timing); batches of the
workload's batch_size in the order of ipusim's BatchSource (Fisher-Yates with
mt19937_64 draws, seed shuffle_seed * 0x9e3779b97f4a7c15 + epoch, the
remainder of an epoch dropped). Initial weights are Glorot-uniform from
numpy's generator, not ipusim's draw, and dropout masks are numpy's: the
arithmetic per step is the same, the loss curve is close but not identical.

Prints one JSON object: steps, train_seconds (the training's wall time,
weights' initialization included), train_cpu_seconds (its CPU time) and
final_loss.

Needs python3-numpy (Debian): `apt-get install python3-numpy`.
Usage: bench/numpy_yardstick.py [--workload workloads/mnist_with_feeds.json] [--steps N]
"""
import argparse
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_layers as L  # noqa: E402  (bench/numpy_layers.py)

try:
    import numpy as np
except ImportError:
    sys.exit("numpy_yardstick: numpy is missing; install Debian's python3-numpy (apt-get install python3-numpy)")

MASK64 = (1 << 64) - 1


def mt19937_64_draws(seed, count):
    """The first `count` outputs of std::mt19937_64 (C++ <random>) seeded with
    `seed`: ipusim's BatchSource draws from it. The state twist and the
    tempering run on numpy arrays (a Python loop would cost seconds per epoch)."""
    n, m = 312, 156
    mt = [0] * n
    mt[0] = seed & MASK64
    for i in range(1, n):
        mt[i] = (6364136223846793005 * (mt[i - 1] ^ (mt[i - 1] >> 62)) + i) & MASK64
    mt = np.array(mt, dtype=np.uint64)
    upper, lower = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
    matrix, one = np.uint64(0xB5026F5AA96619E9), np.uint64(1)

    def mix(cur, nxt, far):
        x = (cur & upper) | (nxt & lower)
        return far ^ (x >> one) ^ np.where((x & one) != 0, matrix, np.uint64(0))

    out = []
    for _ in range((count + n - 1) // n):
        # In place, as the C++ twist: entries below m use the old state only,
        # entries from m on use entries the same twist already replaced.
        mt[:m] = mix(mt[:m], mt[1:m + 1], mt[m:])
        mt[m:n - 1] = mix(mt[m:n - 1], mt[m + 1:], mt[:m - 1])
        mt[n - 1:] = mix(mt[n - 1:], mt[:1], mt[m - 1:m])
        y = mt.copy()
        y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
        y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        y ^= y >> np.uint64(43)
        out.append(y)
    return np.concatenate(out)[:count].tolist()


def shuffled_order(count, seed, epoch):
    draws = mt19937_64_draws((seed * 0x9E3779B97F4A7C15 + epoch) & MASK64, count - 1)
    order = list(range(count))
    for d, i in enumerate(range(count, 1, -1)):
        j = draws[d] % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\0\0" or data[2] != 8:
        sys.exit(f"numpy_yardstick: {path}: not an IDX file of unsigned bytes")
    dims = [int.from_bytes(data[4 + 4 * d: 8 + 4 * d], "big") for d in range(data[3])]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def keras_model(path):
    """The layer specs of a Keras Sequential model's JSON (model.to_json()):
    [("conv", filters, (kh, kw), relu), ("pool", (ph, pw)), ("dropout", rate),
    ("flatten",), ("dense", units, activation)], and the input's shape."""
    with open(path) as f:
        model = json.load(f)
    specs, shape = [], None
    for layer in model["config"]["layers"]:
        cls, c = layer["class_name"], layer["config"]
        if "batch_input_shape" in c and shape is None:
            shape = tuple(c["batch_input_shape"][1:])
        if cls == "InputLayer":
            continue
        if cls == "Conv2D":
            if c.get("strides", [1, 1]) != [1, 1] or c.get("padding", "valid") != "valid" or c.get("activation") not in ("relu", "linear"):
                sys.exit(f"numpy_yardstick: {path}: layer {c['name']}: only stride 1, 'valid' padding, relu or linear")
            specs.append(("conv", c["filters"], tuple(c["kernel_size"]), c["activation"] == "relu"))
        elif cls == "MaxPooling2D":
            if c.get("strides") not in (None, c["pool_size"]) or c.get("padding", "valid") != "valid":
                sys.exit(f"numpy_yardstick: {path}: layer {c['name']}: only strides equal to pool_size, 'valid' padding")
            specs.append(("pool", tuple(c["pool_size"])))
        elif cls == "Dropout":
            specs.append(("dropout", float(c["rate"])))
        elif cls == "Flatten":
            specs.append(("flatten",))
        elif cls == "Dense":
            specs.append(("dense", c["units"], c.get("activation", "linear")))
        else:
            sys.exit(f"numpy_yardstick: {path}: layer class {cls} is not supported "
                     "(Conv2D, MaxPooling2D, Dropout, Flatten, Dense)")
    if shape is None:
        sys.exit(f"numpy_yardstick: {path}: no batch_input_shape: the input's shape is unknown")
    if not specs or specs[-1][0] != "dense" or specs[-1][2] != "softmax" or any(
            s[0] == "dense" and s[2] not in ("relu", "linear") for s in specs[:-1]):
        sys.exit(f"numpy_yardstick: {path}: expected relu or linear hidden layers and a softmax output")
    return specs, shape


def load_workload(path):
    with open(path) as f:
        w = json.load(f)
    ds = w["dataset"]
    share = "/usr/share/datasets/fashion-mnist"
    opt = w["optimizer"]
    if w.get("loss", "sparse_categorical_crossentropy") != "sparse_categorical_crossentropy" or opt["type"] not in ("sgd", "adam"):
        sys.exit(f"numpy_yardstick: {path}: only sparse_categorical_crossentropy with sgd or adam is supported")
    cfg = {"batch": int(ds["batch_size"]), "shuffle_seed": int(ds.get("shuffle_seed", 0)),
           "steps": int(w["training"]["steps"]), "seed": int(w.get("seed", 0)),
           "optimizer": {"type": opt["type"], "lr": float(opt.get("learning_rate", 0.01 if opt["type"] == "sgd" else 0.001)),
                         "beta1": float(opt.get("beta_1", 0.9)), "beta2": float(opt.get("beta_2", 0.999)),
                         "epsilon": float(opt.get("epsilon", 1e-7))}}
    if "keras" in w["model"]:  # a Keras model, trained layer by layer (bench/numpy_layers.py)
        cfg["keras"], cfg["input_shape"] = keras_model(os.path.join(os.path.dirname(path), w["model"]["keras"]))
    else:  # the tutorial's flatten/dense model, trained by the loop below as written for it
        layers = w["model"]["layers"]
        dense = [l for l in layers if l["type"] == "dense"]
        others = [l["type"] for l in layers if l["type"] not in ("dense", "flatten")]
        if others or not dense or opt["type"] != "sgd":
            sys.exit(f"numpy_yardstick: {path}: only flatten/dense models with sgd (the tutorial's), or Keras models, "
                     "are supported")
        if dense[-1].get("activation") != "softmax" or any(l.get("activation", "relu") != "relu" for l in dense[:-1]):
            sys.exit(f"numpy_yardstick: {path}: expected relu hidden layers and a softmax output")
        cfg["units"] = [l["units"] for l in dense]
    if ds.get("format") == "synthetic":  # random data of the same shapes: the same arithmetic per step
        cfg["synthetic"] = (int(ds["examples"]), int(ds["features"]), int(ds["classes"]))
    else:
        cfg["images"] = ds.get("images", f"{share}/train-images-idx3-ubyte.gz")
        cfg["labels"] = ds.get("labels", f"{share}/train-labels-idx1-ubyte.gz")
    return cfg


def build_layers(cfg, rng):
    """numpy_layers objects for the Keras model's specs, and the optimizer."""
    shape, layers = cfg["input_shape"], []
    for spec in cfg["keras"]:
        kind = spec[0]
        if kind == "conv":
            layer = L.Conv2D(rng, shape, spec[1], spec[2], spec[3])
        elif kind == "pool":
            layer = L.MaxPooling2D(shape, spec[1])
        elif kind == "dropout":
            layer = L.Dropout(rng, shape, spec[1])
        elif kind == "flatten":
            layer = L.Flatten(shape)
        else:
            layer = L.Dense(rng, shape, spec[1], spec[2] == "relu")
        layers.append(layer)
        shape = layer.out_shape
    layers[0].needs_input_grad = False  # the first layer's input is the data
    params = [p for layer in layers for p in layer.params]
    o = cfg["optimizer"]
    opt = L.Sgd(o["lr"]) if o["type"] == "sgd" else L.Adam(o["lr"], o["beta1"], o["beta2"], o["epsilon"], params)
    return layers, params, opt


def softmax_cross_entropy(logits, labels, scale):
    """The loss of a batch (mean sparse categorical cross-entropy of the
    softmax of `logits`) and its gradient with respect to the logits, scaled
    by `scale` (1 / batch)."""
    rows = np.arange(logits.shape[0])
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    probs = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.log(probs[rows, labels]).mean())
    probs[rows, labels] -= 1
    probs *= scale
    return loss, probs


def train_layers(cfg, images, labels, batch_rows, steps, rng):
    """A Keras model's training: forward, softmax cross-entropy, backward
    through every layer, the optimizer's update. Returns the last loss."""
    layers, params, opt = build_layers(cfg, rng)
    batch = cfg["batch"]
    scale = np.float32(1.0 / batch)
    loss = float("nan")
    for step in range(steps):
        rows = batch_rows(step)
        x = (images[rows].astype(np.float32) / np.float32(255.0)).reshape((batch,) + cfg["input_shape"])
        y = labels[rows]
        for layer in layers:
            x = layer.forward(x, True)
        loss, grad = softmax_cross_entropy(x, y, scale)
        for layer in reversed(layers):
            grad = layer.backward(grad)
        opt.update(params, [g for layer in layers for g in layer.grads])
    return loss


def train_mlp(cfg, images, labels, batch_rows, steps, rng):
    """The tutorial's flatten/dense model with plain SGD, written out for it.
    Returns the last loss."""
    batch = cfg["batch"]
    sizes = [images.shape[1]] + cfg["units"]
    weights, biases = [], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        weights.append(L.glorot_uniform(rng, (fan_in, fan_out), fan_in, fan_out))
        biases.append(np.zeros(fan_out, dtype=np.float32))
    lr = np.float32(cfg["optimizer"]["lr"])
    scale = np.float32(1.0 / batch)
    loss = float("nan")
    for step in range(steps):
        rows = batch_rows(step)
        x = images[rows].astype(np.float32) / np.float32(255.0)
        y = labels[rows]
        # Forward.
        acts = [x]
        for layer, (w, b) in enumerate(zip(weights, biases)):
            z = acts[-1] @ w + b
            acts.append(np.maximum(z, 0, out=z) if layer + 1 < len(weights) else z)
        loss, grad = softmax_cross_entropy(acts[-1], y, scale)
        # Backward and SGD update.
        for layer in range(len(weights) - 1, -1, -1):
            gw = acts[layer].T @ grad
            gb = grad.sum(axis=0)
            if layer:
                grad = grad @ weights[layer].T
                grad *= acts[layer] > 0
            weights[layer] -= lr * gw
            biases[layer] -= lr * gb
    return loss


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default=os.path.join(here, "..", "workloads", "mnist_with_feeds.json"))
    ap.add_argument("--steps", type=int, help="training steps (default: the workload's)")
    args = ap.parse_args()
    cfg = load_workload(args.workload)
    steps = args.steps or cfg["steps"]
    if "synthetic" in cfg:
        examples, features, classes = cfg["synthetic"]
        data_rng = np.random.default_rng(cfg["seed"] + 1)
        images = data_rng.integers(0, 256, (examples, features), dtype=np.uint8)
        labels = data_rng.integers(0, classes, examples).astype(np.int64)
    else:
        for key in ("images", "labels"):
            if not os.path.exists(cfg[key]):
                sys.exit(f"numpy_yardstick: {cfg[key]} is missing; install Debian's dataset-fashion-mnist")
        images = read_idx(cfg["images"]).reshape(-1, 28 * 28)
        labels = read_idx(cfg["labels"]).astype(np.int64)
    count, batch = images.shape[0], cfg["batch"]

    # The batch order, drawn before the timed loop (ipusim draws it as it goes,
    # once per epoch: a negligible share of its time).
    per_epoch = count // batch
    epochs = (steps + per_epoch - 1) // per_epoch
    orders = [np.array(shuffled_order(count, cfg["shuffle_seed"], e), dtype=np.int64) for e in range(epochs)]

    def batch_rows(step):
        epoch, at = divmod(step, per_epoch)
        return orders[epoch][at * batch:(at + 1) * batch]

    rng = np.random.default_rng(cfg["seed"])
    train = train_layers if "keras" in cfg else train_mlp
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    loss = train(cfg, images, labels, batch_rows, steps, rng)
    print(json.dumps({"steps": steps, "train_seconds": round(time.perf_counter() - start_wall, 3),
                      "train_cpu_seconds": round(time.process_time() - start_cpu, 3), "final_loss": loss}))


if __name__ == "__main__":
    main()
