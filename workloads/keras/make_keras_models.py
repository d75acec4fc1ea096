#!/usr/bin/env python3
"""Writes the bundled Keras 3 model files of the image classifiers:

  resnet50_keras3.json      ResNet-50 as keras.applications.ResNet50 builds it
                            (keras/src/applications/resnet.py: residual_block_v1,
                            stack_residual_blocks_v1; 224x224x3, 1000 classes);
  resnet20_cifar_keras3.json ResNet-20 for CIFAR-10 (He et al. 2016, section 4.2:
                            3 stages of 3 basic blocks, 16/32/64 filters, identity
                            shortcuts with 1x1 projections where the shape changes,
                            as the Keras example "CIFAR-10 ResNet" builds it);
  mobilenet_v2_keras3.json  MobileNetV2 as keras.applications.MobileNetV2 builds it
                            (keras/src/applications/mobilenet_v2.py, alpha 1.0:
                            inverted residual blocks of 1x1 expansion, 3x3
                            DepthwiseConv2D and 1x1 projection, ReLU(6);
                            224x224x3, 1000 classes).

Each is what `model.to_json()` writes in Keras 3 (module, class_name, config,
registered_name, build_config, name, inbound_nodes with __keras_tensor__
args), built here layer call by layer call after Keras's own code so that no
Keras install is needed. Run from the repository root:

    python3 workloads/keras/make_keras_models.py
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def initializer(name):
    return {"module": "keras.initializers", "class_name": name, "config": {"seed": None} if name.startswith("Glorot") else {},
            "registered_name": None}


def policy(dtype):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype}, "registered_name": None}


class Model:
    """Records layer calls as Keras 3's functional model serializes them."""

    def __init__(self, name, input_shape, dtype="float32", input_dtype="float32"):
        self.name, self.dtype, self.layers, self.shapes = name, dtype, [], {}
        self.layers.append({"module": "keras.layers", "class_name": "InputLayer",
                            "config": {"batch_shape": [None, *input_shape], "dtype": input_dtype, "sparse": False,
                                       "name": "input_layer"},
                            "registered_name": None, "name": "input_layer", "inbound_nodes": []})
        self.shapes["input_layer"] = [None, *input_shape]
        self.counts = {}

    def call(self, cls, config, inputs, name=None, shape=None, positional=False, kwargs=None, module="keras.layers",
             registered_name=None):
        """positional: the inputs as separate arguments (mha(query, value)),
        else one argument, a list when there are several (Add()([a, b]))."""
        if name is None:
            # Keras's to_snake_case: Conv2D -> conv2d, BatchNormalization -> batch_normalization.
            base = re.sub(r"([a-z])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", cls)).lower()
            n = self.counts.get(base, 0)
            self.counts[base] = n + 1
            name = base if n == 0 else f"{base}_{n}"
        tensors = [{"class_name": "__keras_tensor__",
                    "config": {"shape": self.shapes[i], "dtype": self.dtype, "keras_history": [i, 0, 0]}}
                   for i in inputs]
        args = [tensors] if len(inputs) > 1 and not positional else tensors
        in_shapes = [self.shapes[i] for i in inputs]
        self.layers.append({"module": module, "class_name": cls,
                            "config": {"name": name, "trainable": True, "dtype": policy(self.dtype), **config},
                            "registered_name": registered_name,
                            "build_config": {"input_shape": in_shapes if len(inputs) > 1 else in_shapes[0]},
                            "name": name, "inbound_nodes": [{"args": args, "kwargs": kwargs or {}}]})
        self.shapes[name] = shape
        return name

    # Layers, with Keras 3's defaults written out as to_json() writes them.
    def conv(self, x, filters, kernel, strides=1, padding="valid", name=None, use_bias=True):
        h, w, _ = self.shapes[x][1:]
        out = lambda n: (n + strides - 1) // strides if padding == "same" else (n - kernel) // strides + 1
        return self.call("Conv2D", {
            "filters": filters, "kernel_size": [kernel, kernel], "strides": [strides, strides], "padding": padding,
            "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "linear",
            "use_bias": use_bias, "kernel_initializer": initializer("GlorotUniform"),
            "bias_initializer": initializer("Zeros"), "kernel_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None},
            [x], name, [None, out(h), out(w), filters])

    def bn(self, x, name=None, epsilon=1.001e-5, momentum=0.99):
        return self.call("BatchNormalization", {
            "axis": -1, "momentum": momentum, "epsilon": epsilon, "center": True, "scale": True,
            "beta_initializer": initializer("Zeros"), "gamma_initializer": initializer("Ones"),
            "moving_mean_initializer": initializer("Zeros"), "moving_variance_initializer": initializer("Ones"),
            "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None,
            "synchronized": False}, [x], name, self.shapes[x])

    def relu(self, x, name=None):
        return self.call("Activation", {"activation": "relu"}, [x], name, self.shapes[x])

    def relu6(self, x, name=None):  # keras.layers.ReLU(6.0)
        return self.call("ReLU", {"max_value": 6.0, "negative_slope": 0.0, "threshold": 0.0}, [x], name, self.shapes[x])

    def depthwise(self, x, kernel, strides, padding, name=None, use_bias=False):
        b, h, w, c = self.shapes[x]
        out = lambda n: (n + strides - 1) // strides if padding == "same" else (n - kernel) // strides + 1
        return self.call("DepthwiseConv2D", {
            "kernel_size": [kernel, kernel], "strides": [strides, strides], "padding": padding,
            "data_format": "channels_last", "dilation_rate": [1, 1], "depth_multiplier": 1, "activation": "linear",
            "use_bias": use_bias, "depthwise_initializer": initializer("GlorotUniform"),
            "bias_initializer": initializer("Zeros"), "depthwise_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "depthwise_constraint": None, "bias_constraint": None},
            [x], name, [b, out(h), out(w), c])

    def pad_asymmetric(self, x, pads, name):
        (top, bottom), (left, right) = pads
        b, h, w, c = self.shapes[x]
        return self.call("ZeroPadding2D", {"padding": [[top, bottom], [left, right]], "data_format": "channels_last"}, [x],
                         name, [b, h + top + bottom, w + left + right, c])

    def add(self, a, b, name=None):
        return self.call("Add", {}, [a, b], name, self.shapes[a])

    def pad(self, x, p, name):
        b, h, w, c = self.shapes[x]
        return self.call("ZeroPadding2D", {"padding": [[p, p], [p, p]], "data_format": "channels_last"}, [x], name,
                         [b, h + 2 * p, w + 2 * p, c])

    def max_pool(self, x, size, strides, name):
        b, h, w, c = self.shapes[x]
        return self.call("MaxPooling2D", {"pool_size": [size, size], "padding": "valid", "strides": [strides, strides],
                                          "data_format": "channels_last"}, [x], name,
                         [b, (h - size) // strides + 1, (w - size) // strides + 1, c])

    def global_avg_pool(self, x, name=None):
        return self.call("GlobalAveragePooling2D", {"data_format": "channels_last", "keepdims": False}, [x], name,
                         [None, self.shapes[x][3]])

    def dense(self, x, units, activation, name=None):
        return self.call("Dense", {
            "units": units, "activation": activation, "use_bias": True,
            "kernel_initializer": initializer("GlorotUniform"), "bias_initializer": initializer("Zeros"),
            "kernel_regularizer": None, "bias_regularizer": None, "kernel_constraint": None, "bias_constraint": None},
            [x], name, [None, units])

    def embedding(self, x, input_dim, output_dim, name):
        return self.call("Embedding", {
            "input_dim": input_dim, "output_dim": output_dim,
            "embeddings_initializer": {"module": "keras.initializers", "class_name": "RandomUniform",
                                       "config": {"minval": -0.05, "maxval": 0.05, "seed": None}, "registered_name": None},
            "embeddings_regularizer": None, "activity_regularizer": None, "embeddings_constraint": None,
            "mask_zero": False}, [x], name, [*self.shapes[x], output_dim])

    def position_embedding(self, x, sequence_length, name):  # KerasHub's (keras_hub.layers.PositionEmbedding)
        return self.call("PositionEmbedding", {"sequence_length": sequence_length,
                                               "initializer": initializer("GlorotUniform")},
                         [x], name, self.shapes[x], module="keras_hub.src.layers.modeling.position_embedding",
                         registered_name="keras_hub>PositionEmbedding")

    def layer_norm(self, x, epsilon, name):
        return self.call("LayerNormalization", {
            "axis": [-1], "epsilon": epsilon, "center": True, "scale": True, "rms_scaling": False,
            "beta_initializer": initializer("Zeros"), "gamma_initializer": initializer("Ones"),
            "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None},
            [x], name, self.shapes[x])

    def attention(self, query, value, heads, key_dim, name, causal):  # mha(query, value, use_causal_mask=...)
        return self.call("MultiHeadAttention", {
            "num_heads": heads, "key_dim": key_dim, "value_dim": key_dim, "dropout": 0.0, "use_bias": True,
            "output_shape": None, "attention_axes": None, "kernel_initializer": initializer("GlorotUniform"),
            "bias_initializer": initializer("Zeros"), "kernel_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None, "seed": None},
            [query, value], name, self.shapes[query], positional=True, kwargs={"use_causal_mask": True} if causal else {})

    def dense_on_last_axis(self, x, units, activation, name):
        return self.call("Dense", {
            "units": units, "activation": activation, "use_bias": True,
            "kernel_initializer": initializer("GlorotUniform"), "bias_initializer": initializer("Zeros"),
            "kernel_regularizer": None, "bias_regularizer": None, "kernel_constraint": None, "bias_constraint": None},
            [x], name, [*self.shapes[x][:-1], units])

    @staticmethod
    def recurrent_config(cls, name, units, return_sequences, go_backwards=False, zero_output_for_mask=False):
        """Keras 3's LSTM or GRU get_config(), every default written out."""
        config = {"name": name, "trainable": True, "dtype": policy("float32"), "return_sequences": return_sequences,
                  "return_state": False, "go_backwards": go_backwards, "stateful": False, "unroll": False,
                  "zero_output_for_mask": zero_output_for_mask, "units": units, "activation": "tanh",
                  "recurrent_activation": "sigmoid", "use_bias": True,
                  "kernel_initializer": initializer("GlorotUniform"),
                  "recurrent_initializer": {"module": "keras.initializers", "class_name": "OrthogonalInitializer",
                                            "config": {"gain": 1.0, "seed": None}, "registered_name": None},
                  "bias_initializer": initializer("Zeros"), "kernel_regularizer": None, "recurrent_regularizer": None,
                  "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None,
                  "recurrent_constraint": None, "bias_constraint": None, "dropout": 0.0, "recurrent_dropout": 0.0,
                  "seed": None}
        if cls == "LSTM":
            config["unit_forget_bias"] = True
        else:
            config["reset_after"] = True
        return config

    def recurrent(self, x, cls, units, return_sequences, name):
        config = self.recurrent_config(cls, name, units, return_sequences)
        del config["name"], config["trainable"], config["dtype"]
        steps = self.shapes[x][1]
        return self.call(cls, config, [x], name, [None, steps, units] if return_sequences else [None, units])

    def bidirectional(self, x, cls, units, return_sequences, name):
        """Keras 3's Bidirectional: its layer and the backward copy Keras makes
        of it (go_backwards), named forward_<layer> and backward_<layer>."""
        inner = cls.lower()
        layers = {}
        for side, backwards in (("layer", False), ("backward_layer", True)):
            config = self.recurrent_config(cls, ("backward_" if backwards else "forward_") + inner, units,
                                           return_sequences, go_backwards=backwards,
                                           zero_output_for_mask=return_sequences)
            layers[side] = {"module": "keras.layers", "class_name": cls, "config": config, "registered_name": None}
        steps = self.shapes[x][1]
        return self.call("Bidirectional", {"merge_mode": "concat", **layers}, [x], name,
                         [None, steps, 2 * units] if return_sequences else [None, 2 * units])

    def write(self, output, file, compile_config=None):
        doc = {"module": "keras.src.models.functional", "class_name": "Functional",
               "config": {"name": self.name, "trainable": True, "layers": self.layers,
                          "input_layers": [["input_layer", 0, 0]], "output_layers": [[output, 0, 0]]},
               "registered_name": "Functional", "build_config": {"input_shape": None}}
        if compile_config:
            doc["compile_config"] = compile_config
        with open(os.path.join(HERE, file), "w") as f:
            json.dump(doc, f)
            f.write("\n")


def resnet50():
    """keras.applications.ResNet50(weights=None): include_top, 224x224x3, 1000 classes."""
    m = Model("resnet50", [224, 224, 3])

    def block(x, filters, stride=1, conv_shortcut=True, name=None):  # residual_block_v1
        if conv_shortcut:
            shortcut = m.conv(x, 4 * filters, 1, stride, name=name + "_0_conv")
            shortcut = m.bn(shortcut, name + "_0_bn")
        else:
            shortcut = x
        x = m.conv(x, filters, 1, stride, name=name + "_1_conv")
        x = m.relu(m.bn(x, name + "_1_bn"), name + "_1_relu")
        x = m.conv(x, filters, 3, padding="same", name=name + "_2_conv")
        x = m.relu(m.bn(x, name + "_2_bn"), name + "_2_relu")
        x = m.conv(x, 4 * filters, 1, name=name + "_3_conv")
        x = m.bn(x, name + "_3_bn")
        x = m.add(shortcut, x, name + "_add")
        return m.relu(x, name + "_out")

    def stack(x, filters, blocks, stride1=2, name=None):  # stack_residual_blocks_v1
        x = block(x, filters, stride=stride1, name=name + "_block1")
        for i in range(2, blocks + 1):
            x = block(x, filters, conv_shortcut=False, name=name + "_block" + str(i))
        return x

    x = m.pad("input_layer", 3, "conv1_pad")
    x = m.conv(x, 64, 7, 2, name="conv1_conv")
    x = m.relu(m.bn(x, "conv1_bn"), "conv1_relu")
    x = m.pad(x, 1, "pool1_pad")
    x = m.max_pool(x, 3, 2, "pool1_pool")
    x = stack(x, 64, 3, stride1=1, name="conv2")
    x = stack(x, 128, 4, name="conv3")
    x = stack(x, 256, 6, name="conv4")
    x = stack(x, 512, 3, name="conv5")
    x = m.global_avg_pool(x, "avg_pool")
    x = m.dense(x, 1000, "softmax", "predictions")
    m.write(x, "resnet50_keras3.json")


def resnet20_cifar():
    """ResNet-20 (n = 3) for 32x32x3 CIFAR-10 images, 10 classes."""
    m = Model("resnet20_cifar", [32, 32, 3])

    def conv_bn(x, filters, strides=1, activation=True):
        x = m.bn(m.conv(x, filters, 3, strides, padding="same"), epsilon=1e-3)
        return m.relu(x) if activation else x

    x = conv_bn("input_layer", 16)
    for stage, filters in enumerate([16, 32, 64]):
        for b in range(3):
            strides = 2 if stage > 0 and b == 0 else 1
            y = conv_bn(x, filters, strides)
            y = conv_bn(y, filters, activation=False)
            if strides > 1:  # projection shortcut: a 1x1 convolution
                x = m.conv(x, filters, 1, strides, padding="same")
            x = m.relu(m.add(x, y))
    x = m.global_avg_pool(x)
    x = m.dense(x, 10, "softmax")
    m.write(x, "resnet20_cifar_keras3.json")


def mobilenet_v2():
    """keras.applications.MobileNetV2(weights=None): alpha 1.0, include_top, 224x224x3, 1000 classes
    (keras/src/applications/mobilenet_v2.py: _inverted_res_block, imagenet_utils.correct_pad)."""
    m = Model("mobilenetv2_1.00_224", [224, 224, 3])
    bn = lambda x, name: m.bn(x, name, epsilon=1e-3, momentum=0.999)

    def block(x, expansion, stride, filters, block_id):
        in_channels = m.shapes[x][3]
        prefix = f"block_{block_id}_" if block_id else "expanded_conv_"
        inputs = x
        if block_id:
            x = m.conv(x, expansion * in_channels, 1, padding="same", name=prefix + "expand", use_bias=False)
            x = m.relu6(bn(x, prefix + "expand_BN"), prefix + "expand_relu")
        if stride == 2:  # correct_pad of an even-sized input and a 3x3 kernel
            x = m.pad_asymmetric(x, ((0, 1), (0, 1)), prefix + "pad")
        x = m.depthwise(x, 3, stride, "same" if stride == 1 else "valid", prefix + "depthwise")
        x = m.relu6(bn(x, prefix + "depthwise_BN"), prefix + "depthwise_relu")
        x = m.conv(x, filters, 1, padding="same", name=prefix + "project", use_bias=False)
        x = bn(x, prefix + "project_BN")
        if in_channels == filters and stride == 1:
            return m.add(inputs, x, prefix + "add")
        return x

    x = m.conv("input_layer", 32, 3, 2, padding="same", name="Conv1", use_bias=False)
    x = m.relu6(bn(x, "bn_Conv1"), "Conv1_relu")
    x = block(x, 1, 1, 16, 0)
    for block_id, (filters, stride, expansion) in enumerate(
            [(24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6),
             (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6)], start=1):
        x = block(x, expansion, stride, filters, block_id)
    x = m.conv(x, 1280, 1, name="Conv_1", use_bias=False)
    x = m.relu6(bn(x, "Conv_1_bn"), "out_relu")
    x = m.global_avg_pool(x, "global_average_pooling2d")
    x = m.dense(x, 1000, "softmax", "predictions")
    m.write(x, "mobilenet_v2_keras3.json")


def gpt_decoder_block():
    """A GPT-style decoder block over 128 tokens of a vocabulary of 8,192 (as
    workloads/gpt_decoder_block.json, layer for layer and name for name):
    token and position embeddings added and normalized, causal self-attention
    with 4 heads of 64, a residual and LayerNormalization, a gelu
    feed-forward of 1,024, a residual and LayerNormalization, the next
    token's softmax over the vocabulary."""
    m = Model("gpt_decoder_block", [128], input_dtype="int32")  # token ids
    tokens = m.embedding("input_layer", 8192, 256, "token_embedding")
    positions = m.position_embedding(tokens, 128, "position_embedding")
    x = m.layer_norm(m.add(tokens, positions, "embeddings"), 1e-12, "embeddings_norm")
    attention = m.attention(x, x, 4, 64, "layer0_attention", causal=True)
    x = m.layer_norm(m.add(x, attention, "layer0_attention_residual"), 1e-12, "layer0_attention_norm")
    y = m.dense_on_last_axis(x, 1024, "gelu", "layer0_intermediate")
    y = m.dense_on_last_axis(y, 256, "linear", "layer0_output")
    x = m.layer_norm(m.add(x, y, "layer0_output_residual"), 1e-12, "layer0_output_norm")
    x = m.dense_on_last_axis(x, 8192, "softmax", "next_token")
    m.write(x, "gpt_decoder_block_keras3.json")


def bert(name, layers, hidden, heads, intermediate):
    """A BERT encoder at sequence length 128 over the 30,522-token vocabulary:
    token and position embeddings added and normalized, `layers` encoder
    layers (self-attention with `heads` heads of 64, a residual and
    LayerNormalization, a gelu feed-forward of `intermediate`, a residual and
    LayerNormalization; epsilon 1e-12 as BERT's), a masked-LM head (a gelu
    Dense of `hidden`, LayerNormalization, the vocabulary's softmax)."""
    m = Model(name, [128], input_dtype="int32")  # token ids
    tokens = m.embedding("input_layer", 30522, hidden, "token_embedding")
    positions = m.position_embedding(tokens, 128, "position_embedding")
    x = m.layer_norm(m.add(tokens, positions, "embeddings"), 1e-12, "embeddings_norm")
    for i in range(layers):
        attention = m.attention(x, x, heads, 64, f"layer{i}_attention", causal=False)
        x = m.layer_norm(m.add(x, attention, f"layer{i}_attention_residual"), 1e-12, f"layer{i}_attention_norm")
        y = m.dense_on_last_axis(x, intermediate, "gelu", f"layer{i}_intermediate")
        y = m.dense_on_last_axis(y, hidden, "linear", f"layer{i}_output")
        x = m.layer_norm(m.add(x, y, f"layer{i}_output_residual"), 1e-12, f"layer{i}_output_norm")
    x = m.dense_on_last_axis(x, hidden, "gelu", "mlm_transform")
    x = m.layer_norm(x, 1e-12, "mlm_norm")
    x = m.dense_on_last_axis(x, 30522, "softmax", "mlm_logits")
    m.write(x, name + "_keras3.json")


def bert_base():
    """BERT-base (as workloads/bert_base_sl128.json, layer for layer): 12
    layers of hidden 768, 12 heads, feed-forward 3,072."""
    bert("bert_base_sl128", 12, 768, 12, 3072)


def bert_large():
    """BERT-Large (as workloads/bert_large_sl128.json, layer for layer;
    bert-large-uncased's sizes): 24 layers of hidden 1,024, 16 heads,
    feed-forward 4,096."""
    bert("bert_large_sl128", 24, 1024, 16, 4096)


def text_lstm_classifier():
    """An LSTM text classifier over 64 tokens of a vocabulary of 20,000 (as
    workloads/text_lstm_classifier.json, layer for layer): Embedding(20000,
    64), a Bidirectional LSTM(32) over every step, a GRU(32), Dense(2,
    softmax)."""
    m = Model("text_lstm_classifier", [64], input_dtype="int32")  # token ids
    x = m.embedding("input_layer", 20000, 64, "tokens")
    x = m.bidirectional(x, "LSTM", 32, True, "bi_lstm")
    x = m.recurrent(x, "GRU", 32, False, "gru")
    x = m.dense(x, 2, "softmax", "dense")
    m.write(x, "text_lstm_classifier_keras3.json")


if __name__ == "__main__":
    resnet50()
    resnet20_cifar()
    mobilenet_v2()
    gpt_decoder_block()
    bert_base()
    bert_large()
    text_lstm_classifier()
