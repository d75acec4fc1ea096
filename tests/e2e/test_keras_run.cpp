// `ipusim run --keras MODEL.json`: a Keras file trains with the defaults for
// the rest; a bad one is one clear error naming the file, the layer and the
// key, a non-zero exit and no profile.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace ipusim::test::test_keras_run {
namespace {

namespace fs = std::filesystem;

TEST(KerasRun, Keras3FileTrainsWithItsCompileConfig) {
  ScratchDir dir("keras-run");
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" +
                            quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}") + " " +
                            ipusimBinary() + " run --keras " +
                            quote(sourcePath("workloads/keras/user_guide_logits_keras3.json")) + " --steps 20");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("user_guide_logits_keras3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("20 in 2 Engine::run calls (10 per run)"), std::string::npos) << r.output;  // steps_per_execution 10
  const auto q = runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                            " \"SELECT t.name, count(*) FROM counters AS c JOIN tracks AS t ON t.id = c.track_id"
                            " GROUP BY t.name ORDER BY t.name;\"");
  ASSERT_EQ(q.exitCode, 0) << q.output;
  EXPECT_EQ(q.output, "accuracy|20\nloss|20\n");
}

// The classic Keras MNIST convnet (TF 2.x file) trains on Fashion-MNIST fed as
// 28x28x1 images: convolutions, pooling, dropout and dense layers end to end.
TEST(KerasRun, MnistConvnetTrains) {
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(sourcePath("workloads/keras/mnist_convnet_tf2.json")) +
                            " --steps 2 --steps-per-execution 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("mnist_convnet_tf2"), std::string::npos) << r.output;
  const std::size_t at = r.output.find("final loss");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double loss = std::stod(r.output.substr(at + 10));
  EXPECT_GT(loss, 0.5) << r.output;  // near ln 10 = 2.3 after two steps from Glorot weights
  EXPECT_LT(loss, 5.0) << r.output;
}

// Keras files with BatchNormalization train from the command line: the TF 2.x
// MLP (axis [1]) and the Keras 3 convnet (axis -1, its compile_config); the
// profile holds the moving statistics as always-live weights.
TEST(KerasRun, BatchNormalizationFilesTrain) {
  ScratchDir dir("keras-bn");
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" +
                            quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}") + " " +
                            ipusimBinary() + " run --keras " + quote(sourcePath("workloads/keras/bn_mlp_tf2.json")) +
                            " --steps 10");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto q = runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                            " \"SELECT name, category, always_live FROM tensors WHERE name LIKE 'batch_normalization/moving%'"
                            " ORDER BY name;\"");
  ASSERT_EQ(q.exitCode, 0) << q.output;
  EXPECT_EQ(q.output, "batch_normalization/moving_mean|weights|1\nbatch_normalization/moving_variance|weights|1\n");
  const auto c = runCommand(ipusimBinary() + " run --keras " + quote(sourcePath("workloads/keras/bn_convnet_keras3.json")) +
                            " --steps 2 --steps-per-execution 2");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::size_t at = c.output.find("final loss");
  ASSERT_NE(at, std::string::npos) << c.output;
  const double loss = std::stod(c.output.substr(at + 10));
  EXPECT_GT(loss, 0.5) << c.output;
  EXPECT_LT(loss, 5.0) << c.output;
}

TEST(KerasRun, BadKerasFileNamesFileLayerAndKey) {
  ScratchDir dir("keras-bad");
  // The TF 2.4 file with an L2 kernel regularizer, given an
  // OrthogonalRegularizer instead (not modelled).
  nlohmann::json j;
  std::ifstream(sourcePath("tests/data/keras/kernel_regularizer.json")) >> j;
  j["config"]["layers"][2]["config"]["kernel_regularizer"] = {{"class_name", "OrthogonalRegularizer"},
                                                              {"config", {{"factor", 0.01}, {"mode", "rows"}}}};
  const std::string file = (dir.path() / "orthogonal.json").string();
  std::ofstream(file) << j.dump();
  const auto r = runCommand("cd " + quote(dir.str()) + " && " + ipusimBinary() + " run --keras " + quote(file));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find(file + ": layer 'dense' (Dense): kernel_regularizer:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("OrthogonalRegularizer"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

// A TF 2.4 file with an L2 kernel regularizer trains; `run` prints the
// regularization term beside the accuracy, and the profile has its counter.
TEST(KerasRun, RegularizerTermIsPrintedAndRecorded) {
  ScratchDir dir("keras-regularizer");
  const std::string file = sourcePath("tests/data/keras/kernel_regularizer.json");
  const auto r = runCommand("cd " + quote(dir.str()) + " && POPLAR_ENGINE_OPTIONS='{\"autoReport.all\":\"true\"," +
                            "\"autoReport.directory\":\"out\"}' " + ipusimBinary() + " run --keras " + quote(file) +
                            " --steps 20 --steps-per-execution 10");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::size_t at = r.output.find("final values     accuracy ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::size_t reg = r.output.find(", regularization ", at);
  ASSERT_NE(reg, std::string::npos) << r.output;
  // 0.01 sum w^2 over a 784 x 128 Glorot-uniform kernel: about 0.01 x 784 x 128 x (6 / 912) / 3 = 2.2.
  const double term = std::stod(r.output.substr(reg + std::string(", regularization ").size()));
  EXPECT_GT(term, 1.5) << r.output;
  EXPECT_LT(term, 3.0) << r.output;
  const auto report = runCommand(ipusimBinary() + " report " + quote((dir.path() / "out").string()) + " --json");
  ASSERT_EQ(report.exitCode, 0) << report.output;
  const auto counters = runCommand("sqlite3 " + quote((dir.path() / "out" / "profile.pop").string()) +
                                   " \"SELECT COUNT(*) FROM counters c JOIN tracks t ON c.track_id = t.id WHERE t.name = 'regularization'\"");
  EXPECT_EQ(counters.output.substr(0, 3), "20\n") << counters.output;
}

// A Keras file whose image size is left unknown (as keras.applications
// writes include_top=False models): --input-shape gives it; without, the
// error says how.
TEST(KerasRun, InputShapeForSizesTheFileLeavesUnknown) {
  ScratchDir dir("keras-unknown");
  nlohmann::json j = nlohmann::json::parse(std::ifstream(sourcePath("workloads/keras/bn_convnet_keras3.json")));
  j["config"]["layers"][0]["config"]["batch_shape"] = {nullptr, nullptr, nullptr, 1};
  const std::string file = (dir.path() / "unknown.json").string();
  std::ofstream(file) << j.dump();
  const std::string run = ipusimBinary() + " run --keras " + quote(file) + " --steps 2 --steps-per-execution 2";
  const auto missing = runCommand(run);
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_NE(missing.output.find("dataset.input_shape: missing: the Keras model's input is ?x?x1"), std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("--input-shape H,W,C"), std::string::npos) << missing.output;
  const auto bad = runCommand(run + " --input-shape 28,0,1");
  EXPECT_NE(bad.exitCode, 0);
  EXPECT_NE(bad.output.find("--input-shape '28,0,1': '0' is not a positive size"), std::string::npos) << bad.output;
  const auto r = runCommand(run + " --input-shape 28,28,1");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("final loss"), std::string::npos) << r.output;
}

TEST(KerasRun, HelpNamesTheOption) {
  const auto r = runCommand(ipusimBinary() + " run --help");
  ASSERT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("--keras"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_keras_run
