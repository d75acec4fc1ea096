"""An independent forward pass of a Keras model file (Sequential: Conv2D
valid/same, MaxPooling2D, Flatten, Dense, Dropout, BatchNormalization,
Activation, relu/softmax/linear), in numpy over the weights h5py reads, on
the first N images of an IDX file divided by DIVISOR (255: the author's
x / 255.0; 1: raw pixels). The file is a Keras 3 .keras archive, or a legacy
.h5 (model_config attribute, model_weights/<layer>/<weight_names[i]>; Keras
2.0-2.2's bare list of layers too). Writes the top-1 labels, one per line, to
stdout; the tests compare them with ipusim predict's.

usage: keras_forward.py MODEL.keras IMAGES.idx.gz N DIVISOR"""
import gzip, io, json, math, os, re, stat, sys, zipfile

import h5py
import numpy as np


def snake(name):  # keras naming.to_snake_case
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def values(path, dataset):
    """A weight's values, read only when they are in the file itself: HDF5
    lets a dataset keep them in external raw files or map them from other
    files (a virtual dataset), which h5py opens from disk (a FIFO named
    there waited forever). Keras writes neither; ipusim refuses both."""
    if dataset.is_virtual or dataset.id.get_create_plist().get_external_count():
        sys.exit("%s: %s: its values are stored outside the file (%s): expected them in the file, as Keras writes them"
                 % (path, dataset.name, "a virtual dataset" if dataset.is_virtual else "external raw files"))
    return dataset[()]


def legacy_layers_and_weights(path):
    f = h5py.File(path, "r")
    config = json.loads(text(f.attrs["model_config"]))["config"]
    layers = config["layers"] if isinstance(config, dict) else config
    group = f["model_weights"]
    out = []
    for layer in layers:
        if layer["class_name"] == "InputLayer":
            continue
        name = layer["config"]["name"]
        names = [text(n) for n in group[name].attrs["weight_names"]] if name in group else []
        out.append((layer, [values(path, group[name][n]) for n in names]))
    return out


def regular_file(path, expected):
    """Refuses by name what is no regular file: a FIFO (opening it waits for
    a writer forever), a directory, a device, a missing file."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        sys.exit("%s: %s" % (path, e.strerror))
    if not stat.S_ISREG(mode):
        sys.exit("%s: is %s, expected %s"
                 % (path, "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "no regular file",
                    expected))


def model_file_kind(path):
    """"hdf5" or "zip", after refusing by name what is no model file (no
    regular file, or bytes of neither kind)."""
    regular_file(path, "a Keras model file (a .keras archive or a legacy .h5)")
    with open(path, "rb") as f:
        head = f.read(8)
    if head == b"\x89HDF\r\n\x1a\n":
        return "hdf5"
    if head[:4] == b"PK\x03\x04":
        return "zip"
    sys.exit("%s: neither a .keras archive (a zip file) nor a legacy .h5 (HDF5): this forward pass reads those "
             "(a model.to_json() file holds no weights)" % path)


def layers_and_weights(path):
    if model_file_kind(path) == "hdf5":
        with h5py.File(path, "r") as f:
            if "model_config" not in f.attrs:
                sys.exit("%s: an HDF5 file without a model_config attribute (weights alone, model.save_weights?): "
                         "expected a whole-model .h5" % path)
        return legacy_layers_and_weights(path)
    archive = zipfile.ZipFile(path)
    config = json.loads(archive.read("config.json"))
    weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
    out, used = [], {}
    for layer in config["config"]["layers"]:
        cls = layer["class_name"]
        if cls == "InputLayer":
            continue
        key = snake(cls)
        used[key] = used.get(key, -1) + 1
        group = weights.get("layers/%s%s/vars" % (key, "_%d" % used[key] if used[key] else ""))
        out.append((layer, [values(path, group[str(i)]) for i in range(len(group))] if group is not None else []))
    return out


def activation(x, name):
    if name in (None, "linear"):
        return x
    if name == "relu":
        return np.maximum(x, 0)
    if name == "softmax":
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    raise ValueError(name)


def forward(model, x):
    for layer, w in model:
        cls, c = layer["class_name"], layer["config"]
        if cls in ("Dropout", "InputLayer"):
            continue
        if cls == "Activation":
            x = activation(x, c["activation"])
            continue
        if cls == "Flatten":
            x = x.reshape(x.shape[0], -1)
        elif cls == "Dense":
            x = activation(x @ w[0] + (w[1] if len(w) > 1 else 0), c["activation"])
        elif cls == "Conv2D":
            kh, kw, ci, co = w[0].shape
            if c["padding"] == "same":
                x = np.pad(x, ((0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)))
            n, h, wd, _ = x.shape
            oh, ow = h - kh + 1, wd - kw + 1
            cols = np.stack([x[:, i:i + oh, j:j + ow, :] for i in range(kh) for j in range(kw)], axis=3)
            x = activation(cols.reshape(n, oh, ow, kh * kw * ci) @ w[0].reshape(kh * kw * ci, co)
                           + (w[1] if len(w) > 1 else 0), c["activation"])
        elif cls == "MaxPooling2D":
            (ph, pw), (sh, sw) = c["pool_size"], c["strides"] or c["pool_size"]
            n, h, wd, ch = x.shape
            if c.get("padding") == "same":  # TF's: the output ceil(size / stride), padded after with -inf
                oh, ow = -(-h // sh), -(-wd // sw)
                eh, ew = max((oh - 1) * sh + ph - h, 0), max((ow - 1) * sw + pw - wd, 0)
                x = np.pad(x, ((0, 0), (eh // 2, eh - eh // 2), (ew // 2, ew - ew // 2), (0, 0)),
                           constant_values=-np.inf)
                n, h, wd, ch = x.shape
            oh, ow = (h - ph) // sh + 1, (wd - pw) // sw + 1
            y = np.full((n, oh, ow, ch), -np.inf, np.float32)
            for i in range(ph):
                for j in range(pw):
                    y = np.maximum(y, x[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :])
            x = y
        elif cls == "BatchNormalization":
            k = 0
            gamma = w[k] if c.get("scale", True) else 1
            k += c.get("scale", True)
            beta = w[k] if c.get("center", True) else 0
            k += c.get("center", True)
            x = (x - w[k]) / np.sqrt(w[k + 1] + c["epsilon"]) * gamma + beta
        else:
            raise ValueError("not modelled here: " + cls)
    return x


# The images of Fashion-MNIST's test set (t10k): the forward pass reads the first COUNT.
TEST_SET_IMAGES = 10000


def checked_count(text):
    """COUNT as an integer from 1 to the test set's 10,000 images, else an exit naming it."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= TEST_SET_IMAGES:
        sys.exit("COUNT %s: expected an integer from 1 to %d (the images of Fashion-MNIST's test set)"
                 % (text, TEST_SET_IMAGES))
    return count


def read_images(path, count):
    """The first COUNT images of a gzipped IDX file of 28x28 images, as
    (count, 28, 28, 1) bytes; what is no such file is refused naming it."""
    regular_file(path, "a gzipped IDX file of images")
    try:
        with gzip.open(path) as f:
            head = f.read(16)
            if len(head) < 16 or head[:4] != b"\x00\x00\x08\x03" or head[8:16] != bytes([0, 0, 0, 28, 0, 0, 0, 28]):
                sys.exit("%s: expected a gzipped IDX file of 28x28 images (header 00 00 08 03, N, 28, 28)" % path)
            available = int.from_bytes(head[4:8], "big")
            if available < count:
                sys.exit("%s: holds %d images, COUNT is %d" % (path, available, count))
            pixels = f.read(count * 784)
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        sys.exit("%s: %s (expected a gzipped IDX file of images)" % (path, e))
    if len(pixels) < count * 784:
        sys.exit("%s: truncated: %d images announced, the data ends within image %d" % (path, available, len(pixels) // 784))
    return np.frombuffer(pixels, np.uint8).reshape(count, 28, 28, 1)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[-1])
    model_path, images_path, count, divisor = sys.argv[1], sys.argv[2], checked_count(sys.argv[3]), sys.argv[4]
    try:
        divisor = float(divisor)
    except ValueError:
        divisor = float("nan")
    # (as the float32 the pixels are divided by: 1e-320 is 0 there, and gave NaN labels)
    if not (math.isfinite(divisor) and divisor > 0 and np.isfinite(np.float32(divisor)) and np.float32(divisor) > 0):
        sys.exit("DIVISOR %s: expected a positive number (255: the author's x / 255.0; 1: raw pixels)" % sys.argv[4])
    x = read_images(images_path, count).astype(np.float32) / np.float32(divisor)
    model = layers_and_weights(model_path)
    labels = np.concatenate([forward(model, x[i:i + 500]).argmax(1) for i in range(0, count, 500)])
    sys.stdout.write("".join("%d\n" % v for v in labels))


if __name__ == "__main__":
    main()
