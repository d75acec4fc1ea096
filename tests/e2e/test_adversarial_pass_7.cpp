// Found by the seventh adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ipusim::test::test_adversarial_pass_7 {
namespace {

const std::string kTrained = sourcePath("tests/data/keras/trained/fashion_mnist_cnn_cvishakh.keras");

// Python (with h5py and numpy) run on `script`, the arguments after it.
void python(const std::string& script, const std::string& args) {
  const CommandResult r = runCommand("/usr/bin/python3 -c " + quote(script) + " " + args);
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

// The trained archive's model.weights.h5, written to `out`, then `edit` (Python, `f` the open h5py file) applied.
void weightsWith(const fs::path& out, const std::string& edit = "") {
  python("import sys, zipfile, h5py, numpy as np\n"
         "open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('model.weights.h5'))\n"
         "f = h5py.File(sys.argv[2], 'a')\n" + edit + "\nf.close()",
         quote(kTrained) + " " + quote(out.string()));
}

std::string predictWith(const std::string& weights, const std::string& extra = "") {
  return ipusimBinary() + " predict --keras " + quote(kTrained) + " --weights " + quote(weights) +
         " --steps 2 --steps-per-execution 1 --workload-set dataset.batch_size=8" + extra;
}

// The trained weights (model.weights, --weights) were no input of the run or
// the compile: `predict --weights w.npy --predictions w.npy --force` replaced
// them with the predictions, a compile's -o the same, and a weights file
// named profile.pop in the autoReport directory was replaced by the profile.
TEST(AdversarialPass7, NoOutputReplacesTheTrainedWeights) {
  ScratchDir dir("weights-as-output");
  const fs::path weights = dir.path() / "w.npy";  // HDF5 whatever its name: the reader looks at the bytes
  weightsWith(weights);
  const std::string kept = readText(weights);
  expectRefusal(runCommand(predictWith(weights.string(), " --predictions " + quote(weights.string()) + " --force")),
                weights.string() + ": is an input of this command");
  EXPECT_EQ(readText(weights), kept);

  nlohmann::json w = {{"name", "trained"},
                      {"dataset", {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 8}, {"input_shape", {28, 28, 1}}, {"classes", 10}}},
                      {"model", {{"keras", kTrained}, {"weights", "w.npy"}}},
                      {"training", {{"steps", 2}, {"steps_per_execution", 1}}}};
  std::ofstream(dir.path() / "w.json") << w.dump();
  const std::string workload = (dir.path() / "w.json").string();
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(workload) + " -o " + quote(weights.string()) + " --force"),
                weights.string() + ": is an input of this command");
  EXPECT_EQ(readText(weights), kept);

  // The profile: autoReport's profile.pop is the weights file.
  fs::create_directories(dir.path() / "rep");
  fs::copy_file(weights, dir.path() / "rep" / "profile.pop");
  w["model"]["weights"] = "rep/profile.pop";
  std::ofstream(dir.path() / "w.json") << w.dump();
  const CommandResult r = runCommand(withReports(dir.path() / "rep") + ipusimBinary() + " run " + quote(workload));
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("profile.pop: is an input of this command"), std::string::npos) << r.output;
  EXPECT_EQ(readText(dir.path() / "rep" / "profile.pop"), kept);

  // Another name is written.
  const auto ok = runCommand(predictWith(weights.string(), " --predictions " + quote((dir.path() / "p.npy").string())));
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
}

// An external link in a weights file made libhdf5 open the file it names
// from disk: a FIFO blocked the run forever (no writer ever came). Keras's
// files hold their objects themselves: a direct external link is refused by
// name, one reached through a soft link is not followed.
TEST(AdversarialPass7, AnExternalLinkInAWeightsFileOpensNoOtherFile) {
  ScratchDir dir("external-link");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(runCommand("mkfifo " + quote(fifo.string())).exitCode, 0);
  const fs::path direct = dir.path() / "direct.weights.h5";
  weightsWith(direct, "del f['layers/dense/vars/1']\nf['layers/dense/vars/1'] = h5py.ExternalLink(" +
                          nlohmann::json(fifo.string()).dump() + ", '/x')");
  // (timeout: before the fix the run never ended.)
  expectRefusal(runCommand("timeout 60 " + predictWith(direct.string())),
                direct.string() + ": 'layers/dense/vars/1' is an external link (to another file): expected the object in "
                                  "this file, as Keras writes it");
  const fs::path soft = dir.path() / "soft.weights.h5";
  weightsWith(soft, "f['elsewhere'] = h5py.ExternalLink(" + nlohmann::json(fifo.string()).dump() +
                        ", '/x')\ndel f['layers/dense/vars/1']\nf['layers/dense/vars/1'] = h5py.SoftLink('/elsewhere')");
  expectRefusal(runCommand("timeout 60 " + predictWith(soft.string())),
                soft.string() + ": layer 'dense_2' (Dense): its bias is missing");
}

// A layer's group holding more weights than the layer has was read by its
// first ones: a Dense file's kernel, bias and a third array, or a file of a
// Dense with a bias given to one without, predicted without a word where
// Keras refuses ("expected 2 variables, but received 3").
TEST(AdversarialPass7, AWeightsGroupWithMoreWeightsThanTheLayerIsRefused) {
  ScratchDir dir("extra-weights");
  const fs::path extra = dir.path() / "extra.weights.h5";
  weightsWith(extra, "f.create_dataset('layers/dense/vars/2', data=np.zeros(128, np.float32))");
  expectRefusal(runCommand(predictWith(extra.string(), " --predictions " + quote((dir.path() / "p.npy").string()))),
                extra.string() + ": layer 'dense_2' (Dense): layers/dense/vars holds 3 weights but the layer has 2 (kernel, "
                                 "bias): the weights of another model? (Keras: expected 2 variables, received 3)");
  EXPECT_FALSE(fs::exists(dir.path() / "p.npy"));
  // The file as Keras wrote it is read.
  const fs::path whole = dir.path() / "whole.weights.h5";
  weightsWith(whole);
  const auto r = runCommand(predictWith(whole.string(), " --predictions " + quote((dir.path() / "p.npy").string())));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A .keras archive holding model.weights.h5 twice was read by its first
// entry, where Keras (Python's zipfile) reads the last: here the first's
// bias NaN, and ipusim predicted from it without a word (the sixth pass's
// fix counted config.json alone).
TEST(AdversarialPass7, AKerasArchiveWithTwoWeightsFilesIsRefused) {
  ScratchDir dir("archive-two-weights");
  const fs::path nan = dir.path() / "nan.weights.h5";
  weightsWith(nan, "f['layers/dense/vars/1'][...] = np.nan");
  const fs::path archive = dir.path() / "two.keras";
  python("import sys, zipfile, warnings\nwarnings.simplefilter('ignore')\n"
         "src = zipfile.ZipFile(sys.argv[1])\n"
         "with zipfile.ZipFile(sys.argv[3], 'w') as z:\n"
         "    z.writestr('config.json', src.read('config.json'))\n"
         "    z.write(sys.argv[2], 'model.weights.h5')\n"
         "    z.writestr('model.weights.h5', src.read('model.weights.h5'))",
         quote(kTrained) + " " + quote(nan.string()) + " " + quote(archive.string()));
  expectRefusal(runCommand(predictWith(archive.string())),
                archive.string() + ": model.weights.h5: 2 entries of that name (expected one; Keras's zipfile would read the last)");
}

// A one-replica model run on --ipus 2 spans both IPUs' tiles, yet the
// summary said "per IPU, 1 IPU" and gave the whole throughput as the
// per-IPU figure (sweep's --vary ipus=1,2 the same).
TEST(AdversarialPass7, ThePerIpuThroughputCountsTheIpusTheRunUsed) {
  const auto r = runCommand(ipusimBinary() + " predict " + quote(sourcePath("workloads/mnist_with_feeds.json")) +
                            " --ipus 2 --synthetic-data --steps 2 --steps-per-execution 1 --json 2>/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("tiles_used").get<int>(), 2944) << "the model spans both IPUs";
  EXPECT_DOUBLE_EQ(j.at("examples_per_second_per_ipu").get<double>(), j.at("examples_per_second").get<double>() / 2);
}

// --predictions' extension was checked after the compile (ResNet-50's 20 s
// went before the refusal): here a compile error came first.
TEST(AdversarialPass7, ThePredictionsNameIsCheckedBeforeTheCompile) {
  expectRefusal(runCommand(ipusimBinary() + " predict " + quote(sourcePath("workloads/mnist_replicated_4ipus.json")) +
                           " --ipus 2 --predictions out.txt"),
                "--predictions out.txt: expected a file name ending in .npy (a NumPy array) or .csv");
}

// predict and evaluate wrapped around a dataset their steps overran (a
// partial last batch dropped, as fit does): 4 batches of 3000 over
// Fashion-MNIST's 10,000 test images wrote 12,000 rows, rows 9,000 on
// images 0 to 2,999 again, and the last 1,000 images in none, without a
// word; Keras's evaluate and predict read each example once.
TEST(AdversarialPass7, PredictionsPastTheDatasetAreRefusedAndEvaluateWarns) {
  ScratchDir dir("overrun");
  const fs::path images = dir.path() / "images.idx", labels = dir.path() / "labels.idx";
  python("import sys\nn = 10\n"
         "open(sys.argv[1], 'wb').write(bytes([0, 0, 8, 3]) + n.to_bytes(4, 'big') + (28).to_bytes(4, 'big') * 2 + bytes(range(n)) * 784)\n"
         "open(sys.argv[2], 'wb').write(bytes([0, 0, 8, 1]) + n.to_bytes(4, 'big') + bytes(range(n)))",
         quote(images.string()) + " " + quote(labels.string()));
  const std::string workload = workloadWith(dir.path(), [&](nlohmann::json& j) {
    j["dataset"] = {{"format", "idx"}, {"images", images.string()}, {"labels", labels.string()}, {"batch_size", 4}};
    j["training"] = {{"steps", 3}, {"steps_per_execution", 1}};
    j["ipu"] = {{"arch", "ipu2"}, {"tiles", 64}};
  });
  const fs::path out = dir.path() / "p.npy";
  expectRefusal(runCommand(ipusimBinary() + " predict " + quote(workload) + " --predictions " + quote(out.string())),
                "--predictions " + out.string() + ": 3 steps of 4 examples read the dataset's 10 examples more than once "
                "(Keras's evaluate and predict read each once: at most 2 steps here); its rows would not be the examples in order");
  EXPECT_FALSE(fs::exists(out));
  const auto evaluated = runCommand("(" + ipusimBinary() + " evaluate " + quote(workload) + " 2>&1 >/dev/null)");
  EXPECT_EQ(evaluated.exitCode, 0) << evaluated.output;
  EXPECT_NE(evaluated.output.find("ipusim: warning: 3 steps of 4 examples read the dataset's 10 examples more than once"),
            std::string::npos) << evaluated.output;
  // Within the dataset: a row per example, no warning.
  const auto r = runCommand("(" + ipusimBinary() + " predict " + quote(workload) + " --steps 2 --predictions " +
                            quote(out.string()) + " 2>&1 >/dev/null)");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out));
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_7
