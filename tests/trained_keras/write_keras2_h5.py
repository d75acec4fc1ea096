"""Writes a Keras 3 .keras archive's model and weights as the legacy .h5 an
older Keras would have written for them (no public Keras 2 file of a
Fashion-MNIST model came with a licence to bundle; the layouts below are those
seen in public files written by Keras 2.1.6 and 2.15, described in
tests/data/keras/trained/README.md):
  - model_config: the Sequential model in Keras 2's words (objects without
    "module"/"registered_name", dtypes as strings, the input shape as
    batch_input_shape); --bare-list writes Keras 2.0-2.2's config, the bare
    list of layers, and no InputLayer;
  - training_config with optimizer_config: TF 2.15's ("Custom>Adam", a
    MeanMetricWrapper), or with --bare-list Keras 2.1's ("lr", "decay");
  - model_weights/<layer>/<layer>/<weight>:0, each layer group listing them in
    weight_names (fixed-length byte strings with --bare-list, as h5py wrote
    them then; else variable-length text);
  - --weights-only: the weights alone, as Keras 2's model.save_weights("w.h5")
    wrote them (the layer groups and layer_names at the root, no model).

usage: write_keras2_h5.py MODEL.keras OUT.h5 [--bare-list] [--weights-only]"""
import io, json, re, sys, zipfile

import h5py
import numpy as np


def snake(name):  # keras naming.to_snake_case
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def keras2(value):
    """A Keras 3 config value in Keras 2's words."""
    if isinstance(value, dict):
        if value.get("class_name") == "DTypePolicy":
            return value["config"]["name"]
        return {k: keras2(v) for k, v in value.items() if k not in ("module", "registered_name", "build_config")}
    if isinstance(value, list):
        return [keras2(v) for v in value]
    return value


def main():
    source, out, bare = sys.argv[1], sys.argv[2], "--bare-list" in sys.argv[3:]
    weights_only = "--weights-only" in sys.argv[3:]
    archive = zipfile.ZipFile(source)
    model = json.loads(archive.read("config.json"))
    weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
    layers, used, shape = [], {}, None
    for layer in model["config"]["layers"]:
        if layer["class_name"] == "InputLayer":
            shape = layer["config"]["batch_shape"]
            continue
        key = snake(layer["class_name"])
        used[key] = used.get(key, -1) + 1
        group = weights.get("layers/%s%s/vars" % (key, "_%d" % used[key] if used[key] else ""))
        values = [group[str(i)][()] for i in range(len(group))] if group is not None else []
        layers.append((keras2(layer), values))
    configs = [l for l, _ in layers]
    if bare:
        configs[0]["config"]["batch_input_shape"] = shape
        config, version = configs, "2.1.6"
        optimizer = {"class_name": "Adam", "config": {"lr": 0.001, "beta_1": 0.9, "beta_2": 0.999, "decay": 0.0,
                                                      "epsilon": 1e-07, "amsgrad": False}}
        metrics = ["accuracy"]
    else:
        first = {"class_name": "InputLayer", "config": {"batch_input_shape": shape, "dtype": "float32",
                                                         "sparse": False, "ragged": False, "name": "conv2d_input"}}
        config, version = {"name": "sequential", "layers": [first] + configs}, "2.15.0"
        optimizer = {"class_name": "Custom>Adam", "config": {
            "name": "Adam", "weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
            "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None, "jit_compile": True,
            "is_legacy_optimizer": False, "learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
            "epsilon": 1e-07, "amsgrad": False}}
        metrics = [[{"class_name": "MeanMetricWrapper",
                     "config": {"name": "accuracy", "dtype": "float32", "fn": "sparse_categorical_accuracy"}}]]
    strings = (lambda names: np.array([n.encode("utf8") for n in names])) if bare else (lambda names: names)
    with h5py.File(out, "w") as f:
        f.attrs["keras_version"] = version
        f.attrs["backend"] = "tensorflow"
        if weights_only:
            group = f
        else:
            f.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": config})
            f.attrs["training_config"] = json.dumps({"loss": "sparse_categorical_crossentropy", "metrics": metrics,
                                                     "weighted_metrics": None, "loss_weights": None,
                                                     "sample_weight_mode": None, "optimizer_config": optimizer})
            group = f.create_group("model_weights")
        group.attrs["layer_names"] = strings([l["config"]["name"] for l in configs])
        group.attrs["keras_version"] = version
        group.attrs["backend"] = "tensorflow"
        names_of = {"Dense": ["kernel", "bias"], "Conv2D": ["kernel", "bias"],
                    "BatchNormalization": ["gamma", "beta", "moving_mean", "moving_variance"]}
        for layer, values in layers:
            name = layer["config"]["name"]
            g = group.create_group(name)
            names = ["%s/%s:0" % (name, n) for n in names_of.get(layer["class_name"], [])[:len(values)]]
            # (h5py stores an empty list as an empty float array, as Keras 2 wrote it.)
            g.attrs["weight_names"] = strings(names) if names else np.array([], dtype=np.float32)
            for n, v in zip(names, values):
                g.create_dataset(n, data=v)


if __name__ == "__main__":
    main()
