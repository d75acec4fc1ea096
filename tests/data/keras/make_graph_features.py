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

def obj(k3, module, cls, config):
    if k3: return {"module": module, "class_name": cls, "config": config, "registered_name": None}
    return {"class_name": cls, "config": config}
def glorot(k3): return obj(k3, "keras.initializers", "GlorotUniform", {"seed": None})
def zeros(k3): return obj(k3, "keras.initializers", "Zeros", {})
def ones(k3): return obj(k3, "keras.initializers", "Ones", {})
def dtype(k3): return obj(k3, "keras", "DTypePolicy", {"name": "float32"}) if k3 else "float32"

def conv(k3, name, filters, act="linear"):
    return ("Conv2D", {"name": name, "trainable": True, "dtype": dtype(k3), "filters": filters, "kernel_size": [3, 3],
            "strides": [1, 1], "padding": "same", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1,
            "activation": act, "use_bias": True, "kernel_initializer": glorot(k3), "bias_initializer": zeros(k3),
            "kernel_regularizer": None, "bias_regularizer": None, "activity_regularizer": None,
            "kernel_constraint": None, "bias_constraint": None})
def bn(k3, name):
    return ("BatchNormalization", {"name": name, "trainable": True, "dtype": dtype(k3), "axis": -1 if k3 else [3],
            "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True, "beta_initializer": zeros(k3),
            "gamma_initializer": ones(k3), "moving_mean_initializer": zeros(k3), "moving_variance_initializer": ones(k3),
            "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None,
            **({"synchronized": False} if k3 else {})})

def input_layer(k3, name, shape):
    if k3:
        return {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": shape, "dtype": "float32",
                "sparse": False, "name": name}, "registered_name": None, "name": name, "inbound_nodes": []}
    return {"class_name": "InputLayer", "config": {"batch_input_shape": shape, "dtype": "float32", "sparse": False,
            "ragged": False, "name": name}, "name": name, "inbound_nodes": []}

def tensor(name, node=0):
    return {"class_name": "__keras_tensor__", "config": {"shape": None, "dtype": "float32", "keras_history": [name, node, 0]}}

def layer(k3, cls, config, calls):
    """calls: per call, its inputs [(layer, node)]."""
    name = config["name"]
    if k3:
        nodes = [{"args": [[tensor(*i) for i in ins]] if len(ins) > 1 else [tensor(*i) for i in ins], "kwargs": {}} for ins in calls]
        return {"module": "keras.layers", "class_name": cls, "config": config, "registered_name": None,
                "build_config": {"input_shape": None}, "name": name, "inbound_nodes": nodes}
    return {"class_name": cls, "config": config, "name": name,
            "inbound_nodes": [[[i[0], i[1], 0, {}] for i in ins] for ins in calls]}

def tf_op(k3, op3, function, x, y):
    """x op y, both tensors (layer, node)."""
    if k3:
        name = op3.lower()
        return {"module": "keras.src.ops.numpy", "class_name": op3, "config": {"name": name}, "registered_name": op3,
                "name": name, "inbound_nodes": [{"args": [tensor(*x), tensor(*y)], "kwargs": {}}]}
    name = "tf." + function
    return {"class_name": "TFOpLambda", "config": {"name": name, "trainable": True, "dtype": "float32", "function": function},
            "name": name, "inbound_nodes": [[[x[0], x[1], 0, {"y": [y[0], y[1], 0], "name": None}]]]}

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
