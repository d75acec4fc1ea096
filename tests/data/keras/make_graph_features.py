# Writes tests/data/keras/graph_features_{tf2,keras3}.json: one small functional
# convnet that uses what a functional config says beyond a plain graph of
# layers: a nested Sequential model (an InputLayer, a convolution and a batch
# normalization), a convolution called twice (a shared layer: its second call
# reads its first call's output), and TF op nodes of `x + y` and
# `tf.math.multiply(x, y)` (TF 2.x: TFOpLambda nodes with the second operand in
# kwargs.y; Keras 3: keras.src.ops.numpy operation nodes). Written by hand
# after the formats of tf-keras's node.py / tf_op_layer.py and Keras 3's
# functional.py, key for key; no Keras is needed to run it:
#   python3 tests/data/keras/make_graph_features.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import conv, bn, dtype, glorot, input_layer, layer, obj, tf_op, zeros

def model(k3):
    block_layers = [input_layer(k3, "block_input", [None, 8, 8, 1])]
    c, cfg = conv(k3, "conv_a", 4, "relu"); block_layers.append({**obj(k3, "keras.layers", c, cfg), **({"build_config": {"input_shape": [None, 8, 8, 1]}} if k3 else {})})
    c, cfg = bn(k3, "bn_a"); block_layers.append(obj(k3, "keras.layers", c, cfg))
    block_cfg = {"name": "block", "trainable": True, "dtype": dtype(k3), "layers": block_layers}
    block = {**obj(k3, "keras.src.models.sequential" if k3 else None, "Sequential", block_cfg), "name": "block",
             "inbound_nodes": layer(k3, "X", {"name": "block"}, [[("input_1", 0)]])["inbound_nodes"]}
    if k3: block["registered_name"] = "Sequential"
    else: block.pop("module", None)
    add3, mul3 = ("Add", "Multiply")
    ls = [input_layer(k3, "input_1", [None, 8, 8, 1]), block,
          layer(k3, *conv(k3, "shared_conv", 4), [[("block", 0)], [("shared_conv", 0)]]),
          tf_op(k3, add3, "__operators__.add", ("shared_conv", 0), ("shared_conv", 1)),
          tf_op(k3, mul3, "math.multiply", ("add" if k3 else "tf.__operators__.add", 0), ("block", 0)),
          layer(k3, "GlobalAveragePooling2D", {"name": "gap", "trainable": True, "dtype": dtype(k3),
                "data_format": "channels_last", "keepdims": False}, [[("multiply" if k3 else "tf.math.multiply", 0)]]),
          layer(k3, "Dense", {"name": "dense", "trainable": True, "dtype": dtype(k3), "units": 10, "activation": "softmax",
                "use_bias": True, "kernel_initializer": glorot(k3), "bias_initializer": zeros(k3), "kernel_regularizer": None,
                "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None},
                [[("gap", 0)]])]
    cfg = {"name": "graph_features", "trainable": True, "layers": ls,
           "input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}
    if k3:
        return {"module": "keras.src.models.functional", "class_name": "Functional", "config": cfg,
                "registered_name": "Functional", "build_config": {"input_shape": None}}
    return {"class_name": "Functional", "config": cfg, "keras_version": "2.13.1", "backend": "tensorflow"}

json.dump(model(False), open(out + "/graph_features_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/graph_features_keras3.json", "w"), indent=1)
