"""A trained Keras 3 model predicts with ipusim as an independent forward pass
does: `ipusim predict --keras M --weights M` on the first COUNT images of
Fashion-MNIST's test set writes its predictions (.npy, read by numpy.load);
their top-1 labels agree with keras_forward.py's (numpy over the weights
h5py reads) on at least 99.9% of the images, the accuracy is the one those
labels give, and `ipusim evaluate` reports it too.

usage: check_trained_predictions.py IPUSIM MODEL.keras COUNT"""
import gzip, json, os, subprocess, sys, tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_forward  # noqa: E402

TEST_IMAGES = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
TEST_LABELS = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"


def ipusim(binary, task, model, count, *extra):
    batch = 100 if count % 100 == 0 else count
    args = [binary, task, "--keras", model, "--weights", model, "--steps", str(count // batch),
            "--steps-per-execution", "1",
            "--workload-set", "dataset.images=" + json.dumps(TEST_IMAGES),
            "--workload-set", "dataset.labels=" + json.dumps(TEST_LABELS),
            "--workload-set", "dataset.batch_size=%d" % batch, *extra]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(args), done.returncode, done.stdout + done.stderr))
    return done.stdout


def main():
    binary, model, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    labels = np.frombuffer(gzip.open(TEST_LABELS).read(), np.uint8, offset=8)[:count]
    pixels = np.frombuffer(gzip.open(TEST_IMAGES).read(), np.uint8, offset=16)[: count * 784]
    x = pixels.astype(np.float32).reshape(count, 28, 28, 1) / np.float32(255)
    layers = keras_forward.layers_and_weights(model)
    reference = np.concatenate([keras_forward.forward(layers, x[i:i + 500]).argmax(1) for i in range(0, count, 500)])
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "predictions.npy")
        ipusim(binary, "predict", model, count, "--predictions", out)
        predictions = np.load(out)
    assert predictions.shape == (count, 10), predictions.shape
    assert predictions.dtype == np.float32, predictions.dtype
    top1 = predictions.argmax(1)
    agreement = float((top1 == reference).mean())
    accuracy = float((top1 == labels).mean())
    print("images %d: top-1 agreement with numpy %.4f, accuracy %.4f (numpy's %.4f)"
          % (count, agreement, accuracy, float((reference == labels).mean())))
    assert agreement >= 0.999, agreement
    summary = json.loads(ipusim(binary, "evaluate", model, count, "--json"))
    evaluated = summary["final_values"]["accuracy"]
    print("evaluate: accuracy %.4f, loss %.4f" % (evaluated, summary["final_loss"]))
    assert abs(evaluated - accuracy) < 1e-6, (evaluated, accuracy)


if __name__ == "__main__":
    main()
