# Writes tests/data/keras/several_inputs_outputs_{tf2,keras3}.json: a
# functional model with two inputs and two outputs, as Keras writes one
# (keras_json.py): an image through a convolution and global average pooling,
# a vector of 5 features through a dense layer, both concatenated into the
# main classifier; an auxiliary classifier on the pooled image alone (as
# GoogLeNet's auxiliary heads). config.input_layers lists the inputs in the
# opposite order of the layers, so a reader that takes the layers' order
# feeds them swapped. No Keras is needed to run it:
#   python3 tests/data/keras/make_several_inputs_outputs.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import conv, dense, dtype, input_layer, layer

def model(k3):
    ls = [input_layer(k3, "image", [None, 8, 8, 1]), input_layer(k3, "meta", [None, 5]),
          layer(k3, *conv(k3, "conv", 4, "relu"), [[("image", 0)]]),
          layer(k3, "GlobalAveragePooling2D", {"name": "gap", "trainable": True, "dtype": dtype(k3),
                "data_format": "channels_last", "keepdims": False}, [[("conv", 0)]]),
          layer(k3, *dense(k3, "meta_dense", 6, "relu"), [[("meta", 0)]]),
          layer(k3, "Concatenate", {"name": "concatenate", "trainable": True, "dtype": dtype(k3), "axis": -1},
                [[("gap", 0), ("meta_dense", 0)]]),
          layer(k3, *dense(k3, "main", 10, "softmax"), [[("concatenate", 0)]]),
          layer(k3, *dense(k3, "aux", 10, "softmax"), [[("gap", 0)]])]
    cfg = {"name": "several_inputs_outputs", "trainable": True, "layers": ls,
           "input_layers": [["meta", 0, 0], ["image", 0, 0]], "output_layers": [["main", 0, 0], ["aux", 0, 0]]}
    if k3:
        return {"module": "keras.src.models.functional", "class_name": "Functional", "config": cfg,
                "registered_name": "Functional", "build_config": {"input_shape": None}}
    return {"class_name": "Functional", "config": cfg, "keras_version": "2.13.1", "backend": "tensorflow"}

json.dump(model(False), open(out + "/several_inputs_outputs_tf2.json", "w"), indent=1)
json.dump(model(True), open(out + "/several_inputs_outputs_keras3.json", "w"), indent=1)
