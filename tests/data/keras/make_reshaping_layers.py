# Writes tests/data/keras/reshaping_layers_{tf2,keras3}.json: one small
# functional model of the layers that only move elements, in the two formats
# a model.to_json() takes: a U-Net-style decoder step (a strided Conv2D,
# UpSampling2D back, Concatenate with the skip), Permute swapping rows and
# columns, an uneven UpSampling2D, and over the image reshaped to steps x
# channels Permute swapping steps and channels and UpSampling1D. Each
# layer's keys as that Keras writes them (Keras 3: keras/src/layers/
# reshaping/up_sampling1d.py, up_sampling2d.py, permute.py get_config, sizes
# and dims as lists; tf-keras 2.x: keras/layers/reshaping/, the same keys). Written by hand; no Keras is needed:
#   python3 tests/data/keras/make_reshaping_layers.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import functional, init, penalties

def conv(k3, rank, f, k, s=1, padding="valid", act="linear"):
    return ("Conv%dD" % rank, {"filters": f, "kernel_size": [k] * rank, "strides": [s] * rank, "padding": padding,
            "data_format": "channels_last", "dilation_rate": [1] * rank, "groups": 1, "activation": act,
            "use_bias": True, "kernel_initializer": init(k3, "GlorotUniform"), "bias_initializer": init(k3, "Zeros"),
            **penalties("kernel", "bias")})

def up2d(size):
    return ("UpSampling2D", {"size": size, "data_format": "channels_last", "interpolation": "nearest"})

def layers(k3):
    return [
        ("skip", conv(k3, 2, 4, 3, padding="same", act="relu"), ["input_1"]),                   # 8x8x4
        ("down", conv(k3, 2, 6, 3, s=2, padding="same", act="relu"), ["skip"]),                 # 4x4x6
        ("up", up2d([2, 2]), ["down"]),                                                          # 8x8x6
        ("cat", ("Concatenate", {"axis": -1}), ["skip", "up"]),                                  # 8x8x10
        ("swap", ("Permute", {"dims": [2, 1, 3]}), ["cat"]),                                    # rows <-> columns
        ("c2", conv(k3, 2, 3, 3, s=2, act="tanh"), ["swap"]),                                    # 3x3x3
        ("up_wide", up2d([2, 3]), ["c2"]),                                                       # 6x9x3
        ("steps", ("Reshape", {"target_shape": [18, 9]}), ["up_wide"]),                          # 18x9
        ("features_first", ("Permute", {"dims": [2, 1]}), ["steps"]),                            # 9x18
        ("c1", conv(k3, 1, 4, 3, s=2, act="relu"), ["features_first"]),                          # 4x4
        ("up1", ("UpSampling1D", {"size": 2}), ["c1"]),                                          # 8x4
        ("flatten", ("Flatten", {"data_format": "channels_last"}), ["up1"]),
        ("dense", ("Dense", {"units": 10, "activation": "softmax", "use_bias": True, "kernel_initializer": init(k3, "GlorotUniform"),
                             "bias_initializer": init(k3, "Zeros"), **penalties("kernel", "bias")}), ["flatten"]),
    ]

def model(k3):
    return functional(k3, "reshaping_layers", [None, 8, 8, 2], layers(k3), "dense", "2.13.1")

json.dump(model(False), open(out + "/reshaping_layers_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/reshaping_layers_keras3.json", "w"), indent=1)
