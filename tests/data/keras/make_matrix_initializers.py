# Writes tests/data/keras/matrix_initializers_{tf2,keras3}.json: a small MLP
# over 8 features whose kernels are drawn by Keras's matrix initializers:
# Dense 16 with an Orthogonal kernel (8 x 16: orthogonal rows), Dense 16 relu
# with an Identity kernel, Dense 10 softmax with an Orthogonal kernel of gain
# 2 and a seed (16 x 10: orthogonal columns). tf-keras writes Orthogonal
# {"gain", "seed"} and Identity {"gain"}; Keras 3.0-3.3 named the classes
# OrthogonalInitializer and IdentityInitializer, later ones Orthogonal and
# Identity, and Keras 3's Identity writes no config at all (its get_config
# is the base Initializer's {}: the gain is lost, a reloaded model has
# gain 1). Written by hand after those get_config()s, key for key; no Keras
# is needed to run it:
#   python3 tests/data/keras/make_matrix_initializers.py tests/data/keras
import json, sys
from keras_json import dense, functional, obj

out = sys.argv[1]

def with_kernel(layer, init):
    cls, cfg = layer
    cfg = {k: v for k, v in cfg.items() if k not in ("name", "trainable", "dtype")}
    cfg["kernel_initializer"] = init
    return cls, cfg

def model(k3):
    orthogonal = obj(k3, "keras.initializers", "OrthogonalInitializer" if k3 else "Orthogonal", {"gain": 1.0, "seed": None})
    identity = obj(k3, "keras.initializers", "IdentityInitializer", {}) if k3 else obj(k3, "", "Identity", {"gain": 0.5})
    scaled = obj(k3, "keras.initializers", "Orthogonal", {"gain": 2.0, "seed": 7})
    calls = [("rotate", with_kernel(dense(k3, "rotate", 16, "linear"), orthogonal), ["input_1"]),
             ("skip", with_kernel(dense(k3, "skip", 16, "relu"), identity), ["rotate"]),
             ("output", with_kernel(dense(k3, "output", 10, "softmax"), scaled), ["skip"])]
    return functional(k3, "matrix_initializers", [None, 8], calls, "output", "2.15.0")

json.dump(model(False), open(out + "/matrix_initializers_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/matrix_initializers_keras3.json", "w"), indent=1)
