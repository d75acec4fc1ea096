// `ipusim evaluate` and `ipusim predict` (issue "Inference"): the loss and
// accuracy evaluate gives are the ones predict's outputs imply on the same
// examples; the predictions file is complete or absent and never replaces a
// file unasked; replicated predict gives the single IPU's outputs; the
// profile says which task ran.
#include "cli_helpers.hpp"
#include "hardening_helpers.hpp"

#include "sim/dataset/batch_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

namespace ipusim::test::test_inference_commands {
namespace {

// The tutorial's model on 64 tiles, `steps` batches of `batch` (10 per run).
std::string tutorialWith(const fs::path& dir, std::uint64_t steps, std::uint32_t batch = 32, std::uint32_t ipus = 1) {
  return workloadWith(dir, [&](nlohmann::json& j) {
    j["dataset"]["batch_size"] = batch;
    j["training"]["steps"] = steps;
    j["training"]["steps_per_execution"] = steps < 10 ? steps : 10;
    j["ipu"] = {{"arch", "ipu2"}, {"tiles", 64}, {"num_ipus", ipus}};
  });
}

// A .npy file of float32 rows (numpy.lib.format 1.0): its shape and values.
struct NpyArray {
  std::uint64_t rows = 0, columns = 0;
  std::vector<float> values;
};

NpyArray readNpy(const fs::path& path) {
  const std::string bytes = readText(path);
  NpyArray a;
  EXPECT_EQ(bytes.compare(0, 6, "\x93NUMPY"), 0) << path;
  const std::size_t headerLength = std::uint8_t(bytes.at(8)) | std::size_t(std::uint8_t(bytes.at(9))) << 8;
  const std::string header = bytes.substr(10, headerLength);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_EQ((10 + headerLength) % 64, 0u) << "numpy aligns the data to 64 bytes";
  const auto shape = header.find("'shape': (");
  EXPECT_NE(shape, std::string::npos) << header;
  if (shape == std::string::npos) return a;
  unsigned long long rows = 0, columns = 0;
  std::sscanf(header.c_str() + shape + 10, "%llu, %llu", &rows, &columns);
  a.rows = rows, a.columns = columns;
  a.values.resize((bytes.size() - 10 - headerLength) / sizeof(float));
  std::memcpy(a.values.data(), bytes.data() + 10 + headerLength, a.values.size() * sizeof(float));
  return a;
}

TEST(InferenceCommands, EvaluateGivesTheLossAndAccuracyThatPredictsOutputsImply) {
  ScratchDir dir("evaluate-predict");
  const std::string workload = tutorialWith(dir.path(), 20);
  const fs::path npy = dir.path() / "predictions.npy";
  const CommandResult predicted = runCommand(ipusimBinary() + " predict " + quote(workload) + " --predictions " + quote(npy.string()));
  ASSERT_EQ(predicted.exitCode, 0) << predicted.output;
  EXPECT_NE(predicted.output.find("batch latency    p50 "), std::string::npos) << predicted.output;
  const CommandResult evaluated = runCommand(ipusimBinary() + " evaluate " + quote(workload) + " --json");
  ASSERT_EQ(evaluated.exitCode, 0) << evaluated.output;
  const nlohmann::json summary = nlohmann::json::parse(evaluated.output);
  EXPECT_EQ(summary["task"], "evaluate");

  const NpyArray p = readNpy(npy);
  ASSERT_EQ(p.rows, 640u);
  ASSERT_EQ(p.columns, 10u);
  ASSERT_EQ(p.values.size(), 640u * 10);
  // The first 640 examples of the training set, in the file's order (neither task shuffles).
  scheduler::DatasetSpec spec;
  spec.features = 784;
  spec.classes = 10;
  const sim::dataset::Examples examples = sim::dataset::loadExamples(spec);
  double loss = 0, correct = 0;
  for (std::size_t r = 0; r < 640; ++r) {
    const float* row = &p.values[r * 10];
    double sum = 0;
    for (std::size_t c = 0; c < 10; ++c) sum += row[c];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r << ": softmax probabilities";
    loss -= std::log(double(row[examples.labels[r]]));
    correct += std::max_element(row, row + 10) - row == examples.labels[r];
  }
  EXPECT_NEAR(summary["final_loss"].get<double>(), loss / 640, 1e-4 * loss / 640);
  EXPECT_NEAR(summary["final_values"]["accuracy"].get<double>(), correct / 640, 1e-6);
}

TEST(InferenceCommands, ThePredictionsFileIsNeverWrittenOverAFileUnaskedNorLeftPartial) {
  ScratchDir dir("predictions-file");
  const std::string workload = tutorialWith(dir.path(), 2);
  const fs::path csv = dir.path() / "p.csv";
  std::ofstream(csv) << "keep me\n";
  const std::string predict = ipusimBinary() + " predict " + quote(workload) + " --predictions ";
  expectRefusal(runCommand(predict + quote(csv.string())), csv.string());
  EXPECT_EQ(readText(csv), "keep me\n");
  const CommandResult forced = runCommand(predict + quote(csv.string()) + " --force");
  ASSERT_EQ(forced.exitCode, 0) << forced.output;
  const std::string text = readText(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 64) << "a line per example";
  EXPECT_EQ(std::count(text.begin(), text.end(), ','), 64 * 9) << "10 values a line";
  // Over its own input, with another extension, without the numbers: refused, nothing written.
  expectRefusal(runCommand(predict + quote(workload)), workload);
  expectRefusal(runCommand(predict + quote((dir.path() / "p.txt").string())), "expected a file name ending in .npy");
  expectRefusal(runCommand(predict + quote((dir.path() / "s.npy").string()) + " --synthetic-data"),
                "--predictions needs the numbers");
  EXPECT_FALSE(fs::exists(dir.path() / "s.npy"));
  expectNoLitter(dir.path());
}

TEST(InferenceCommands, ReplicatedPredictGivesTheSingleIpusOutputs) {
  ScratchDir dir("replicated-predict");
  const fs::path one = dir.path() / "one", two = dir.path() / "two";
  fs::create_directories(one);
  fs::create_directories(two);
  // Two replicas of 16 take the same 32 examples a step as one IPU's batch of 32.
  const CommandResult single = runCommand(ipusimBinary() + " predict " + quote(tutorialWith(one, 4, 32, 1)) +
                                          " --predictions " + quote((one / "p.npy").string()));
  ASSERT_EQ(single.exitCode, 0) << single.output;
  const CommandResult replicated = runCommand(ipusimBinary() + " predict " + quote(tutorialWith(two, 4, 16, 2)) +
                                              " --predictions " + quote((two / "p.npy").string()));
  ASSERT_EQ(replicated.exitCode, 0) << replicated.output;
  const NpyArray a = readNpy(one / "p.npy"), b = readNpy(two / "p.npy");
  ASSERT_EQ(a.rows, 128u);
  ASSERT_EQ(b.rows, 128u);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (std::size_t i = 0; i < a.values.size(); ++i) ASSERT_NEAR(a.values[i], b.values[i], 1e-6) << "value " << i;
}

TEST(InferenceCommands, TheProfileSaysWhichTaskRan) {
  ScratchDir dir("predict-profile");
  const std::string workload = tutorialWith(dir.path(), 10);
  const CommandResult r = runCommand(autoReport(dir.path()) + ipusimBinary() + " predict " + quote(workload));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string profile = quote((dir.path() / "profile.pop").string());
  const CommandResult meta = runCommand("sqlite3 " + profile + " \"SELECT value FROM meta WHERE key = 'task'\"");
  EXPECT_EQ(meta.output, "predict\n");
  const CommandResult runs = runCommand("sqlite3 " + profile + " \"SELECT DISTINCT name FROM runs\"");
  EXPECT_EQ(runs.output, "predict\n");
  const CommandResult streams =
      runCommand("sqlite3 " + profile + " \"SELECT count(*) FROM slices WHERE name LIKE '%labels%'\"");
  EXPECT_EQ(streams.output, "0\n") << "predict streams no labels";
}


const std::string kTrained = sourcePath("tests/data/keras/trained/fashion_mnist_cnn_cvishakh.keras");

// The archive's model.weights.h5, its first `bytes` bytes (all: 0), written to `out`.
void extractWeights(const fs::path& out, std::size_t bytes = 0) {
  const std::string slice = bytes ? "[:" + std::to_string(bytes) + "]" : "";
  const CommandResult r = runCommand("/usr/bin/python3 -c " +
                                     quote("import sys, zipfile; open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1])"
                                           ".read('model.weights.h5')" + slice + ")") +
                                     " " + quote(kTrained) + " " + quote(out.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

std::string predictTrained(const std::string& model, const std::string& weights, const fs::path& out) {
  return ipusimBinary() + " predict --keras " + quote(model) + " --weights " + quote(weights) +
         " --steps 2 --steps-per-execution 1 --workload-set dataset.batch_size=8 --predictions " + quote(out.string());
}

TEST(TrainedWeights, AWeightsFileGivesTheArchivesPredictions) {
  ScratchDir dir("weights-file");
  extractWeights(dir.path() / "m.weights.h5");
  const CommandResult a = runCommand(predictTrained(kTrained, kTrained, dir.path() / "a.npy"));
  ASSERT_EQ(a.exitCode, 0) << a.output;
  const CommandResult b = runCommand(predictTrained(kTrained, (dir.path() / "m.weights.h5").string(), dir.path() / "b.npy"));
  ASSERT_EQ(b.exitCode, 0) << b.output;
  EXPECT_EQ(readText(dir.path() / "a.npy"), readText(dir.path() / "b.npy"));
  // Drawn weights (no --weights) predict otherwise: the file's are used.
  const CommandResult c = runCommand(ipusimBinary() + " predict --keras " + quote(kTrained) +
                                     " --steps 2 --steps-per-execution 1 --workload-set dataset.batch_size=8 --predictions " +
                                     quote((dir.path() / "c.npy").string()));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_NE(readText(dir.path() / "a.npy"), readText(dir.path() / "c.npy"));
}

TEST(TrainedWeights, WeightsOfAnotherModelADamagedFileOrAPlainZipAreRefusedByName) {
  ScratchDir dir("weights-refused");
  const fs::path out = dir.path() / "p.npy";
  // Another model's: the tutorial's MLP has no Conv2D.
  const std::string other = sourcePath("workloads/keras/tutorial_mlp_functional_keras3.json");
  expectRefusal(runCommand(predictTrained(other, kTrained, out)), kTrained);
  // Truncated HDF5.
  extractWeights(dir.path() / "cut.weights.h5", 200000);
  const std::string cut = (dir.path() / "cut.weights.h5").string();
  const CommandResult truncated = runCommand(predictTrained(kTrained, cut, out));
  expectRefusal(truncated, cut);
  // A zip that is not a .keras archive.
  const std::string zip = (dir.path() / "notes.zip").string();
  ASSERT_EQ(runCommand("/usr/bin/python3 -c " +
                       quote("import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').writestr('notes.txt', 'hello')") +
                       " " + quote(zip)).exitCode, 0);
  const CommandResult plain = runCommand(predictTrained(kTrained, zip, out));
  expectRefusal(plain, zip + ": a zip archive without model.weights.h5");
  EXPECT_FALSE(fs::exists(out));
  expectNoLitter(dir.path());
}

// The archive written as an older Keras would have written it (write_keras2_h5.py).
std::string writeKeras2File(const fs::path& out, bool bareList, bool weightsOnly = false) {
  const CommandResult r = runCommand("/usr/bin/python3 " + quote(sourcePath("tests/trained_keras/write_keras2_h5.py")) + " " +
                                     quote(kTrained) + " " + quote(out.string()) + (bareList ? " --bare-list" : "") +
                                     (weightsOnly ? " --weights-only" : ""));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return out.string();
}

TEST(TrainedWeights, Keras2LegacyFilesPredictExactlyAsTheArchive) {
  ScratchDir dir("keras2-h5");
  const CommandResult a = runCommand(predictTrained(kTrained, kTrained, dir.path() / "a.npy"));
  ASSERT_EQ(a.exitCode, 0) << a.output;
  // TF 2.15's layout (model_weights/conv2d_2/conv2d_2/kernel:0, "Custom>Adam")
  // and Keras 2.1's (a bare list of layers, byte-string names, "lr"): the
  // model and its weights from the one file.
  for (const bool bareList : {false, true}) {
    const std::string h5 = writeKeras2File(dir.path() / (bareList ? "k21.h5" : "k215.h5"), bareList);
    const fs::path out = dir.path() / (bareList ? "k21.npy" : "k215.npy");
    const CommandResult b = runCommand(predictTrained(h5, h5, out));
    ASSERT_EQ(b.exitCode, 0) << b.output;
    EXPECT_EQ(readText(dir.path() / "a.npy"), readText(out)) << (bareList ? "Keras 2.1" : "TF 2.15");
  }
  // The archive's model with the legacy file's weights: matched in order, as Keras's load_weights does.
  const std::string h5 = (dir.path() / "k215.h5").string();
  const CommandResult c = runCommand(predictTrained(kTrained, h5, dir.path() / "c.npy"));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(readText(dir.path() / "a.npy"), readText(dir.path() / "c.npy"));
  // Keras 2's save_weights("w.h5"): the layer groups at the root.
  const std::string weightsOnly = writeKeras2File(dir.path() / "w.h5", false, true);
  const CommandResult d = runCommand(predictTrained(kTrained, weightsOnly, dir.path() / "d.npy"));
  ASSERT_EQ(d.exitCode, 0) << d.output;
  EXPECT_EQ(readText(dir.path() / "a.npy"), readText(dir.path() / "d.npy"));
}

TEST(TrainedWeights, LegacyFilesOfAnotherModelOrDamagedAreRefusedByName) {
  ScratchDir dir("keras2-refused");
  const fs::path out = dir.path() / "p.npy";
  const std::string h5 = writeKeras2File(dir.path() / "m.h5", false);
  // Another model: five layers with weights against four; four Dense layers
  // against two Conv2D and two Dense (matched in order, the first shape differs).
  const std::string cnn = sourcePath("tests/data/keras/trained/fashion_mnist_cnn_logits_rohannp02y.h5");
  expectRefusal(runCommand(predictTrained(kTrained, cnn, out)),
                cnn + ": holds the weights of 5 layers (conv2d_6, conv2d_7, conv2d_8, dense_4, dense_5) but the model has "
                      "4 layers with weights (conv2d_2, conv2d_3, dense_2, dense_3)");
  const std::string mlp = sourcePath("tests/data/keras/trained/fashion_mnist_mlp_raw_pixels_maneeshprog.h5");
  expectRefusal(runCommand(predictTrained(kTrained, mlp, out)),
                "layer 'conv2d_2': its kernel in " + mlp + " is 784x256 but the model's is 3x3x1x32");
  // A weight the file names but does not hold.
  const std::string missing = (dir.path() / "missing.h5").string();
  ASSERT_EQ(runCommand("cp " + quote(h5) + " " + quote(missing) + " && /usr/bin/python3 -c " +
                       quote("import sys, h5py; del h5py.File(sys.argv[1], 'a')['model_weights/dense_3/dense_3/bias:0']") +
                       " " + quote(missing)).exitCode, 0);
  expectRefusal(runCommand(predictTrained(missing, missing, out)),
                missing + ": layer 'dense_3' (Dense): its bias is missing: the file's layer 'dense_3' names "
                          "'dense_3/bias:0' but holds no dataset model_weights/dense_3/dense_3/bias:0");
  // A truncated file, as the model and as the weights.
  const std::string cut = (dir.path() / "cut.h5").string();
  ASSERT_EQ(runCommand("head -c 100000 " + quote(h5) + " > " + quote(cut)).exitCode, 0);
  expectRefusal(runCommand(predictTrained(cut, cut, out)), cut + ": the HDF5 file cannot be read");
  expectRefusal(runCommand(predictTrained(kTrained, cut, out)), cut + ": the HDF5 file cannot be read");
  // A weights-only file (save_weights) given as the model.
  const std::string weightsOnly = (dir.path() / "w.weights.h5").string();
  extractWeights(weightsOnly);
  expectRefusal(runCommand(predictTrained(weightsOnly, kTrained, out)),
                weightsOnly + ": an HDF5 file without a model_config attribute");
  EXPECT_FALSE(fs::exists(out));
  expectNoLitter(dir.path());
}

}  // namespace
}  // namespace ipusim::test::test_inference_commands
