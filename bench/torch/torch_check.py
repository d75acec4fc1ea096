#!/usr/bin/env python3
"""Trains what ipusim-torch-dump wrote in PyTorch and compares the losses.

An implementation independent of ipusim's own CPU reference
(tests/scheduler/cpu_reference.cpp): PyTorch's convolutions (grouped,
dilated, depthwise as torch's groups, transposed as torch's conv_transpose
cropped as TF does), pooling, batch normalization, matrix products, its
activation functions (Keras's every activation and the ReLU, LeakyReLU,
ELU, PReLU and Softmax layers), nearest-neighbour interpolation
(UpSampling1D/2D), permute, cross-entropy and autograd, on the same
initial weights and batches, so that a misreading of Keras shared by ipusim
and its reference cannot pass unseen. Activations are channels last (NHWC)
as Keras's; convolutions permute to PyTorch's NCHW and back, with TF's
'same' padding written out (it pads more at the end). The optimizers
(KerasOptimizer): SGD with or without (Nesterov) momentum is
torch.optim.SGD, the same rule, at a constant rate without weight decay;
Keras's other rules (Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam), its
learning-rate schedules, clipnorm, global_clipnorm and decoupled weight
decay are written out where PyTorch's definitions differ; the learning rate
the device outfed each step is checked against the schedule.

    python3 bench/torch/torch_check.py DUMP.json [--tolerance 1e-4]

PyTorch trains the model twice, in float64 (the reference) and in float32
(the yardstick): a step passes when ipusim's loss is within the tolerance of
float64's, or no further from it than twice PyTorch's own float32 is (deep
nets with batch normalization amplify rounding from step to step, so float32
cannot agree to 1e-4 there). Prints each step and, tensor by tensor, the
weights after the last step; exits 1 when a step is over, 2 on a model it
cannot build.
"""
import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F


def tf_same(size, k, s):
    out = (size + s - 1) // s
    need = max((out - 1) * s + k - size, 0)
    return need // 2, need - need // 2


def relu_family(x, p):
    """Keras's relu with its constants (the ReLU layer's max_value,
    negative_slope and threshold; relu6; leaky_relu): PyTorch's own function
    where it has one, else x > threshold ? min(x, max_value) : slope (x - threshold)."""
    slope, top, t = p["negative_slope"], p["max_value"], p["threshold"]
    if t == 0 and top is None:
        return F.leaky_relu(x, slope) if slope else F.relu(x)
    if t == 0 and slope == 0 and top == 6:
        return F.relu6(x)
    above = x if top is None else torch.clamp(x, max=top)
    return torch.where(x > t, above, slope * (x - t))


def hard_sigmoid(x, slope):
    """Keras 3's relu6(x + 3) / 6 (PyTorch's hardsigmoid); Keras 2's clip(0.2 x + 0.5, 0, 1)."""
    return F.hardsigmoid(x) if abs(slope - 1 / 6) < 1e-12 else torch.clamp(slope * x + 0.5, 0.0, 1.0)


def activation(name, x, p):
    """Keras's activations (keras/src/activations/activations.py) as PyTorch computes them."""
    if name in ("relu", "relu6", "leaky_relu"):
        return relu_family(x, p)
    return {"linear": lambda v: v, "softmax": lambda v: torch.softmax(v, dim=-1), "sigmoid": torch.sigmoid,
            "tanh": torch.tanh, "gelu": lambda v: F.gelu(v, approximate="none"),
            "gelu_approximate": lambda v: F.gelu(v, approximate="tanh"), "elu": lambda v: F.elu(v, p["alpha"]),
            "selu": F.selu, "silu": F.silu, "softplus": F.softplus, "softsign": F.softsign,
            "hard_sigmoid": lambda v: hard_sigmoid(v, p["hard_sigmoid_slope"]), "hard_silu": F.hardswish,
            "exponential": torch.exp, "mish": F.mish}[name](x)


def nchw(x):
    return x.permute(0, 3, 1, 2)


def nhwc(x):
    return x.permute(0, 2, 3, 1)


def conv_pads(size, k, s, d, padding):
    """The padding before and after of one dimension of a Keras convolution."""
    keff = (k - 1) * d + 1
    if padding == "valid":
        return 0, 0
    if padding == "causal":  # Conv1D: every output reads only earlier steps
        return keff - 1, 0
    return tf_same(size, keff, s)


def as_image(x, l):
    """A 1-D layer's steps x channels as one row of an image."""
    return x.unsqueeze(1) if len(l["input_shape"]) == 2 else x


def as_kernel(k):
    """A 1-D kernel [k, in, out] as a one-row 2-D kernel."""
    return k.unsqueeze(0) if k.dim() == 3 else k


def convolve(x, kernel, l, groups):
    """Keras's convolution of an NHWC image with an HWIO kernel (in = channels / groups)."""
    (kh, kw), (sh, sw), (dh, dw) = l["window"], l["strides"], l["dilation"]
    top, bottom = conv_pads(x.shape[1], kh, sh, dh, l["padding"])
    left, right = conv_pads(x.shape[2], kw, sw, dw, l["padding"])
    x = F.pad(x, (0, 0, left, right, top, bottom))
    # contiguous(): PyTorch 1.13's float64 slow_conv2d refuses the permuted
    # kernel's gradient when a size-1 dimension (one filter) leaves the view
    # "contiguous" by its strides but not by its layout.
    oihw = kernel.permute(3, 2, 0, 1).contiguous()
    return nhwc(F.conv2d(nchw(x), oihw, None, stride=(sh, sw), dilation=(dh, dw), groups=groups))


def transposed(x, kernel, l, out_h, out_w):
    """TF's conv_transpose: the full transposed convolution (torch's, no
    padding), cropped by the padding of the convolution from the output back
    to the input (TF's arithmetic over the output), zeros past its end."""
    (kh, kw), (sh, sw), (dh, dw) = l["window"], l["strides"], l["dilation"]
    full = nhwc(F.conv_transpose2d(nchw(x), kernel.permute(3, 2, 0, 1), None, stride=(sh, sw), dilation=(dh, dw)))
    def before(out, k, s, d):
        if l["padding"] != "same":
            return 0
        return tf_same(out, (k - 1) * d + 1, s)[0]
    top, left = before(out_h, kh, sh, dh), before(out_w, kw, sw, dw)
    full = F.pad(full, (0, 0, 0, max(0, left + out_w - full.shape[2]), 0, max(0, top + out_h - full.shape[1])))
    return full[:, top:top + out_h, left:left + out_w, :]


def window_pad(x, layer, value):
    """TF's 'same' padding of an NHWC input for a window layer, or none."""
    if layer["padding"] != "same":
        return x
    (kh, kw), (sh, sw) = layer["window"], layer["strides"]
    top, bottom = tf_same(x.shape[1], kh, sh)
    left, right = tf_same(x.shape[2], kw, sw)
    return F.pad(x, (0, 0, left, right, top, bottom), value=value)


def einsum_dense(l, x, p):
    """Keras's EinsumDense: torch.einsum over the equation as Keras writes it,
    the kernel and the bias in the shapes Keras's _analyze_split_string gives
    them (sizes by letter: the input's axes, else the output's), read from
    the stored weights row-major."""
    equation = l["equation"]
    spec_in, rest = equation.split(",")
    spec_kernel, spec_out = rest.split("->")
    full_in, full_out = [x.shape[0]] + l["input_shape"], [x.shape[0]] + l["output_shape"]
    size = {}
    for spec, shape in ((spec_in, full_in), (spec_out, full_out)):
        letters = spec.replace("...", "")
        # an ellipsis on the left: the letters name the last axes
        axes = shape[len(shape) - len(letters):] if spec.startswith("...") else shape
        for letter, n in zip(letters, axes):
            size.setdefault(letter, n)
    kernel = p[l["name"] + "/kernel"].reshape([size[c] for c in spec_kernel])
    y = torch.einsum(equation, x, kernel)
    if l["bias_axes"] is not None:
        letters = spec_out.replace("...", "")
        first = min(letters.index(c) for c in l["bias_axes"])
        shape = [size[c] if c in l["bias_axes"] else 1 for c in letters[first:]]
        y = y + p[l["name"] + "/bias"].reshape(shape)
    return y


class Model:
    def __init__(self, dump, dtype):
        self.layers = dump["layers"]
        self.batch = dump["batch_size"]
        self.input_shape = dump["input_shape"]
        self.params = {}
        # Keras's trainable: false: a frozen layer's weights take no gradient (its batch
        # normalization whitens with its moving statistics in training too).
        self.frozen = {l["name"] for l in self.layers if not l.get("trainable", True)}
        for w in dump["weights"]:
            owner = w["name"].rsplit("/", 1)[0]
            self.params[w["name"]] = torch.tensor(w["values"], dtype=dtype).reshape(w["shape"]).requires_grad_(
                owner not in self.frozen)
        self.last = len(self.layers) - 1
        # Keras's training=False (validation_check.py): dropout passes its input and batch
        # normalization whitens with `moving` ({layer: {"moving_mean", "moving_variance"}}).
        self.training, self.moving = True, {}
        self.fused = dump["loss"]["type"] in ("sparse_categorical_crossentropy", "categorical_crossentropy",
                                              "binary_crossentropy") and not dump["loss"]["from_logits"]

    def forward(self, images):
        outs, masks = [], []
        x0 = images.reshape([self.batch] + self.input_shape)
        self.activity = 0.0
        for i, l in enumerate(self.layers):
            ins = [x0 if j == -1 else outs[j] for j in l["inputs"]]
            ins[0] = ins[0].reshape([self.batch] + l["input_shape"])  # a flatten or reshape passes elements on
            # Keras's masks: an Embedding's mask_zero (ids != 0), carried by the
            # layers that support masking, taken by the recurrent layers.
            self.input_masks = [None if j == -1 else masks[j] for j in l["inputs"]]
            self.mask = next((m for m in self.input_masks if m is not None), None)
            outs.append(self.layer(i, l, ins))
            carries = l["kind"] in CARRY_MASK or (l["kind"] in RECURRENT and l["return_sequences"])
            if l["kind"] == "embedding" and l["mask_zero"]:
                masks.append(ins[0] != 0)
            elif l["kind"] == "masking":  # Keras's Masking: its own mask, whatever its input carried
                masks.append((ins[0] != l["mask_value"]).any(dim=-1))
            elif l["kind"] == "multi_head_attention":  # Keras: the output keeps the query's mask
                masks.append(self.input_masks[0])
            else:
                masks.append(self.mask if carries else None)
            if "activity" in l.get("regularizers", {}):  # Keras: the output's penalty over the batch size
                self.activity = self.activity + penalty(outs[-1], l["regularizers"]["activity"]) / self.batch
        self.output_mask = masks[-1]  # the loss's mask (Keras's apply_mask), or None
        return outs[-1]

    def regularization(self):
        """Keras's L1/L2 penalties (regularizers.py: l1 sum|x| + l2 sum x^2)
        of the weights, each once (a shared layer's belong to its owner),
        plus the forward pass's activity penalties."""
        owners = {l["name"]: l.get("regularizers", {}) for l in self.layers}
        total = self.activity
        for name, w in self.params.items():
            owner, weight = name.rsplit("/", 1)
            if weight in owners.get(owner, {}) and owner not in self.frozen:  # (Keras 3: trainable weights' only)
                total = total + penalty(w, owners[owner][weight])
        return total

    def recurrent(self, l, x):
        return recurrent_of(self, l, x, self.mask)

    def act(self, i, l, x):
        a = l["activation"]
        if i == self.last and self.fused and a in ("softmax", "sigmoid"):
            return x  # fused with the loss, as ipusim and TF's Keras do
        return activation(a, x, l["activation_params"])

    def layer(self, i, l, ins):
        k, x, p = l["kind"], ins[0], self.params
        if k in ("flatten", "reshape"):
            return x.reshape([self.batch] + l["output_shape"])
        if k == "embedding":  # the table as ipusim stores it, [output_dim / grain, input_dim, grain], made Keras's
            stored = p[l["name"] + "/embeddings"]
            table = stored.permute(1, 0, 2).reshape(l["input_dim"], l["units"])
            return F.embedding(x.long(), table)
        if k in ("simple_rnn", "lstm", "gru"):
            return self.recurrent(l, x)
        if k == "multi_head_attention":
            return attention_of(self, l, ins)
        if k == "position_embedding":  # KerasHub's: the table's rows broadcast over the batch
            return p[l["name"] + "/embeddings"].expand([self.batch] + l["output_shape"])
        if k == "bidirectional":  # Keras flips the backward layer's sequence back into time order
            forward, backward = (self.recurrent(w, x) for w in l["wrapped"])
            if l["wrapped"][0]["return_sequences"]:
                backward = backward.flip(1)
            mode = l["merge_mode"]
            if mode == "concat":
                return torch.cat([forward, backward], dim=-1)
            return {"sum": forward + backward, "mul": forward * backward, "ave": (forward + backward) / 2}[mode]
        if k == "einsum_dense":
            return self.act(i, l, einsum_dense(l, x, p))
        if k == "dense":
            y = x @ p[l["name"] + "/kernel"]
            if l["use_bias"]:
                y = y + p[l["name"] + "/bias"]
            return self.act(i, l, y)
        if k in ("conv2d", "conv1d", "depthwise_conv2d", "depthwise_conv1d", "separable_conv2d", "separable_conv1d",
                 "conv2d_transpose", "conv1d_transpose"):
            return self.act(i, l, self.convolution(l, x).reshape([self.batch] + l["output_shape"]))
        if k == "max_pooling2d":
            return nhwc(F.max_pool2d(nchw(window_pad(x, l, -math.inf)), tuple(l["window"]), tuple(l["strides"])))
        if k == "average_pooling2d":
            # Padded positions not counted (TF): the sum over the window of the input and of ones.
            ones = torch.ones_like(x)
            s = F.avg_pool2d(nchw(window_pad(x, l, 0.0)), tuple(l["window"]), tuple(l["strides"]))
            n = F.avg_pool2d(nchw(window_pad(ones, l, 0.0)), tuple(l["window"]), tuple(l["strides"]))
            return nhwc(s / n)
        if k in ("global_average_pooling2d", "global_max_pooling2d"):
            y = x.mean(dim=(1, 2), keepdim=True) if k == "global_average_pooling2d" else x.amax(dim=(1, 2), keepdim=True)
            return y if l["keepdims"] else y.reshape(self.batch, -1)
        if k == "global_average_pooling1d" and self.mask is not None:  # Keras: sum(x mask) / sum(mask)
            m = self.mask.to(x.dtype).unsqueeze(2)
            y = (x * m).sum(dim=1, keepdim=True) / m.sum(dim=1, keepdim=True)
            return y if l["keepdims"] else y.reshape(self.batch, -1)
        if k in ("global_average_pooling1d", "global_max_pooling1d"):  # over the steps
            y = x.mean(dim=1, keepdim=True) if k == "global_average_pooling1d" else x.amax(dim=1, keepdim=True)
            return y if l["keepdims"] else y.reshape(self.batch, -1)
        if k == "batch_normalization":
            c = x.shape[-1]
            gamma = p.get(l["name"] + "/gamma") if l["scale"] else None
            beta = p.get(l["name"] + "/beta") if l["center"] else None
            if not self.training or l["name"] in self.frozen:
                # (a frozen layer's in training: Keras's initial zeros and ones, which it never updates)
                stats = self.moving.get(l["name"], {"moving_mean": [0.0] * c, "moving_variance": [1.0] * c})
                mean, variance = (torch.tensor(stats[k], dtype=x.dtype) for k in ("moving_mean", "moving_variance"))
                return F.batch_norm(x.reshape(-1, c), mean, variance, gamma, beta, training=False,
                                    eps=l["epsilon"]).reshape(x.shape)
            y = F.batch_norm(x.reshape(-1, c), None, None, gamma, beta, training=True, eps=l["epsilon"])
            return y.reshape(x.shape)
        if k == "layer_normalization":  # over the trailing axes (resolved 1..rank), gamma and beta per position
            shape = [l["input_shape"][a - 1] for a in l["axes"]]
            gamma = p.get(l["name"] + "/gamma") if l["scale"] else None
            beta = p.get(l["name"] + "/beta") if l["center"] else None
            return F.layer_norm(x, shape, None if gamma is None else gamma.reshape(shape),
                                None if beta is None else beta.reshape(shape), eps=l["epsilon"])
        if k == "group_normalization":  # channels last: PyTorch's group norm over NC... layouts
            gamma = p.get(l["name"] + "/gamma") if l["scale"] else None
            beta = p.get(l["name"] + "/beta") if l["center"] else None
            channels_first = x.movedim(-1, 1)
            y = F.group_norm(channels_first, l["channel_groups"], gamma, beta, eps=l["epsilon"])
            return y.movedim(1, -1)
        if k in ("activation", "relu", "leaky_relu", "elu"):  # the layers' constants are the activation's
            return self.act(i, l, x)
        if k == "softmax":  # Keras's axis, counted with the batch as 0
            return self.act(i, l, x) if l["axis"] == len(l["input_shape"]) else torch.softmax(x, dim=l["axis"])
        if k == "prelu":  # Keras: relu(x) - alpha relu(-x), alpha broadcast over its shared axes
            return F.relu(x) - p[l["name"] + "/alpha"] * F.relu(-x)
        if k == "up_sampling2d":  # nearest-neighbour upsampling by whole factors: Keras's repeat
            return nhwc(F.interpolate(nchw(x), scale_factor=tuple(l["window"]), mode="nearest"))
        if k == "up_sampling1d":
            return F.interpolate(x.transpose(1, 2), scale_factor=l["window"][1], mode="nearest").transpose(1, 2)
        if k == "permute":  # dims counted from 1 after the batch
            return x.permute([0] + l["axes"])
        if k == "masking":  # Keras: inputs x any(inputs != mask_value, axis=-1)
            return x * (x != l["mask_value"]).any(dim=-1, keepdim=True).to(x.dtype)
        if k == "dropout":
            if l["rate"] == 0 or not self.training:
                return x
            raise NotImplementedError("dropout masks are ipusim's own draw: not reproduced here")
        if k in ("add", "multiply"):
            y = ins[0]
            for v in ins[1:]:
                y = y + v if k == "add" else y * v
            return y
        if k == "subtract":
            return ins[0] - ins[1]
        if k == "concatenate":
            return torch.cat(ins, dim=l["axis"])
        if k in ("zero_padding2d", "zero_padding1d"):
            t, b, left, r = l["pads"]
            return F.pad(x, (0, 0, left, r, t, b)) if k == "zero_padding2d" else F.pad(x, (0, 0, left, r))
        if k in ("cropping2d", "cropping1d"):
            t, b, left, r = l["pads"]
            if k == "cropping2d":
                return x[:, t:x.shape[1] - b, left:x.shape[2] - r, :]
            return x[:, left:x.shape[1] - r, :]
        raise NotImplementedError(f"layer kind {k}")


def attention_of(model, l, ins):
    """Keras 3's MultiHeadAttention, its products written out (einsum per
    head): projections, the query scaled by 1/sqrt(key_dim), Keras's mask
    adder (-1e9 where the causal mask or the inputs' masks hide a key), softmax over the
    keys, the values weighted, the output projection."""
    p, name, batch = model.params, l["name"], model.batch
    heads, key_dim, value_dim = l["heads"], l["key_dim"], l["value_dim"]
    shapes = l["input_shapes"]
    query = ins[0]
    value = ins[1].reshape([batch] + shapes[1])
    key = ins[2].reshape([batch] + shapes[2]) if len(ins) > 2 else value

    def project(x, part, dim):
        y = x @ p[f"{name}/{part}_kernel"]
        if l["use_bias"]:
            y = y + p[f"{name}/{part}_bias"]
        return y.reshape(batch, x.shape[1], heads, dim)

    q = project(query, "query", key_dim) * (1.0 / math.sqrt(key_dim))
    k, v = project(key, "key", key_dim), project(value, "value", value_dim)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
    # Keras's attention mask (_compute_attention_mask): the query's mask over
    # the rows, the value's and key's over the keys, the causal mask, ANDed;
    # Softmax adds -1e9 (-3e4 in float16) where it hides a key.
    kept = torch.ones(batch, scores.shape[-2], scores.shape[-1], dtype=torch.bool)
    if l["causal_mask"]:
        kept = kept & torch.ones(scores.shape[-2], scores.shape[-1], dtype=torch.bool).tril()
    input_masks = model.input_masks + [None] * (3 - len(model.input_masks))
    if input_masks[0] is not None:
        kept = kept & input_masks[0][:, :, None]
    for m in input_masks[1:len(ins)]:
        if m is not None:
            kept = kept & m[:, None, :]
    if not bool(kept.all()):
        hidden = -3e4 if scores.dtype == torch.float16 else -1e9
        scores = scores + (~kept)[:, None].to(scores.dtype) * hidden
    if l["rate"]:
        raise NotImplementedError("attention dropout masks are ipusim's own draw: not reproduced here")
    probs = torch.softmax(scores, dim=-1)
    context = torch.einsum("bhqk,bkhd->bqhd", probs, v).reshape(batch, query.shape[1], heads * value_dim)
    y = context @ p[f"{name}/output_kernel"]
    if l["use_bias"]:
        y = y + p[f"{name}/output_bias"]
    return y


# The layers that carry Keras's mask on (supports_masking), and the recurrent ones.
CARRY_MASK = ("dense", "dropout", "activation", "layer_normalization", "add", "subtract", "multiply", "average",
              "maximum", "minimum")
RECURRENT = ("simple_rnn", "lstm", "gru", "bidirectional")


def recurrent_of(model, l, x, mask=None):
    """Keras's SimpleRNN, LSTM and GRU cells (keras/src/layers/rnn/), step by step
    from zero states; PyTorch's autograd gives backpropagation through time.
    Under a mask ([batch, steps], True where kept), a masked step keeps the
    states it read (Keras's rnn: where(mask, new, previous)) and outputs them,
    or zeros with zero_output_for_mask."""
    p, units = model.params, l["units"]
    kernel, recurrent = p[l["name"] + "/kernel"], p[l["name"] + "/recurrent_kernel"]
    bias = p.get(l["name"] + "/bias") if l["use_bias"] else None
    act = lambda v: activation(l["activation"], v, l["activation_params"])
    gate = lambda v: activation(l["recurrent_activation"], v, l["recurrent_activation_params"])
    h = torch.zeros(x.shape[0], units, dtype=x.dtype)
    c = torch.zeros_like(h)
    order = range(x.shape[1] - 1, -1, -1) if l["go_backwards"] else range(x.shape[1])
    outs = []
    for t in order:
        if l["kind"] == "gru":  # Keras's GRUCell, reset_after both ways
            two = l["reset_after"]
            mx = x[:, t] @ kernel + (0 if bias is None else (bias[0] if two else bias))
            if two:
                mi = h @ recurrent + (0 if bias is None else bias[1])
            else:
                mi = h @ recurrent[:, :2 * units]
            z = gate(mx[:, :units] + mi[:, :units])
            r = gate(mx[:, units:2 * units] + mi[:, units:2 * units])
            rh = r * mi[:, 2 * units:] if two else (r * h) @ recurrent[:, 2 * units:]
            h_new = z * h + (1 - z) * act(mx[:, 2 * units:] + rh)
            h, _, out = masked_step(l, mask, t, h, h_new, c, c)
            outs.append(out)
            continue
        z = x[:, t] @ kernel + h @ recurrent
        if bias is not None:
            z = z + bias
        if l["kind"] == "simple_rnn":
            h_new, c_new = act(z), c
        else:
            i, f, g, o = z.split(units, dim=1)
            c_new = gate(f) * c + gate(i) * act(g)
            h_new = gate(o) * act(c_new)
        h, c, out = masked_step(l, mask, t, h, h_new, c, c_new)
        outs.append(out)
    return torch.stack(outs, dim=1) if l["return_sequences"] else h


def masked_step(l, mask, t, h, h_new, c, c_new):
    """The step's states and output under Keras's mask (unmasked: the new ones)."""
    if mask is None:
        return h_new, c_new, h_new
    keep = mask[:, t].unsqueeze(1)
    h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
    zero = l["zero_output_for_mask"] and l["return_sequences"]
    return h, c, torch.where(keep, h_new, torch.zeros_like(h_new)) if zero else h


def convolution_of(model, l, x):
    """The convolution family (before the activation), as Keras defines each layer."""
    k, p, name = l["kind"], model.params, l["name"]
    image = as_image(x, l)
    channels = image.shape[-1]
    bias = p.get(name + "/bias") if l["use_bias"] else None
    if k in ("conv2d", "conv1d"):
        y = convolve(image, as_kernel(p[name + "/kernel"]), l, l["groups"])
    elif k in ("depthwise_conv2d", "depthwise_conv1d", "separable_conv2d", "separable_conv1d"):
        # The depthwise kernel [.., channels, multiplier] as a grouped kernel
        # [.., 1, channels x multiplier]: output channel c x multiplier + m reads channel c.
        dk = as_kernel(p[name + ("/kernel" if k.startswith("depthwise") else "/depthwise_kernel")])
        y = convolve(image, dk.reshape(dk.shape[0], dk.shape[1], 1, -1), l, channels)
        if k.startswith("separable"):
            pk = as_kernel(p[name + "/pointwise_kernel"])
            y = nhwc(F.conv2d(nchw(y), pk.permute(3, 2, 0, 1)))
    else:
        out = l["output_shape"]
        out_h, out_w = (1, out[0]) if len(out) == 2 else (out[0], out[1])
        y = transposed(image, as_kernel(p[name + "/kernel"]), l, out_h, out_w)
    return y + bias if bias is not None else y


Model.convolution = convolution_of


def regression_target(label, element):
    """model/numeric/regression_target.hpp: element `element` of class
    `label`'s fixed target pattern, a splitmix64 draw in [0, 1)."""
    m = (1 << 64) - 1
    z = ((label * 0xd1b54a32d192ed03) ^ (element * 0x9e3779b97f4a7c15) ^ 0x5851f42d4c957f2d) & m
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
    z ^= z >> 31
    return (z >> 40) / 16777216.0


def penalty(x, factors):
    return factors["l1"] * x.abs().sum() + factors["l2"] * (x * x).sum()


def loss_of(dump, logits, labels, mask=None):
    """Keras's loss (every one the mean over the batch and the classes but
    the categorical cross-entropies, summed over the classes): PyTorch's own
    where its definition is Keras's (label smoothing as Keras smooths:
    t (1 - s) + s / classes, binary + s / 2; Huber's delta the same). Under
    the output's mask, Keras's apply_mask: each row weighed m total / (valid
    + 1e-7), so the mean is sum(loss m) / valid."""
    spec, classes = dump["loss"], dump["classes"]
    kind, smoothing = spec["type"], spec.get("label_smoothing", 0.0)
    if mask is not None:
        if kind != "sparse_categorical_crossentropy":
            raise NotImplementedError(f"a masked {kind}")
        m = mask.reshape(-1).to(logits.dtype)
        weights = m * (m.numel() / (m.sum() + 1e-7))
        return (F.cross_entropy(logits, labels, reduction="none", label_smoothing=smoothing) * weights).mean()
    if kind in ("sparse_categorical_crossentropy", "categorical_crossentropy"):
        return F.cross_entropy(logits, labels, label_smoothing=smoothing)
    if spec.get("label_is_target"):  # a binary classifier: the label itself
        targets = labels.to(logits.dtype).reshape(logits.shape)
    elif spec.get("target_elements"):  # a regression output's own targets: its label's pattern
        n = spec["target_elements"]
        targets = torch.tensor([[regression_target(int(label), e) for e in range(n)] for label in labels],
                               dtype=logits.dtype).reshape(logits.shape)
    else:
        targets = F.one_hot(labels, classes).to(logits.dtype)
    if kind == "binary_crossentropy":
        return F.binary_cross_entropy_with_logits(logits, targets * (1 - smoothing) + smoothing / 2)
    if kind == "mean_absolute_error":
        return F.l1_loss(logits, targets)
    if kind == "huber":
        return F.huber_loss(logits, targets, delta=spec["delta"])
    if kind == "kl_divergence":
        # Keras's kl_divergence, written out: F.kl_div takes log-probabilities
        # and does not clip; Keras clips y_true and y_pred to [epsilon, 1]
        # (backend.epsilon() 1e-7), sums over the classes, means over the batch.
        t, p = targets.clamp(1e-7, 1), logits.clamp(1e-7, 1)
        return (t * torch.log(t / p)).sum(dim=-1).mean()
    return F.mse_loss(logits, targets)


def keras_learning_rate(spec, iteration):
    """The learning rate at optimizer.iterations `iteration` (0 on the first
    step): a number, or Keras 3's schedule (learning_rate_schedule.py
    __call__), written out from its formulas in double."""
    schedule = spec.get("schedule")
    if not schedule:
        return spec["learning_rate"]
    kind, c, step = schedule["class_name"], schedule["config"], float(iteration)
    if kind == "PiecewiseConstantDecay":  # values[i] while step <= boundaries[i]
        for bound, value in zip(c["boundaries"], c["values"]):
            if step <= bound:
                return value
        return c["values"][-1]
    init, decay_steps = c["initial_learning_rate"], c["decay_steps"]
    if kind in ("ExponentialDecay", "InverseTimeDecay"):
        p = step / decay_steps
        if c["staircase"]:
            p = math.floor(p)
        return init * c["decay_rate"] ** p if kind == "ExponentialDecay" else init / (1 + c["decay_rate"] * p)
    if kind == "PolynomialDecay":
        if c["cycle"]:  # the first multiple of decay_steps past the step
            decay_steps *= 1.0 if step == 0 else math.ceil(step / decay_steps)
        else:
            step = min(step, decay_steps)
        return (init - c["end_learning_rate"]) * (1 - step / decay_steps) ** c["power"] + c["end_learning_rate"]
    if kind != "CosineDecay":
        raise NotImplementedError(f"learning-rate schedule {kind}")

    def decayed(at, start):
        return start * ((1 - c["alpha"]) * 0.5 * (1 + math.cos(math.pi * at / decay_steps)) + c["alpha"])
    if c["warmup_target"] is None:
        return decayed(min(step, decay_steps), init)
    warmup = c["warmup_steps"]
    step = min(step, decay_steps + warmup)
    if step < warmup:
        return (c["warmup_target"] - init) * (step / warmup) + init
    return decayed(step - warmup, c["warmup_target"])


class KerasOptimizer:
    """Keras 3's optimizers (keras/src/optimizers/*.py) and what its base
    optimizer does first: the learning rate (a schedule at
    optimizer.iterations), the gradients clipped (clipnorm, clipvalue,
    global_clipnorm), decoupled weight decay (w -= w * weight_decay * lr),
    then the rule. torch.optim.SGD where it is Keras's rule (a constant rate
    and no weight decay: torch's weight_decay is an L2 term in the gradient,
    and its momentum buffer holds gradients, not steps, so a changing rate
    weighs past steps otherwise), torch.nn.utils.clip_grad_value_ (Keras's
    clipvalue). Written out where PyTorch's definition differs: Adam, AdamW,
    Adagrad and Adamax put epsilon elsewhere (Keras: outside sqrt(v) before
    the bias correction; inside the accumulator's square root; added to u,
    not to |g|), NAdam's momentum decay is 0.96^(0.004 t) where Keras's is
    0.96^t, clip_grad_norm_ divides by the norm + 1e-6."""

    def __init__(self, spec, params):
        self.spec, self.params, self.t, self.product = spec, params, 0, 1.0
        self.sgd = None
        if spec["type"] == "sgd" and not spec.get("schedule") and not spec.get("weight_decay"):
            self.sgd = torch.optim.SGD(params, lr=spec["learning_rate"], momentum=spec["momentum"],
                                       nesterov=spec["nesterov"])
        start = spec.get("initial_accumulator_value", 0.1) if spec["type"] == "adagrad" else 0.0
        self.slots = [[torch.full_like(p, start)] + [torch.zeros_like(p) for _ in range(2)] for p in params]

    def clip(self):
        s, grads = self.spec, [p.grad for p in self.params]
        if s.get("clipnorm"):  # _clip_by_norm: each gradient to norm at most clipnorm
            for g in grads:
                g.mul_(s["clipnorm"] / max(g.norm().item(), s["clipnorm"]))
        elif s.get("global_clipnorm"):  # clip_by_global_norm: clip * min(1 / norm, 1 / clip)
            c = s["global_clipnorm"]
            norm = math.sqrt(sum((g * g).sum().item() for g in grads))
            for g in grads:
                g.mul_(c * min(1 / norm, 1 / c))
        elif s.get("clipvalue"):
            torch.nn.utils.clip_grad_value_(self.params, s["clipvalue"])

    def step(self):
        s = self.spec
        lr = keras_learning_rate(s, self.t)
        self.t += 1
        t = self.t
        with torch.no_grad():
            self.clip()
        if self.sgd:
            self.sgd.step()
            self.sgd.zero_grad()
            return
        kind = "adam" if s["type"] == "adamw" else s["type"]
        if kind == "nadam":  # its product of momentum factors, once per step
            self.product *= s["beta_1"] * (1 - 0.5 * 0.96 ** t)
        with torch.no_grad():
            for p, (a, b, c) in zip(self.params, self.slots):
                g = p.grad
                if s.get("weight_decay"):
                    p -= p * s["weight_decay"] * lr
                if kind == "sgd":
                    if s["momentum"] > 0:
                        a.mul_(s["momentum"]).sub_(lr * g)
                        p += s["momentum"] * a - lr * g if s["nesterov"] else a
                    else:
                        p -= lr * g
                elif kind == "adam":
                    alpha = lr * math.sqrt(1 - s["beta_2"] ** t) / (1 - s["beta_1"] ** t)
                    a += (g - a) * (1 - s["beta_1"])
                    b += (g * g - b) * (1 - s["beta_2"])
                    p -= alpha * a / (b.sqrt() + s["epsilon"])
                elif kind == "rmsprop":
                    a.mul_(s["rho"]).add_((1 - s["rho"]) * g * g)
                    d = a + s["epsilon"]
                    if s["centered"]:
                        b.mul_(s["rho"]).add_((1 - s["rho"]) * g)
                        d = a - b * b + s["epsilon"]
                    inc = lr * g / d.sqrt()
                    if s["momentum"] > 0:
                        c.mul_(s["momentum"]).add_(inc)
                        p -= c
                    else:
                        p -= inc
                elif kind == "adagrad":
                    a += g * g
                    p -= lr * g / (a + s["epsilon"]).sqrt()
                elif kind == "adamax":
                    a += (g - a) * (1 - s["beta_1"])
                    torch.maximum(s["beta_2"] * b, g.abs(), out=b)
                    p -= lr * a / ((1 - s["beta_1"] ** t) * (b + s["epsilon"]))
                elif kind == "nadam":
                    u_t = s["beta_1"] * (1 - 0.5 * 0.96 ** t)
                    u_next = s["beta_1"] * (1 - 0.5 * 0.96 ** (t + 1))
                    a += (g - a) * (1 - s["beta_1"])
                    b += (g * g - b) * (1 - s["beta_2"])
                    m_hat = u_next * a / (1 - self.product * u_next) + (1 - u_t) * g / (1 - self.product)
                    v_hat = b / (1 - s["beta_2"] ** t)
                    p -= lr * m_hat / (v_hat.sqrt() + s["epsilon"])
                else:
                    raise NotImplementedError(f"optimizer {s['type']}")
                p.grad = None


def train(dump, dtype):
    """The losses per step and the weights after the last, trained in `dtype`."""
    model = Model(dump, dtype)
    opt = KerasOptimizer(dump["optimizer"], [p for p in model.params.values() if p.requires_grad])
    losses, regularizations = [], []
    for batch in dump["batches"]:
        images = torch.tensor(batch["images"], dtype=dtype)
        labels = torch.tensor(batch["labels"], dtype=torch.long)
        logits = model.forward(images).reshape(len(labels), -1)  # a row per label (per step: a sequence's)
        loss = loss_of(dump, logits, labels, model.output_mask)
        regularization = model.regularization()
        loss = loss + regularization  # Keras minimizes (and reports) the data loss plus the penalties
        loss.backward()
        opt.step()
        losses.append(loss.item())
        regularizations.append(float(regularization))
    return losses, model.params, regularizations


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    with open(args.dump) as f:
        dump = json.load(f)
    if dump.get("replicas", 1) != 1:
        print(f"{args.dump}: {dump['replicas']} replicas: the check trains one replica's batches", file=sys.stderr)
        return 2
    if dump.get("gradient_accumulation_count", 1) != 1:
        print(f"{args.dump}: gradient accumulation over {dump['gradient_accumulation_count']} mini-batches"
              f"{' (a pipeline)' if dump.get('pipeline_stages') else ''}: the check updates after every batch",
              file=sys.stderr)
        return 2
    if dump["dtype"] != "float32":
        print(f"{args.dump}: model.dtype {dump['dtype']}: the check compares float32 training", file=sys.stderr)
        return 2
    try:
        exact, params, exact_regularization = train(dump, torch.float64)
        single, single_params, _ = train(dump, torch.float32)
    except NotImplementedError as e:
        print(f"{args.dump}: not checked: {e}", file=sys.stderr)
        return 2
    # Per step: ipusim (float32) and PyTorch in float32 against PyTorch in
    # float64. A step passes when ipusim is within the tolerance, or no
    # further from float64 than twice PyTorch's own float32 (a deep net with
    # batch normalization amplifies rounding from step to step: there float32
    # itself cannot agree to 1e-4, and the yardstick is what float32 can do).
    worst, passed = 0.0, True
    for step, (device, ref, f32) in enumerate(zip(dump["losses"], exact, single)):
        rel, spread = abs(device - ref) / abs(ref), abs(f32 - ref) / abs(ref)
        ok = rel <= max(args.tolerance, 2 * spread)
        passed = passed and ok
        worst = max(worst, rel)
        print(f"step {step:3d}  ipusim {device:.7f}  pytorch f64 {ref:.7f}  f32 {f32:.7f}  "
              f"ipusim-f64 {rel:.2e}  f32-f64 {spread:.2e}{'' if ok else '  <-- over'}")
    # The weights after the last step, tensor by tensor: where a difference starts.
    # Beside it, PyTorch float32's own difference: a gradient that sums
    # values which nearly cancel (a bias before a batch normalization) is
    # far from float64 in any float32 arithmetic.
    # A schedule: the learning rate the device computed each step, against Keras's formula.
    if dump.get("learning_rates"):
        worst_rate = max(abs(device - keras_learning_rate(dump["optimizer"], i)) / abs(keras_learning_rate(dump["optimizer"], i))
                         for i, device in enumerate(dump["learning_rates"]) if keras_learning_rate(dump["optimizer"], i))
        passed = passed and worst_rate <= args.tolerance
        print(f"  learning rate ({dump['optimizer']['schedule']['class_name']}) each step: largest relative difference "
              f"{worst_rate:.2e} from Keras's formula")
    # Regularizers: the penalties the device outfed each step, against PyTorch's.
    if dump.get("regularizations"):
        worst_penalty = max(abs(device - ref) / abs(ref) for device, ref in zip(dump["regularizations"], exact_regularization))
        passed = passed and worst_penalty <= args.tolerance
        print(f"  regularization term each step: largest relative difference {worst_penalty:.2e} from PyTorch float64's")
    for (name, p), final in zip(params.items(), dump.get("final_weights", [])):
        exact_w = p.detach().reshape(-1).to(torch.float64)
        device_w = torch.tensor(final, dtype=torch.float64)
        f32_w = single_params[name].detach().reshape(-1).to(torch.float64)
        scale = exact_w.abs().max().item() or 1.0
        print(f"  {name:40s} largest difference {((exact_w - device_w).abs().max().item() / scale):.2e} of its largest value"
              f" (PyTorch float32: {((exact_w - f32_w).abs().max().item() / scale):.2e})")
    print(f"{dump['workload']}: {len(dump['losses'])} steps, ipusim against PyTorch float64: largest relative "
          f"difference {worst:.2e} ({'every step within' if passed else 'OVER'} max({args.tolerance:g}, 2 x PyTorch "
          f"float32's); torch {torch.__version__})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
