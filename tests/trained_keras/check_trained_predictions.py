"""A trained Keras 3 model predicts with ipusim as an independent forward pass
does: `ipusim predict --keras M --weights M` on the first COUNT images of
Fashion-MNIST's test set writes its predictions (.npy, read by numpy.load);
their top-1 labels agree with keras_forward.py's (numpy over the weights
h5py reads) on at least 99.9% of the images, the accuracy is the one those
labels give, and `ipusim evaluate` reports it too. MODEL is a .keras archive
or a legacy .h5; with --raw-pixels the images are fed unscaled (the
workload's dataset.preprocessing "none"); with --author-accuracy A and the
whole test set (COUNT 10000) the accuracy is the author's A.

usage: check_trained_predictions.py IPUSIM MODEL COUNT [--raw-pixels] [--author-accuracy A]"""
import argparse, gzip, json, os, subprocess, sys, tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_forward  # noqa: E402

TEST_IMAGES = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
TEST_LABELS = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"


def ipusim(binary, task, model, count, preprocessing, *extra):
    batch = 100 if count % 100 == 0 else count
    args = [binary, task, "--keras", model, "--weights", model, "--steps", str(count // batch),
            "--steps-per-execution", "1",
            "--workload-set", "dataset.images=" + json.dumps(TEST_IMAGES),
            "--workload-set", "dataset.labels=" + json.dumps(TEST_LABELS),
            "--workload-set", "dataset.preprocessing=" + json.dumps(preprocessing),
            "--workload-set", "dataset.batch_size=%d" % batch, *extra]
    try:
        done = subprocess.run(args, capture_output=True, text=True)
    except OSError as e:
        sys.exit("%s: %s (expected the ipusim binary)" % (binary, e.strerror))
    if done.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(args), done.returncode, done.stdout + done.stderr))
    return done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ipusim")
    parser.add_argument("model")
    parser.add_argument("count", type=keras_forward.checked_count)
    parser.add_argument("--raw-pixels", action="store_true")
    parser.add_argument("--author-accuracy", type=float)
    a = parser.parse_args()
    binary, model, count = a.ipusim, a.model, a.count
    preprocessing = "none" if a.raw_pixels else "divide_by_255"
    labels = np.frombuffer(gzip.open(TEST_LABELS).read(), np.uint8, offset=8)[:count]
    pixels = np.frombuffer(gzip.open(TEST_IMAGES).read(), np.uint8, offset=16)[: count * 784]
    x = pixels.astype(np.float32).reshape(count, 28, 28, 1) / np.float32(1 if a.raw_pixels else 255)
    layers = keras_forward.layers_and_weights(model)
    reference = np.concatenate([keras_forward.forward(layers, x[i:i + 500]).argmax(1) for i in range(0, count, 500)])
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "predictions.npy")
        ipusim(binary, "predict", model, count, preprocessing, "--predictions", out)
        predictions = np.load(out)
    assert predictions.shape == (count, 10), predictions.shape
    assert predictions.dtype == np.float32, predictions.dtype
    top1 = predictions.argmax(1)
    agreement = float((top1 == reference).mean())
    accuracy = float((top1 == labels).mean())
    print("images %d: top-1 agreement with numpy %.4f, accuracy %.4f (numpy's %.4f)"
          % (count, agreement, accuracy, float((reference == labels).mean())))
    assert agreement >= 0.999, agreement
    summary = json.loads(ipusim(binary, "evaluate", model, count, preprocessing, "--json"))
    evaluated = summary["final_values"]["accuracy"]
    print("evaluate: accuracy %.4f, loss %.4f" % (evaluated, summary["final_loss"]))
    assert abs(evaluated - accuracy) < 1e-6, (evaluated, accuracy)
    assert summary["dataset"]["preprocessing"] == preprocessing, summary["dataset"]
    if a.author_accuracy is not None and count == 10000:
        assert abs(accuracy - a.author_accuracy) < 5e-5, (accuracy, a.author_accuracy)
        print("the author's accuracy %.4f: matched" % a.author_accuracy)


if __name__ == "__main__":
    main()
