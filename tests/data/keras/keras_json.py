# The objects of a Keras model.to_json() file, in either format (TF 2.x
# Keras: {"class_name", "config"}; Keras 3: with "module" and
# "registered_name"), written by hand after tf-keras's node.py /
# tf_op_layer.py and Keras 3's functional.py, key for key, so the test files
# need no Keras to be made. Used by make_graph_features.py and
# make_several_inputs_outputs.py (and, below, by make_conv_family.py and
# make_reshaping_layers.py).

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

def dense(k3, name, units, activation):
    return ("Dense", {"name": name, "trainable": True, "dtype": dtype(k3), "units": units, "activation": activation,
            "use_bias": True, "kernel_initializer": glorot(k3), "bias_initializer": zeros(k3), "kernel_regularizer": None,
            "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None})

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

# Keras defaults of a layer's weights, and a functional model of one input.
def init(k3, cls):
    return obj(k3, "keras.initializers", cls, {"seed": None} if cls == "GlorotUniform" else {})

def penalties(*names):
    c = {"activity_regularizer": None}
    for n in names: c[n + "_regularizer"] = None; c[n + "_constraint"] = None
    return c

def functional(k3, name, batch_shape, calls, output, keras_version):
    """A Functional model: input layer input_1 of `batch_shape`, then `calls`
    ((name, (class, config), inputs) each, every input's first call), its
    output layer `output`."""
    ls = [input_layer(k3, "input_1", batch_shape)]
    for call, (cls, cfg), ins in calls:
        ls.append(layer(k3, cls, {"name": call, "trainable": True, "dtype": dtype(k3), **cfg}, [[(i, 0) for i in ins]]))
    cfg = {"name": name, "trainable": True, "layers": ls,
           "input_layers": [["input_1", 0, 0]], "output_layers": [[output, 0, 0]]}
    if k3:
        return {"module": "keras.src.models.functional", "class_name": "Functional", "config": cfg,
                "registered_name": "Functional", "build_config": {"input_shape": None}}
    return {"class_name": "Functional", "config": cfg, "keras_version": keras_version, "backend": "tensorflow"}
