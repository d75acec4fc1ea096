# Writes tests/data/keras/activation_layers_{tf2,keras3}.json: one small
# functional convnet of the activation layers as Keras writes them:
# Rescaling and Normalization of the input, Conv2D with the swish and
# hard_sigmoid activations (hard_sigmoid's slope is 0.2 in a TF 2.x file,
# 1/6 in Keras 3's), ReLU(6.) as MobileNetV2 writes it, PReLU sharing alpha
# over rows and columns, a TF op scaling a tensor by a number (x * 0.5: TF
# 2.x TFOpLambda with kwargs.y, Keras 3 a keras.src.ops.numpy Multiply node
# with a constant argument), LeakyReLU (TF 2.x `alpha`, Keras 3
# `negative_slope`), ELU (Keras 3 writes no alpha) and a Softmax layer ending
# the model. Written by hand after tf-keras's and Keras 3's get_config()
# of each layer, key for key; no Keras is needed to run it:
#   python3 tests/data/keras/make_activation_layers.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import dtype, input_layer, obj

def tensor(name):
    return {"class_name": "__keras_tensor__", "config": {"shape": None, "dtype": "float32", "keras_history": [name, 0, 0]}}

def layer(k3, cls, config, reads):
    config = {"name": config.pop("name"), "trainable": True, "dtype": dtype(k3), **config}
    name = config["name"]
    if k3:
        return {"module": "keras.layers", "class_name": cls, "config": config, "registered_name": None,
                "build_config": {"input_shape": None}, "name": name,
                "inbound_nodes": [{"args": [tensor(reads)], "kwargs": {}}]}
    return {"class_name": cls, "config": config, "name": name, "inbound_nodes": [[[reads, 0, 0, {}]]]}

def scaled(k3, x, factor):
    """x * factor, a TF op node."""
    if k3:
        return {"module": "keras.src.ops.numpy", "class_name": "Multiply", "config": {"name": "multiply"},
                "registered_name": "Multiply", "name": "multiply", "inbound_nodes": [{"args": [tensor(x), factor], "kwargs": {}}]}
    return {"class_name": "TFOpLambda", "config": {"name": "tf.math.multiply", "trainable": True, "dtype": "float32",
            "function": "math.multiply"}, "name": "tf.math.multiply",
            "inbound_nodes": [[[x, 0, 0, {"y": factor, "name": None}]]]}

def conv(k3, name, activation, reads):
    init = lambda cls, cfg: obj(k3, "keras.initializers", cls, cfg)
    return layer(k3, "Conv2D", {"name": name, "filters": 4, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same",
                 "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": activation,
                 "use_bias": True, "kernel_initializer": init("GlorotUniform", {"seed": None}),
                 "bias_initializer": init("Zeros", {}), "kernel_regularizer": None, "bias_regularizer": None,
                 "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}, reads)

def model(k3):
    init = lambda cls, cfg: obj(k3, "keras.initializers", cls, cfg)
    scale = {"class_name": "__numpy__", "config": {"value": [2.0], "dtype": "float32"}} if k3 else 2.0
    ls = [input_layer(k3, "input_1", [None, 8, 8, 1]),
          layer(k3, "Rescaling", {"name": "rescaling", "scale": scale, "offset": -1.0}, "input_1"),
          layer(k3, "Normalization", {"name": "normalization", "axis": [-1], "invert": False, "mean": [0.25],
                "variance": [0.5]}, "rescaling"),
          conv(k3, "conv_a", "swish", "normalization"),
          layer(k3, "ReLU", {"name": "relu6", "max_value": 6.0, "negative_slope": 0.0, "threshold": 0.0}, "conv_a"),
          conv(k3, "conv_b", "hard_sigmoid", "relu6"),
          layer(k3, "PReLU", {"name": "prelu", "alpha_initializer": init("Zeros", {}), "alpha_regularizer": None,
                "alpha_constraint": None, "shared_axes": [1, 2]}, "conv_b"),
          scaled(k3, "prelu", 0.5),
          layer(k3, "LeakyReLU", {"name": "leaky", **({"negative_slope": 0.2} if k3 else {"alpha": 0.2})},
                "multiply" if k3 else "tf.math.multiply"),
          layer(k3, "ELU", {"name": "elu"} if k3 else {"name": "elu", "alpha": 1.0}, "leaky"),
          layer(k3, "GlobalAveragePooling2D", {"name": "gap", "data_format": "channels_last", "keepdims": False}, "elu"),
          layer(k3, "Dense", {"name": "dense", "units": 10, "activation": "linear", "use_bias": True,
                "kernel_initializer": init("GlorotUniform", {"seed": None}), "bias_initializer": init("Zeros", {}),
                "kernel_regularizer": None, "bias_regularizer": None, "activity_regularizer": None,
                "kernel_constraint": None, "bias_constraint": None}, "gap"),
          layer(k3, "Softmax", {"name": "softmax", "axis": -1}, "dense")]
    cfg = {"name": "activation_layers", "trainable": True, "layers": ls,
           "input_layers": [["input_1", 0, 0]], "output_layers": [["softmax", 0, 0]]}
    if k3:
        return {"module": "keras.src.models.functional", "class_name": "Functional", "config": cfg,
                "registered_name": "Functional", "build_config": {"input_shape": None}}
    return {"class_name": "Functional", "config": cfg, "keras_version": "2.13.1", "backend": "tensorflow"}

json.dump(model(False), open(out + "/activation_layers_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/activation_layers_keras3.json", "w"), indent=1)
