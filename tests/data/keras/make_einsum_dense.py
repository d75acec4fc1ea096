# Writes tests/data/keras/einsum_dense_{tf2,keras3}.json: the projections of
# an attention block as Keras's MultiHeadAttention builds them, written as
# EinsumDense layers over [6 steps, 8 features]: "abc,cde->abde" to 2 heads
# of 3 (bias "de", tanh), back with "abcd,cde->abe" to 8 (bias "e"), a
# residual Add, "...x,xy->...y" to 5 (no bias), then Flatten and a softmax
# Dense. Written by hand after tf-keras's and Keras 3's
# EinsumDense.get_config(), key for key (Keras 3 adds quantization_config);
# no Keras is needed to run it:
#   python3 tests/data/keras/make_einsum_dense.py tests/data/keras
import json, sys
from keras_json import dense, functional, init, penalties

out = sys.argv[1]

def einsum_dense(k3, equation, output_shape, bias_axes, activation):
    cfg = {"output_shape": output_shape, "equation": equation, "activation": activation, "bias_axes": bias_axes,
           "kernel_initializer": init(k3, "GlorotUniform"), "bias_initializer": init(k3, "Zeros"),
           **penalties("kernel", "bias")}
    if k3: cfg["quantization_config"] = None
    return ("EinsumDense", cfg)

def without_name(layer):
    cls, cfg = layer
    return cls, {k: v for k, v in cfg.items() if k not in ("name", "trainable", "dtype")}

def model(k3):
    calls = [("heads", einsum_dense(k3, "abc,cde->abde", [None, 2, 3], "de", "tanh"), ["input_1"]),
             ("merge_heads", einsum_dense(k3, "abcd,cde->abe", [None, 8], "e", "linear"), ["heads"]),
             ("residual", ("Add", {}), ["input_1", "merge_heads"]),
             ("features", einsum_dense(k3, "...x,xy->...y", 5, None, "relu"), ["residual"]),
             ("flatten", ("Flatten", {"data_format": "channels_last"}), ["features"]),
             ("output", without_name(dense(k3, "output", 10, "softmax")), ["flatten"])]
    return functional(k3, "einsum_dense", [None, 6, 8], calls, "output", "2.15.0")

json.dump(model(False), open(out + "/einsum_dense_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/einsum_dense_keras3.json", "w"), indent=1)
