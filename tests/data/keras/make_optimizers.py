# Writes tests/data/keras/optimizers_keras3.json, a small Keras 3 Sequential
# MLP (64 features, Dense(32, relu), Dense(16, relu), Dense(10, softmax))
# compiled with Adam, and optimizer_compile_configs.json: by name, the
# compile_config Keras 3 writes for each
# optimizer of issue 32 (AdamW, Adagrad, Adamax, Nadam, SGD) with its
# learning-rate schedule, clipping and weight decay: the optimizer's
# get_config() (keras/src/optimizers/base_optimizer.py and each optimizer's
# own keys) and the schedule serialized as serialize_keras_object does
# (keras/src/optimizers/schedules/learning_rate_schedule.py get_config()).
# The tests put each compile_config into the model in turn. Written by hand,
# key for key; no Keras is needed to run it:
#   python3 tests/data/keras/make_optimizers.py tests/data/keras
import json, sys
out = sys.argv[1]

def obj(module, cls, config):
    return {"module": module, "class_name": cls, "config": config, "registered_name": None}
def dtype(): return obj("keras", "DTypePolicy", {"name": "float32"})

def dense(name, units, activation, fan_in):
    return {"module": "keras.layers", "class_name": "Dense", "config": {
                "name": name, "trainable": True, "dtype": dtype(), "units": units, "activation": activation,
                "use_bias": True, "kernel_initializer": obj("keras.initializers", "GlorotUniform", {"seed": None}),
                "bias_initializer": obj("keras.initializers", "Zeros", {}), "kernel_regularizer": None,
                "bias_regularizer": None, "kernel_constraint": None, "bias_constraint": None},
            "registered_name": None, "build_config": {"input_shape": [None, fan_in]}}

def optimizer(cls, name, learning_rate, own, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None):
    config = {"name": name, "learning_rate": learning_rate, "weight_decay": weight_decay, "clipnorm": clipnorm,
              "global_clipnorm": global_clipnorm, "clipvalue": clipvalue, "use_ema": False, "ema_momentum": 0.99,
              "ema_overwrite_frequency": None, "loss_scale_factor": None, "gradient_accumulation_steps": None, **own}
    return obj("keras.optimizers", cls, config)

def schedule(cls, config):
    return obj("keras.optimizers.schedules", cls, config)

def compile_config(opt):
    return {"optimizer": opt,
            "loss": obj("keras.losses", "SparseCategoricalCrossentropy",
                        {"name": "sparse_categorical_crossentropy", "reduction": "sum_over_batch_size",
                         "from_logits": False, "ignore_class": None}),
            "loss_weights": None, "metrics": ["accuracy"], "weighted_metrics": None, "run_eagerly": False,
            "steps_per_execution": 4, "jit_compile": False}

adam_keys = lambda b1, b2: {"beta_1": b1, "beta_2": b2, "epsilon": 1e-07, "amsgrad": False}
configs = {
    # AdamW(CosineDecay(0.0, 10, warmup_target=0.005, warmup_steps=5), global_clipnorm=0.5); weight_decay 0.004, its default
    "adamw_cosine_warmup_global_clipnorm": compile_config(optimizer(
        "AdamW", "adamw", schedule("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 10, "alpha": 0.0,
                                                   "name": "CosineDecay", "warmup_target": 0.005, "warmup_steps": 5}),
        adam_keys(0.9, 0.999), weight_decay=0.004, global_clipnorm=0.5)),
    # Adagrad(ExponentialDecay(0.05, 4, 0.7, staircase=True), clipnorm=0.1)
    "adagrad_exponential_clipnorm": compile_config(optimizer(
        "Adagrad", "adagrad", schedule("ExponentialDecay", {"initial_learning_rate": 0.05, "decay_steps": 4,
                                                            "decay_rate": 0.7, "staircase": True, "name": "ExponentialDecay"}),
        {"initial_accumulator_value": 0.1, "epsilon": 1e-07}, clipnorm=0.1)),
    # Adamax(PiecewiseConstantDecay([6, 14], [0.006, 0.003, 0.001]), clipvalue=0.01)
    "adamax_piecewise_clipvalue": compile_config(optimizer(
        "Adamax", "adamax", schedule("PiecewiseConstantDecay", {"boundaries": [6, 14], "values": [0.006, 0.003, 0.001],
                                                                "name": "PiecewiseConstant"}),
        {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07}, clipvalue=0.01)),
    # Nadam(PolynomialDecay(0.004, 12, 0.0005, power=0.5), weight_decay=0.1)
    "nadam_polynomial_weight_decay": compile_config(optimizer(
        "Nadam", "nadam", schedule("PolynomialDecay", {"initial_learning_rate": 0.004, "decay_steps": 12,
                                                       "end_learning_rate": 0.0005, "power": 0.5, "cycle": False,
                                                       "name": "PolynomialDecay"}),
        {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07}, weight_decay=0.1)),
    # SGD(InverseTimeDecay(0.1, 2, 0.5), momentum=0.9, nesterov=True, weight_decay=0.01)
    "sgd_inverse_time_nesterov_weight_decay": compile_config(optimizer(
        "SGD", "SGD", schedule("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5,
                                                    "staircase": False, "name": "InverseTimeDecay"}),
        {"momentum": 0.9, "nesterov": True}, weight_decay=0.01)),
    # Adam(0.002) as Keras writes a float rate (float32's nearest double), every option at its default
    "adam_plain": compile_config(optimizer("Adam", "adam", 0.0020000000949949026, adam_keys(0.9, 0.999))),
}

model = {"module": "keras", "class_name": "Sequential", "config": {
             "name": "optimizers_mlp", "trainable": True, "dtype": dtype(),
             "layers": [{"module": "keras.layers", "class_name": "InputLayer", "config": {
                            "batch_shape": [None, 64], "dtype": "float32", "sparse": False, "name": "input_layer"},
                         "registered_name": None},
                        dense("dense", 32, "relu", 64), dense("dense_1", 16, "relu", 32), dense("dense_2", 10, "softmax", 16)],
             "build_input_shape": [None, 64]},
         "registered_name": None, "build_config": {"input_shape": [None, 64]},
         "compile_config": configs["adam_plain"]}

for name, document in (("optimizers_keras3.json", model), ("optimizer_compile_configs.json", configs)):
    with open(f"{out}/{name}", "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
