# Writes tests/data/keras/layer_normalization_{tf2,keras3}.json: a
# transformer block's feed-forward half over [8 steps, 16 features] as Keras
# writes it: Dense on the sequence, LayerNormalization, a gelu Dense and a
# residual Add, a second LayerNormalization (epsilon 1e-6, as BERT's), then
# Flatten and a softmax Dense. tf-keras writes the axis resolved to a list of
# non-negative axes after build ([2]); Keras 3 keeps -1 in a list ([-1]) and
# adds rms_scaling. Written by hand after tf-keras's and Keras 3's
# LayerNormalization.get_config(), key for key; no Keras is needed to run it:
#   python3 tests/data/keras/make_layer_normalization.py tests/data/keras
import json, sys
from keras_json import dense, functional, ones, zeros

out = sys.argv[1]

def layer_norm(k3, epsilon):
    cfg = {"axis": [-1] if k3 else [2], "epsilon": epsilon, "center": True, "scale": True,
           "beta_initializer": zeros(k3), "gamma_initializer": ones(k3), "beta_regularizer": None,
           "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None}
    if k3: cfg["rms_scaling"] = False
    return ("LayerNormalization", cfg)

def without_name(layer):
    cls, cfg = layer
    return cls, {k: v for k, v in cfg.items() if k not in ("name", "trainable", "dtype")}

def model(k3):
    calls = [("project", without_name(dense(k3, "project", 16, "linear")), ["input_1"]),
             ("norm1", layer_norm(k3, 0.001), ["project"]),
             ("ffn1", without_name(dense(k3, "ffn1", 32, "gelu")), ["norm1"]),
             ("ffn2", without_name(dense(k3, "ffn2", 16, "linear")), ["ffn1"]),
             ("residual", ("Add", {}), ["norm1", "ffn2"]),
             ("norm2", layer_norm(k3, 1e-6), ["residual"]),
             ("flatten", ("Flatten", {"data_format": "channels_last"}), ["norm2"]),
             ("output", without_name(dense(k3, "output", 10, "softmax")), ["flatten"])]
    return functional(k3, "layer_normalization", [None, 8, 16], calls, "output", "2.15.0")

json.dump(model(False), open(out + "/layer_normalization_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/layer_normalization_keras3.json", "w"), indent=1)
