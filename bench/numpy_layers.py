"""Layers and optimizers in numpy for the yardstick's Keras models
(bench/numpy_yardstick.py): Conv2D (valid, stride 1), MaxPooling2D, Dropout,
Flatten and Dense, float32, NHWC as Keras's channels_last; plain SGD and Adam
as Keras defines them.

A convolution is a matrix product over its input's windows ("im2col", as
Caffe and cuDNN's implicit-GEMM do it): numpy's BLAS does the arithmetic,
the windows are copied once a step. Its input gradient adds each kernel
offset's slice in turn (a loop of kh * kw slices, not a scatter).

Each layer's forward(x, training) keeps what its backward(grad) needs;
backward returns the gradient of its input (None for the first layer, whose
input needs none) and sets .grads, aligned with .params.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

F32 = np.float32


def glorot_uniform(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(F32)


class Conv2D:
    def __init__(self, rng, in_shape, filters, kernel, relu):
        h, w, c = in_shape
        kh, kw = kernel
        self.kernel, self.relu = kernel, relu
        self.out_shape = (h - kh + 1, w - kw + 1, filters)
        self.w = glorot_uniform(rng, (kh * kw * c, filters), kh * kw * c, kh * kw * filters)
        self.b = np.zeros(filters, dtype=F32)
        self.params = [self.w, self.b]
        self.needs_input_grad = True

    def forward(self, x, training):
        kh, kw = self.kernel
        oh, ow, f = self.out_shape
        self.in_shape = x.shape
        windows = sliding_window_view(x, (kh, kw), axis=(1, 2))  # B, oh, ow, C, kh, kw
        self.cols = np.ascontiguousarray(windows.transpose(0, 1, 2, 4, 5, 3)).reshape(-1, self.w.shape[0])
        z = self.cols @ self.w
        z += self.b
        if self.relu:
            self.mask = z > 0
            z *= self.mask
        return z.reshape(x.shape[0], oh, ow, f)

    def backward(self, grad):
        kh, kw = self.kernel
        oh, ow, f = self.out_shape
        g = grad.reshape(-1, f)
        if self.relu:
            g = g * self.mask
        self.grads = [self.cols.T @ g, g.sum(axis=0)]
        if not self.needs_input_grad:
            return None
        b, h, w, c = self.in_shape
        dcols = (g @ self.w.T).reshape(b, oh, ow, kh, kw, c)
        dx = np.zeros(self.in_shape, dtype=F32)
        for i in range(kh):
            for j in range(kw):
                dx[:, i:i + oh, j:j + ow, :] += dcols[:, :, :, i, j, :]
        return dx


class MaxPooling2D:
    def __init__(self, in_shape, pool):
        h, w, c = in_shape
        self.pool = pool
        self.out_shape = (h // pool[0], w // pool[1], c)
        self.params = []

    def forward(self, x, training):
        ph, pw = self.pool
        oh, ow, c = self.out_shape
        self.in_shape = x.shape
        blocks = x[:, :oh * ph, :ow * pw, :].reshape(x.shape[0], oh, ph, ow, pw, c)
        y = blocks.max(axis=(2, 4))
        self.mask = blocks == y[:, :, None, :, None, :]
        return y

    def backward(self, grad):
        ph, pw = self.pool
        oh, ow, c = self.out_shape
        dx = np.zeros(self.in_shape, dtype=F32)
        dx[:, :oh * ph, :ow * pw, :] = (self.mask * grad[:, :, None, :, None, :]).reshape(
            grad.shape[0], oh * ph, ow * pw, c)
        self.grads = []
        return dx


class Dropout:
    def __init__(self, rng, in_shape, rate):
        self.rng, self.rate, self.out_shape = rng, rate, in_shape
        self.params = []

    def forward(self, x, training):
        if not training or self.rate == 0:
            self.scale = None
            return x
        keep = self.rng.random(x.shape, dtype=F32) >= self.rate
        self.scale = keep * F32(1.0 / (1.0 - self.rate))
        return x * self.scale

    def backward(self, grad):
        self.grads = []
        return grad if self.scale is None else grad * self.scale


class Flatten:
    def __init__(self, in_shape):
        self.out_shape = (int(np.prod(in_shape)),)
        self.params = []

    def forward(self, x, training):
        self.in_shape = x.shape
        return x.reshape(x.shape[0], -1)

    def backward(self, grad):
        self.grads = []
        return grad.reshape(self.in_shape)


class Dense:
    """relu, or none (the last layer's softmax is the loss's)."""

    def __init__(self, rng, in_shape, units, relu):
        (n,) = in_shape
        self.relu, self.out_shape = relu, (units,)
        self.w = glorot_uniform(rng, (n, units), n, units)
        self.b = np.zeros(units, dtype=F32)
        self.params = [self.w, self.b]
        self.needs_input_grad = True

    def forward(self, x, training):
        self.x = x
        z = x @ self.w
        z += self.b
        if self.relu:
            self.mask = z > 0
            z *= self.mask
        return z

    def backward(self, grad):
        if self.relu:
            grad = grad * self.mask
        self.grads = [self.x.T @ grad, grad.sum(axis=0)]
        return grad @ self.w.T if self.needs_input_grad else None


class Sgd:
    def __init__(self, lr):
        self.lr = F32(lr)

    def update(self, params, grads):
        for p, g in zip(params, grads):
            p -= self.lr * g


class Adam:
    """Keras's Adam: bias-corrected step size, epsilon added to sqrt(v)."""

    def __init__(self, lr, beta1, beta2, epsilon, params):
        self.lr, self.beta1, self.beta2, self.epsilon = lr, beta1, beta2, F32(epsilon)
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def update(self, params, grads):
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        step = F32(self.lr * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t))
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= F32(b1)
            m += F32(1 - b1) * g
            v *= F32(b2)
            v += F32(1 - b2) * (g * g)
            p -= step * m / (np.sqrt(v) + self.epsilon)
