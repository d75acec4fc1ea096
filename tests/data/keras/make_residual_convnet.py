# Writes tests/data/keras/residual_convnet_{tf2,keras3}.json: one small residual
# convnet (identity and projection shortcuts, batch normalization, global
# average and max pooling, concatenation) in the two formats a functional
# model.to_json() takes: TF 2.x Keras (inbound_nodes as nested lists) and
# Keras 3 (__keras_tensor__ args). Written by hand after files Keras wrote,
# key for key; no Keras is needed to run it:
#   python3 tests/data/keras/make_residual_convnet.py tests/data/keras
import json, sys
out = sys.argv[1]

def glorot(k3):
    if k3: return {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": None}, "registered_name": None}
    return {"class_name": "GlorotUniform", "config": {"seed": None}}
def zeros(k3):
    if k3: return {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": None}
    return {"class_name": "Zeros", "config": {}}
def ones(k3):
    if k3: return {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": None}
    return {"class_name": "Ones", "config": {}}
def dtype(k3):
    if k3: return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
    return "float32"

# (class, name, config, inputs)
def layers(k3):
    conv = lambda name, f, k, s=1, act="linear": ("Conv2D", name, {
        "filters": f, "kernel_size": [k, k], "strides": [s, s], "padding": "same", "data_format": "channels_last",
        "dilation_rate": [1, 1], "groups": 1, "activation": act, "use_bias": True,
        "kernel_initializer": glorot(k3), "bias_initializer": zeros(k3), "kernel_regularizer": None,
        "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None})
    bn = lambda name: ("BatchNormalization", name, {
        "axis": -1 if k3 else [3], "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True,
        "beta_initializer": zeros(k3), "gamma_initializer": ones(k3), "moving_mean_initializer": zeros(k3),
        "moving_variance_initializer": ones(k3), "beta_regularizer": None, "gamma_regularizer": None,
        "beta_constraint": None, "gamma_constraint": None, **({"synchronized": False} if k3 else {})})
    act = lambda name, a: ("Activation", name, {"activation": a})
    L = [
        (*conv("conv2d", 8, 3), ["input_1"]),
        (*bn("batch_normalization"), ["conv2d"]),
        (*act("activation", "relu"), ["batch_normalization"]),
        (*conv("conv2d_1", 8, 3, act="relu"), ["activation"]),
        (*conv("conv2d_2", 8, 3), ["conv2d_1"]),
        ("Add", "add", {}, ["conv2d_2", "activation"]),
        (*act("activation_1", "relu"), ["add"]),
        (*conv("conv2d_3", 16, 3, 2, "relu"), ["activation_1"]),
        (*conv("conv2d_4", 16, 1, 2), ["activation_1"]),
        ("Add", "add_1", {}, ["conv2d_3", "conv2d_4"]),
        ("GlobalAveragePooling2D", "global_average_pooling2d", {"data_format": "channels_last", "keepdims": False}, ["add_1"]),
        ("GlobalMaxPooling2D", "global_max_pooling2d", {"data_format": "channels_last", "keepdims": False}, ["add_1"]),
        ("Concatenate", "concatenate", {"axis": -1}, ["global_average_pooling2d", "global_max_pooling2d"]),
        ("Dense", "dense", {"units": 10, "activation": "softmax", "use_bias": True, "kernel_initializer": glorot(k3),
                            "bias_initializer": zeros(k3), "kernel_regularizer": None, "bias_regularizer": None,
                            "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}, ["concatenate"]),
    ]
    return L

shapes = {"input_1": [None, 8, 8, 1]}
def tensor(name):
    return {"class_name": "__keras_tensor__", "config": {"shape": shapes.get(name), "dtype": "float32", "keras_history": [name, 0, 0]}}

def model(k3):
    ls = []
    if k3:
        ls.append({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [None, 8, 8, 1], "dtype": "float32", "sparse": False, "name": "input_1"}, "registered_name": None, "name": "input_1", "inbound_nodes": []})
    else:
        ls.append({"class_name": "InputLayer", "config": {"batch_input_shape": [None, 8, 8, 1], "dtype": "float32", "sparse": False, "ragged": False, "name": "input_1"}, "name": "input_1", "inbound_nodes": []})
    for cls, name, cfg, ins in layers(k3):
        c = {"name": name, "trainable": True, "dtype": dtype(k3), **cfg}
        if k3:
            args = [tensor(i) for i in ins]
            node = {"args": [args] if len(ins) > 1 else args, "kwargs": {}}
            ls.append({"module": "keras.layers", "class_name": cls, "config": c, "registered_name": None,
                       "build_config": {"input_shape": None}, "name": name, "inbound_nodes": [node]})
        else:
            ls.append({"class_name": cls, "config": c, "name": name, "inbound_nodes": [[[i, 0, 0, {}] for i in ins]]})
    cfg = {"name": "small_resnet", "trainable": True, "layers": ls,
           "input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}
    if k3:
        return {"module": "keras.src.models.functional", "class_name": "Functional", "config": cfg,
                "registered_name": "Functional", "build_config": {"input_shape": None}}
    return {"class_name": "Functional", "config": cfg, "keras_version": "2.12.0", "backend": "tensorflow"}

json.dump(model(False), open(out + "/residual_convnet_tf2.json", "w"))
json.dump(model(True), open(out + "/residual_convnet_keras3.json", "w"))
