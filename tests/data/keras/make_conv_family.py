# Writes tests/data/keras/conv_family_{tf2,keras3}.json: one small functional
# model of the convolution family in the two formats a model.to_json()
# takes: a MobileNet-style depthwise-separable block (DepthwiseConv2D without
# bias, BatchNormalization, relu, 1x1 Conv2D), a SeparableConv2D, a dilated
# grouped Conv2D, a Conv2DTranspose, and a 1-D branch (Conv1D causal and
# dilated, DepthwiseConv1D, SeparableConv1D, Conv1DTranspose) over the image
# reshaped to steps x channels. Each layer's keys as that Keras writes them
# (TF 2.x: the Conv base's keys too, e.g. groups and kernel_* on
# SeparableConv2D; Keras 3: base_depthwise_conv.py, base_separable_conv.py,
# base_conv_transpose.py get_config). Written by hand; no Keras is needed:
#   python3 tests/data/keras/make_conv_family.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import functional, init, penalties

def window(rank, k, s=1, d=1, padding="valid"):
    return {"kernel_size": [k] * rank if isinstance(k, int) else k, "strides": [s] * rank, "padding": padding,
            "data_format": "channels_last", "dilation_rate": [d] * rank}

def conv(k3, rank, f, k, s=1, d=1, padding="valid", groups=1, act="linear", bias=True):
    return ("Conv%dD" % rank, {"filters": f, **window(rank, k, s, d, padding), "groups": groups, "activation": act,
            "use_bias": bias, "kernel_initializer": init(k3, "GlorotUniform"), "bias_initializer": init(k3, "Zeros"),
            **penalties("kernel", "bias")})

def depthwise(k3, rank, k, m=1, s=1, d=1, padding="valid", act="linear", bias=True):
    c = {**window(rank, k, s, d, padding), "activation": act, "use_bias": bias, "depth_multiplier": m,
         "depthwise_initializer": init(k3, "GlorotUniform"), "bias_initializer": init(k3, "Zeros"),
         **penalties("depthwise", "bias")}
    if not k3: c["groups"] = 1  # TF 2.x's Conv base key
    return ("DepthwiseConv%dD" % rank, c)

def separable(k3, rank, f, k, m=1, s=1, d=1, padding="valid", act="linear", bias=True):
    c = {"filters": f, **window(rank, k, s, d, padding), "depth_multiplier": m, "activation": act, "use_bias": bias,
         "depthwise_initializer": init(k3, "GlorotUniform"), "pointwise_initializer": init(k3, "GlorotUniform"),
         "bias_initializer": init(k3, "Zeros"), **penalties("depthwise", "pointwise", "bias")}
    if not k3:  # TF 2.x's Conv base keys
        c.update({"groups": 1, "kernel_initializer": init(k3, "GlorotUniform"), "kernel_regularizer": None,
                  "kernel_constraint": None})
    return ("SeparableConv%dD" % rank, c)

def transpose(k3, rank, f, k, s=1, d=1, padding="valid", output_padding=None, act="linear"):
    c = {"filters": f, **window(rank, k, s, d, padding), "activation": act, "use_bias": True,
         "kernel_initializer": init(k3, "GlorotUniform"), "bias_initializer": init(k3, "Zeros"),
         **penalties("kernel", "bias")}
    if not k3: c.update({"groups": 1, "output_padding": output_padding})
    elif output_padding is not None: c["output_padding"] = output_padding
    return ("Conv%dDTranspose" % rank, c)

# (name, (class, config), inputs)
def layers(k3):
    bn = ("BatchNormalization", {
        "axis": -1 if k3 else [3], "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True,
        "beta_initializer": init(k3, "Zeros"), "gamma_initializer": init(k3, "Ones"), "moving_mean_initializer": init(k3, "Zeros"),
        "moving_variance_initializer": init(k3, "Ones"), "beta_regularizer": None, "gamma_regularizer": None,
        "beta_constraint": None, "gamma_constraint": None, **({"synchronized": False} if k3 else {})})
    return [
        ("stem", conv(k3, 2, 8, 3, 2, padding="same", act="relu"), ["input_1"]),                     # 4x4x8
        ("dw", depthwise(k3, 2, 3, padding="same", bias=False), ["stem"]),
        ("dw_bn", bn, ["dw"]),
        ("dw_relu", ("Activation", {"activation": "relu"}), ["dw_bn"]),
        ("pw", conv(k3, 2, 8, 1), ["dw_relu"]),
        ("sep", separable(k3, 2, 8, 3, m=2, padding="same", act="relu"), ["pw"]),
        ("grouped", conv(k3, 2, 8, 3, d=2, padding="same", groups=4), ["sep"]),
        ("up", transpose(k3, 2, 4, 3, 2, padding="same", act="relu"), ["grouped"]),                 # 8x8x4
        ("steps", ("Reshape", {"target_shape": [16, 16]}), ["up"]),
        ("c1", conv(k3, 1, 6, 3, d=2, padding="causal", act="relu"), ["steps"]),
        ("dw1", depthwise(k3, 1, 3, m=2, padding="same"), ["c1"]),
        ("sep1", separable(k3, 1, 6, 3, padding="valid", act="tanh"), ["dw1"]),                     # 14x6
        ("up1", transpose(k3, 1, 4, 2, 2, output_padding=1), ["sep1"]),                               # 29x4
        ("flatten", ("Flatten", {"data_format": "channels_last"}), ["up1"]),
        ("dense", ("Dense", {"units": 10, "activation": "softmax", "use_bias": True, "kernel_initializer": init(k3, "GlorotUniform"),
                             "bias_initializer": init(k3, "Zeros"), **penalties("kernel", "bias")}), ["flatten"]),
    ]

def model(k3):
    return functional(k3, "conv_family", [None, 8, 8, 3], layers(k3), "dense", "2.12.0")

json.dump(model(False), open(out + "/conv_family_tf2.json", "w"))
json.dump(model(True), open(out + "/conv_family_keras3.json", "w"))
