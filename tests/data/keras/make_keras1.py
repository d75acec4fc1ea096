# Writes Keras 1 model.to_json() files, key for key as Keras 1.2.2 wrote them
# (the bare list of a Sequential's layers; every layer's get_config() with
# Keras 1's names: nb_filter, nb_row/nb_col, border_mode, subsample,
# dim_ordering, init, bias, W_/b_regularizer, output_dim, p, pool_length,
# stride; input_dtype and batch_input_shape on the first layer; a functional
# Model's inbound_nodes as [[name, node, tensor]] lists). The values follow
# the real Keras 1.2.1 file in public/driving_cnn_cropping_lambda_keras121.json.
#   mnist_cnn_keras1.json       Keras 1.2's examples/mnist_cnn.py: 2 x Convolution2D 32 3x3,
#                               MaxPooling2D, Dropout, Flatten, Dense 128, Dropout, Dense 10 softmax
#   conv1d_keras1.json          Convolution1D, MaxPooling1D, Flatten, Dense (output_dim) on 16 x 4
#   functional_keras1.json      a Keras 1 functional Model: Input, Convolution2D, Flatten, Dense
# Written without Keras:
#   python3 tests/data/keras/make_keras1.py tests/data/keras
import json, os, sys
out = sys.argv[1]

def conv2d(name, nb_filter, nb_row, nb_col, border_mode="valid", first=None):
    c = {"subsample": [1, 1], "trainable": True, "border_mode": border_mode, "nb_filter": nb_filter,
         "activation": "linear", "name": name, "W_constraint": None, "W_regularizer": None, "b_regularizer": None,
         "activity_regularizer": None, "nb_col": nb_col, "init": "glorot_uniform", "b_constraint": None, "bias": True,
         "dim_ordering": "tf", "nb_row": nb_row}
    if first: c.update({"input_dtype": "float32", "batch_input_shape": first})
    return {"class_name": "Convolution2D", "config": c}
def activation(name, act): return {"class_name": "Activation", "config": {"activation": act, "trainable": True, "name": name}}
def dropout(name, p): return {"class_name": "Dropout", "config": {"name": name, "p": p, "trainable": True}}
def dense(name, output_dim, input_dim, act="linear"):
    return {"class_name": "Dense", "config": {"input_dim": input_dim, "output_dim": output_dim, "trainable": True,
            "activation": act, "activity_regularizer": None, "b_regularizer": None, "W_regularizer": None,
            "W_constraint": None, "name": name, "init": "glorot_uniform", "bias": True, "b_constraint": None}}

mnist = [conv2d("convolution2d_1", 32, 3, 3, first=[None, 28, 28, 1]), activation("activation_1", "relu"),
         conv2d("convolution2d_2", 32, 3, 3), activation("activation_2", "relu"),
         {"class_name": "MaxPooling2D", "config": {"strides": [2, 2], "trainable": True, "border_mode": "valid",
                                                   "name": "maxpooling2d_1", "pool_size": [2, 2], "dim_ordering": "tf"}},
         dropout("dropout_1", 0.25), {"class_name": "Flatten", "config": {"trainable": True, "name": "flatten_1"}},
         dense("dense_1", 128, 4608), activation("activation_3", "relu"), dropout("dropout_2", 0.5),
         dense("dense_2", 10, 128), activation("activation_4", "softmax")]

conv1d = [{"class_name": "Convolution1D", "config": {"name": "convolution1d_1", "activity_regularizer": None,
           "trainable": True, "init": "glorot_uniform", "input_dtype": "float32", "subsample_length": 1, "bias": True,
           "border_mode": "same", "nb_filter": 8, "input_dim": 4, "b_regularizer": None, "W_regularizer": None,
           "activation": "relu", "batch_input_shape": [None, 16, 4], "input_length": 16, "filter_length": 3,
           "W_constraint": None, "b_constraint": None}},
          {"class_name": "MaxPooling1D", "config": {"name": "maxpooling1d_1", "trainable": True, "pool_length": 2,
                                                    "stride": 2, "border_mode": "valid"}},
          {"class_name": "Flatten", "config": {"trainable": True, "name": "flatten_1"}},
          dense("dense_1", 10, 64, "softmax")]

def node(layer): return [[layer, 0, 0]]
functional = {"name": "model_1", "input_layers": [["input_1", 0, 0]], "output_layers": [["dense_1", 0, 0]], "layers": [
    {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
     "config": {"batch_input_shape": [None, 8, 8, 2], "input_dtype": "float32", "sparse": False, "name": "input_1"}},
    dict(conv2d("convolution2d_1", 4, 3, 3, "same"), name="convolution2d_1", inbound_nodes=[node("input_1")]),
    {"class_name": "Flatten", "name": "flatten_1", "config": {"trainable": True, "name": "flatten_1"},
     "inbound_nodes": [node("convolution2d_1")]},
    dict(dense("dense_1", 10, 256, "softmax"), name="dense_1", inbound_nodes=[node("flatten_1")])]}

def write(name, doc):
    with open(os.path.join(out, name), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
write("mnist_cnn_keras1.json", {"class_name": "Sequential", "config": mnist, "keras_version": "1.2.2"})
write("conv1d_keras1.json", {"class_name": "Sequential", "config": conv1d, "keras_version": "1.2.2"})
write("functional_keras1.json", {"class_name": "Model", "config": functional, "keras_version": "1.2.2"})
