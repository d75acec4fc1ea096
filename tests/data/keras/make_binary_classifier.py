# Writes tests/data/keras/binary_classifier_keras3.json: a Keras 3 Sequential
# binary classifier as `model.to_json()` writes one after
# model.compile(optimizer="adam", loss="binary_crossentropy",
# metrics=["accuracy"]): 8 features, Dense(16, relu), Dense(1, sigmoid) —
# the kind of model a Keras tutorial builds first. Its target is the label
# itself (0 or 1). Written by hand after Keras 3's serialization
# (keras_json.py); no Keras is needed to run it:
#   python3 tests/data/keras/make_binary_classifier.py tests/data/keras
import json, sys
out = sys.argv[1]

from keras_json import dense, dtype, input_layer, obj

def dense_layer(name, units, activation):
    return obj(True, "keras.layers", *dense(True, name, units, activation))

adam = obj(True, "keras.optimizers", "Adam", {"name": "adam", "learning_rate": 0.0010000000474974513, "weight_decay": None,
           "clipnorm": None, "global_clipnorm": None, "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
           "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None,
           "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False})
layers = [{k: v for k, v in input_layer(True, "input_layer", [None, 8]).items() if k not in ("name", "inbound_nodes")},
          dense_layer("dense", 16, "relu"), dense_layer("dense_1", 1, "sigmoid")]
model = {"module": "keras", "class_name": "Sequential",
         "config": {"name": "sequential", "trainable": True, "dtype": dtype(True), "layers": layers},
         "registered_name": None, "build_config": {"input_shape": [None, 8]},
         "compile_config": {"optimizer": adam, "loss": "binary_crossentropy", "loss_weights": None,
                            "metrics": ["accuracy"], "weighted_metrics": None, "run_eagerly": False,
                            "steps_per_execution": 1, "jit_compile": False}}
json.dump(model, open(out + "/binary_classifier_keras3.json", "w"), indent=1)
