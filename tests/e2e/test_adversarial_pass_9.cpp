// Found by the ninth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ipusim::test::test_adversarial_pass_9 {
namespace {

const std::string kValidation = sourcePath("workloads/mnist_with_validation.json");
const std::string kRawPixels = sourcePath("tests/data/keras/trained/fashion_mnist_mlp_raw_pixels_maneeshprog.h5");
const std::string kImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
const std::string kLabels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

// Python (with h5py and numpy) run on `script`, the arguments after it.
void python(const std::string& script, const std::string& args) {
  const CommandResult r = runCommand("/usr/bin/python3 -c " + quote(script) + " " + args);
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

// A small fit with validation on the Fashion-MNIST test set (8 steps of 8,
// two epochs, 4 validation steps after each), `edit` applied.
std::string smallValidation(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json w = {
      {"name", "small_validation"},
      {"dataset", {{"format", "idx"}, {"images", kImages}, {"labels", kLabels}, {"batch_size", 8}}},
      {"model",
       {{"layers", {{{"type", "flatten"}}, {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}}}}},
      {"loss", "sparse_categorical_crossentropy"},
      {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.01}}},
      {"training",
       {{"steps", 8},
        {"steps_per_execution", 2},
        {"steps_per_epoch", 4},
        {"validation", {{"steps", 4}, {"images", kImages}, {"labels", kLabels}}}}},
      {"ipu", {{"arch", "ipu2"}, {"tiles", 64}}}};
  edit(w);
  const fs::path out = dir / "w.json";
  std::ofstream(out) << w.dump();
  return out.string();
}

// Epochs and validations are fit's, and evaluate and predict ignore them:
// yet `ipusim evaluate mnist_with_validation.json --steps 100` was refused
// because 100 steps are no whole epoch of 1,875 (the same through
// --workload-set, and for a file whose task is evaluate).
TEST(AdversarialPass9, EvaluateAndPredictIgnoreFitsEpochsAndValidation) {
  ScratchDir dir("evaluate-epochs");
  for (const char* command : {" evaluate ", " predict "}) {
    auto r = runCommand(ipusimBinary() + command + quote(kValidation) + " --synthetic-data --steps 100 --steps-per-execution 25");
    EXPECT_EQ(r.exitCode, 0) << command << r.output;
    r = runCommand(ipusimBinary() + command + quote(kValidation) +
                   " --synthetic-data --steps 50 --steps-per-execution 25 --workload-set training.outfeed.mode=ALL");
    EXPECT_EQ(r.exitCode, 0) << command << r.output;
  }
  const std::string file = smallValidation(dir.path(), [](nlohmann::json& w) {
    w["task"] = "evaluate";
    w["training"]["steps"] = 6;
    w["training"]["validation"]["steps"] = 3;  // neither fits fit's executions of 2 steps nor its epochs of 4
  });
  const auto r = runCommand(ipusimBinary() + " run " + quote(file) + " --synthetic-data");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // fit still checks them.
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(kValidation) + " --synthetic-data --steps 100 --steps-per-execution 25"),
                "training.steps_per_epoch: 1875 must be a multiple of training.steps_per_execution (25) dividing "
                "training.steps (100)");
}

// The validation data is an input of the run: a validation labels file named
// profile.pop in the autoReport directory was replaced by the profile, and
// `compile -o` wrote over the validation images even without being asked twice.
TEST(AdversarialPass9, TheValidationDataIsNeverWrittenOver) {
  if (!fs::exists(kImages)) GTEST_SKIP() << "no Fashion-MNIST test set at " << kImages;
  ScratchDir dir("validation-inputs");
  fs::create_directories(dir.path() / "rep");
  const fs::path labels = dir.path() / "rep" / "profile.pop", images = dir.path() / "images.idx.gz";
  fs::copy_file(kLabels, labels);
  fs::copy_file(kImages, images);
  const std::string file = smallValidation(dir.path(), [&](nlohmann::json& w) {
    w["training"]["validation"]["labels"] = labels.string();
    w["training"]["validation"]["images"] = images.string();
  });
  const std::string before = readText(labels);
  expectRefusal(runCommand(withReports(dir.path() / "rep") + ipusimBinary() + " run " + quote(file)),
                labels.string() + ": is an input of this command");
  EXPECT_TRUE(readText(labels) == before) << "the validation labels were replaced";
  const std::string imagesBefore = readText(images);
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(file) + " -o " + quote(images.string()) + " --force"),
                images.string() + ": is an input of this command");
  EXPECT_TRUE(readText(images) == imagesBefore) << "the validation images were replaced";
}

// A profile of the validation entry point alone (`run --graph G --entry
// validation`) has no training steps to tell apart: compare counted none of
// its steps and gave a throughput of 0 steps/s.
TEST(AdversarialPass9, ComparesThroughputCountsAValidationEntryPointRunAlone) {
  ScratchDir dir("validation-entry");
  const fs::path graph = dir.path() / "g.json";
  auto r = runCommand(ipusimBinary() + " compile " + quote(kValidation) + " -o " + quote(graph.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  r = runCommand(withReports(dir.path() / "rep") + ipusimBinary() + " run --graph " + quote(graph.string()) +
                 " --entry validation --runs 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string profile = (dir.path() / "rep").string();
  r = runCommand(ipusimBinary() + " compare --json " + quote(profile) + " " + quote(profile));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json a = nlohmann::json::parse(r.output)["a"];
  ASSERT_EQ(a["steps"], 50) << a.dump();
  EXPECT_DOUBLE_EQ(a["throughput_steps_per_second"].get<double>(), 50 / a["simulated_seconds"].get<double>()) << a.dump();
}

// A weight whose values HDF5 keeps outside the file (external raw files, or
// a virtual dataset mapping another file's) made the library open that file
// from disk: a FIFO there blocked predict forever, and /dev/zero or any
// other file was read as the weights. Both are refused naming the weight.
TEST(AdversarialPass9, AWeightStoredOutsideItsFileIsRefused) {
  ScratchDir dir("external-storage");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(runCommand("mkfifo " + quote(fifo.string())).exitCode, 0);
  const std::string edit =
      "import sys, shutil, h5py\nshutil.copy(sys.argv[1], sys.argv[2])\nf = h5py.File(sys.argv[2], 'a')\n"
      "k = 'model_weights/dense_8/kernel'\nshape = f[k].shape\ndel f[k]\n";
  const fs::path external = dir.path() / "external.h5", virtualFile = dir.path() / "virtual.h5";
  python(edit + "f.create_dataset(k, shape=shape, dtype='<f4', external=[(sys.argv[3], 0, h5py.h5f.UNLIMITED)])\nf.close()",
         quote(kRawPixels) + " " + quote(external.string()) + " " + quote(fifo.string()));
  python(edit + "layout = h5py.VirtualLayout(shape=shape, dtype='<f4')\n"
                "layout[:] = h5py.VirtualSource(sys.argv[3], 'data', shape=shape)\n"
                "f.create_virtual_dataset(k, layout, fillvalue=0)\nf.close()",
         quote(kRawPixels) + " " + quote(virtualFile.string()) + " " + quote(fifo.string()));
  // (timeout: before the fix the read of the FIFO never returned.)
  const std::string predict = "timeout " + std::to_string(60 * kSlowdown) + " " + ipusimBinary() + " predict --keras " +
                              quote(kRawPixels) + " --synthetic-data --steps 1 --steps-per-execution 1 --weights ";
  expectRefusal(runCommand(predict + quote(external.string())),
                external.string() + ": layer 'dense_8' (Dense): model_weights/dense_8/kernel: its values are stored in "
                                    "external raw files; expected them stored in this file, as Keras writes them");
  expectRefusal(runCommand(predict + quote(virtualFile.string())),
                virtualFile.string() + ": layer 'dense_8' (Dense): model_weights/dense_8/kernel: a virtual dataset (its "
                                       "values mapped from other files); expected its values stored in this file");
}

// A keras_history tensor index of 2^31 was called "a layer's second output".
TEST(AdversarialPass9, ALargeTensorIndexIsNotCalledTheSecondOutput) {
  ScratchDir dir("tensor-index-large");
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("tests/data/keras/layer_normalization_keras3.json")));
  j["config"]["layers"][2]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = {"project", 0, 2147483648LL};
  const fs::path file = dir.path() / "m.json";
  std::ofstream(file) << j.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(file.string()) + " --synthetic-data --steps 10"),
                file.string() + ": layer 'norm1' (LayerNormalization): inbound_nodes: reads [\"project\",0,2147483648]: "
                                "tensor index 2147483648, an output after the layer's first (expected 0: layers have "
                                "one output here)");
}

// `sweep --vary task=...` (or seed, loss) on a file that leaves the key at
// its default was refused: "'task' is not a key of the workload file ...
// give a workload key's full path", though a top-level key is its own.
TEST(AdversarialPass9, SweepVariesATopLevelKeyTheFileLeavesAtItsDefault) {
  ScratchDir dir("sweep-task");
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(kValidation) +
                            " --synthetic-data --steps 50 --vary 'task=\"evaluate\",\"predict\"' --no-plot -j 1 -o " +
                            quote((dir.path() / "sw").string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string csv = readText(dir.path() / "sw" / "sweep.csv");
  EXPECT_NE(csv.find("evaluate"), std::string::npos) << csv;
  EXPECT_NE(csv.find("predict"), std::string::npos) << csv;
}

// keras_forward.py, the numpy forward pass beside ipusim predict, waited
// forever on a FIFO given as the images (the eighth pass refused a FIFO
// model only) and on a weight stored in external files; a directory or
// /dev/zero as the images ended in a Python traceback, a divisor of 1e-320
// (0 as float32) in NaN labels.
TEST(AdversarialPass9, TheNumpyForwardPassRefusesWhatIsNoImageFile) {
  if (!fs::exists(kImages)) GTEST_SKIP() << "no Fashion-MNIST test set at " << kImages;
  ScratchDir dir("keras-forward-images");
  const fs::path fifo = dir.path() / "fifo.gz";
  ASSERT_EQ(runCommand("mkfifo " + quote(fifo.string())).exitCode, 0);
  const std::string tool = "timeout " + std::to_string(60 * kSlowdown) + " /usr/bin/python3 " +
                           quote(sourcePath("tests/trained_keras/keras_forward.py")) + " ";
  auto refused = [](const CommandResult& r, const std::string& message) {
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  };
  const std::string model = quote(kRawPixels) + " ";
  refused(runCommand(tool + model + quote(fifo.string()) + " 5 1"), fifo.string() + ": is a FIFO, expected a gzipped IDX file of images");
  refused(runCommand(tool + model + quote(dir.str()) + " 5 1"), dir.str() + ": is a directory, expected a gzipped IDX file of images");
  refused(runCommand(tool + model + quote(kLabels) + " 5 1"),
          kLabels + ": expected a gzipped IDX file of 28x28 images (header 00 00 08 03, N, 28, 28)");
  refused(runCommand(tool + model + quote(kImages) + " 5 1e-320"),
          "DIVISOR 1e-320: expected a positive number (255: the author's x / 255.0; 1: raw pixels)");
  const fs::path external = dir.path() / "external.h5";
  python("import sys, shutil, h5py\nshutil.copy(sys.argv[1], sys.argv[2])\nf = h5py.File(sys.argv[2], 'a')\n"
         "k = 'model_weights/dense_8/kernel'\nshape = f[k].shape\ndel f[k]\n"
         "f.create_dataset(k, shape=shape, dtype='<f4', external=[(sys.argv[3], 0, h5py.h5f.UNLIMITED)])\nf.close()",
         quote(kRawPixels) + " " + quote(external.string()) + " " + quote(fifo.string()));
  refused(runCommand(tool + quote(external.string()) + " " + quote(kImages) + " 5 1"),
          external.string() + ": /model_weights/dense_8/kernel: its values are stored outside the file (external raw files)");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_9
