// Found by the eighth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ipusim::test::test_adversarial_pass_8 {
namespace {

const std::string kLegacy = sourcePath("tests/data/keras/trained/fashion_mnist_cnn_logits_rohannp02y.h5");
const std::string kArchive = sourcePath("tests/data/keras/trained/fashion_mnist_cnn_cvishakh.keras");
const std::string kImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
const std::string kLabels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

// Python (with h5py and numpy) run on `script`, the arguments after it.
void python(const std::string& script, const std::string& args) {
  const CommandResult r = runCommand("/usr/bin/python3 -c " + quote(script) + " " + args);
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

// The legacy model's file copied to `out`, then `edit` (Python, `f` the open h5py file) applied.
void legacyWith(const fs::path& out, const std::string& edit) {
  python("import sys, shutil, h5py, numpy as np\nshutil.copy(sys.argv[1], sys.argv[2])\n"
         "f = h5py.File(sys.argv[2], 'a')\n" + edit + "\nf.close()",
         quote(kLegacy) + " " + quote(out.string()));
}

std::string predictLegacyWith(const std::string& weights) {
  return ipusimBinary() + " predict --keras " + quote(kLegacy) + " --weights " + quote(weights) +
         " --synthetic-data --steps 1 --steps-per-execution 1";
}

// The trained legacy model (compiled with Adam) on Fashion-MNIST's test
// images, 8 steps of 4, `edit` applied.
std::string trainedWorkload(const fs::path& dir, const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json w = {{"name", name},
                      {"dataset", {{"format", "idx"}, {"images", kImages}, {"labels", kLabels}, {"batch_size", 4}}},
                      {"model", {{"keras", kLegacy}, {"weights", kLegacy}}},
                      {"training", {{"steps", 8}, {"steps_per_execution", 8}}},
                      {"ipu", {{"arch", "ipu2"}, {"tiles", 64}}}};
  edit(w);
  const fs::path out = dir / (name + ".json");
  std::ofstream(out) << w.dump();
  return out.string();
}

// Pipelined and replicated evaluate and predict of a Keras model compiled
// with Adam were refused ("pipelining ... support plain SGD only"), though
// they update no weight: the bundled legacy model could not be predicted
// on two pipeline stages. Its pipelined predictions are the unpipelined ones.
TEST(AdversarialPass8, PipelinedAndReplicatedInferenceNeedsNoPlainSgd) {
  if (!fs::exists(kImages)) GTEST_SKIP() << "no Fashion-MNIST test set at " << kImages;
  ScratchDir dir("inference-adam");
  const std::string plain = trainedWorkload(dir.path(), "plain", [](nlohmann::json&) {});
  const std::string piped = trainedWorkload(dir.path(), "piped", [](nlohmann::json& w) {
    w["model"]["stages"] = {"conv2d_6", "dense_4"};
    w["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
    w["ipu"]["num_ipus"] = 2;
  });
  const std::string replicated = trainedWorkload(dir.path(), "replicated", [](nlohmann::json& w) { w["ipu"]["num_ipus"] = 2; });
  const fs::path a = dir.path() / "plain.npy", b = dir.path() / "piped.npy";
  auto r = runCommand(ipusimBinary() + " predict " + quote(plain) + " --predictions " + quote(a.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  r = runCommand(ipusimBinary() + " predict " + quote(piped) + " --predictions " + quote(b.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(a), readText(b)) << "the pipeline's predictions differ from the unpipelined ones";
  r = runCommand(ipusimBinary() + " evaluate " + quote(piped));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  r = runCommand(ipusimBinary() + " evaluate " + quote(replicated));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // fit still needs plain SGD there.
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(piped) + " --workload-set task='\"fit\"'"),
                kLegacy + ": compile_config.optimizer: pipelining supports plain SGD only");
}

// Each chunk layer_names0, layer_names1, ... of a legacy list is looked up
// among the object's attributes, a linear search: 40,000 chunks took 19 s
// and more grew as the square. Past 256 chunks (more than a model within the
// layer bound has names for) the file is refused; Keras's split is read.
TEST(AdversarialPass8, ALegacyListOfTooManyChunksIsRefused) {
  ScratchDir dir("legacy-chunks");
  const fs::path many = dir.path() / "many.h5";
  legacyWith(many, "g = f['model_weights']\nv = list(g.attrs['layer_names'])\ndel g.attrs['layer_names']\n"
                   "g.attrs['layer_names0'] = v\nfor i in range(1, 300): g.attrs['layer_names%d' % i] = np.zeros(0)");
  expectRefusal(runCommand(predictLegacyWith(many.string())),
                many.string() + ": 'model_weights''s attribute 'layer_names256': more than 256 chunks of 'layer_names' "
                                "(Keras cuts a list into chunks of 64,512 bytes; 256 hold more names than a model of 8192 layers has)");
  const fs::path split = dir.path() / "split.h5";
  legacyWith(split, "g = f['model_weights']\nv = list(g.attrs['layer_names'])\ndel g.attrs['layer_names']\n"
                    "for i in range(0, len(v), 3): g.attrs['layer_names%d' % (i // 3)] = v[i:i + 3]");
  const auto r = runCommand(predictLegacyWith(split.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A weight's path was checked prefix by prefix, each looked up from the
// root: a weight_names entry 2,000 groups deep took 47 s (d^2 lookups).
// Walked one link at a time, 4,000 groups take well under a second.
TEST(AdversarialPass8, AWeightNamedDeepInNestedGroupsIsReadInLinearTime) {
  ScratchDir dir("deep-weight-path");
  const fs::path deep = dir.path() / "deep.h5";
  legacyWith(deep, "g = f['model_weights/dense_5']\npath = '/'.join(['x'] * 4000)\n"
                   "g[path + '/k'] = g['sequential_2/dense_5/kernel'][()]\ng[path + '/b'] = g['sequential_2/dense_5/bias'][()]\n"
                   "g.attrs['weight_names'] = [path + '/k', path + '/b']");
  // (timeout: before the fix the read took minutes.)
  const auto r = runCommand("timeout " + std::to_string(60 * kSlowdown) + " " + predictLegacyWith(deep.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A group's members were listed by index, each lookup walking the links up
// to it: 40,000 extra groups under a Keras 3 weights file's layers/ took
// 28 s (the square of the count). One pass over the links reads 100,000 in
// about 3 s; the first extra group with weights is still refused.
TEST(AdversarialPass8, AWeightsFileWithManyGroupsIsListedInLinearTime) {
  ScratchDir dir("many-groups");
  const fs::path many = dir.path() / "many.weights.h5";
  python("import sys, zipfile, h5py\n"
         "open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('model.weights.h5'))\n"
         "f = h5py.File(sys.argv[2], 'a')\nfor i in range(100000): f.create_group('layers/zz%06d' % i)\n"
         "f['layers/zz099999/vars/0'] = [1.0]\nf.close()",
         quote(kArchive) + " " + quote(many.string()));
  // (timeout: before the fix the listing took over a minute.)
  expectRefusal(runCommand("timeout " + std::to_string(60 * kSlowdown) + " " + ipusimBinary() + " predict --keras " +
                           quote(kArchive) + " --weights " + quote(many.string()) + " --synthetic-data --steps 1 --steps-per-execution 1"),
                many.string() + ": holds the weights of 'layers/zz099999', which the model has no layer for");
}

// A negative tensor index in a keras_history was called "a layer's second output".
TEST(AdversarialPass8, ANegativeTensorIndexIsNamedAsSuch) {
  ScratchDir dir("tensor-index");
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("tests/data/keras/layer_normalization_keras3.json")));
  j["config"]["layers"][2]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = {"project", 0, -1};
  const fs::path file = dir.path() / "m.json";
  std::ofstream(file) << j.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(file.string()) + " --synthetic-data --steps 1"),
                file.string() + ": layer 'norm1' (LayerNormalization): inbound_nodes: reads [\"project\",0,-1]: tensor index -1 "
                                "names no output (expected 0: layers have one output here)");
}

// keras_forward.py, the numpy forward pass users run beside ipusim predict
// (and check_trained_predictions.py through it), waited forever on a FIFO
// given as the model, and answered a count of 0 with "need at least one
// array to concatenate" and a divisor of 0 with NaN labels.
TEST(AdversarialPass8, TheNumpyForwardPassRefusesWhatIsNoModelOrCount) {
  ScratchDir dir("keras-forward");
  const fs::path fifo = dir.path() / "fifo.keras";
  ASSERT_EQ(runCommand("mkfifo " + quote(fifo.string())).exitCode, 0);
  const std::string tool = "/usr/bin/python3 " + quote(sourcePath("tests/trained_keras/keras_forward.py")) + " ";
  auto refused = [](const CommandResult& r, const std::string& message) {
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  };
  // (timeout: before the fix the FIFO's open never returned.)
  refused(runCommand("timeout 60 " + tool + quote(fifo.string()) + " " + quote(kImages) + " 5 255"),
          fifo.string() + ": is a FIFO, expected a Keras model file (a .keras archive or a legacy .h5)");
  refused(runCommand(tool + quote(kArchive) + " " + quote(kImages) + " 0 255"),
          "COUNT 0: expected an integer from 1 to 10000 (the images of Fashion-MNIST's test set)");
  refused(runCommand(tool + quote(kArchive) + " " + quote(kImages) + " 5 0"),
          "DIVISOR 0: expected a positive number (255: the author's x / 255.0; 1: raw pixels)");
  const std::string json = sourcePath("workloads/keras/tutorial_mlp_tf2.json");
  refused(runCommand(tool + quote(json) + " " + quote(kImages) + " 5 255"),
          json + ": neither a .keras archive (a zip file) nor a legacy .h5 (HDF5)");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_8
