// The workload format: bundled files parse; malformed ones name file and key.
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace ipusim::scheduler::workload_test {
namespace {

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

// Expects parse to throw with a message containing every fragment.
void expectError(const nlohmann::json& j, const std::vector<std::string>& fragments) {
  try {
    parseWorkload(j, "bad.json");
    FAIL() << "no error for " << j.dump();
  } catch (const std::invalid_argument& e) {
    for (const auto& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({"dataset": {"format": "synthetic", "batch_size": 4, "features": 8},
    "model": {"layers": [{"type": "dense", "units": 10, "activation": "softmax"}]}})");
}

TEST(Workload, TutorialWithFeeds) {
  const Workload w = loadWorkload(src("workloads/mnist_with_feeds.json"));
  EXPECT_EQ(w.name, "mnist_with_feeds");
  EXPECT_EQ(w.dataset.batchSize, 32u);
  ASSERT_EQ(w.layers.size(), 3u);
  EXPECT_EQ(w.layers[1].units, 128u);
  EXPECT_EQ(w.layers[1].activation, Activation::Relu);
  EXPECT_EQ(w.layers[1].name, "dense");
  EXPECT_EQ(w.layers[2].name, "dense_1");
  EXPECT_EQ(w.layers[2].activation, Activation::Softmax);
  EXPECT_DOUBLE_EQ(w.optimizer.learningRate, 0.01);
  EXPECT_EQ(w.training.steps, 10000u);
  EXPECT_EQ(w.training.stepsPerExecution, 10u);
  EXPECT_TRUE(w.training.feeds);
  EXPECT_EQ(w.dataset.images, kFashionMnistTrainImages);
}

TEST(Workload, TutorialWithoutFeedsRunsOneStepPerRun) {
  const Workload w = loadWorkload(src("workloads/mnist_without_feeds.json"));
  EXPECT_FALSE(w.training.feeds);
  EXPECT_EQ(w.training.stepsPerExecution, 1u);
}

TEST(Workload, Defaults) {
  const Workload w = parseWorkload(minimal(), "m.json");
  EXPECT_EQ(w.scheduling, "choose_best");
  EXPECT_EQ(w.ipu.arch, "ipu2");
  EXPECT_EQ(w.training.outfeedMode, "ALL");
  EXPECT_EQ(w.seed, 1u);
}

TEST(Workload, UnknownKeyNamesFileAndPath) {
  auto j = minimal();
  j["training"] = {{"stepz", 3}};
  expectError(j, {"bad.json", "training.stepz", "unknown key", "steps_per_execution"});
}

TEST(Workload, WrongTypeNamesKey) {
  auto j = minimal();
  j["optimizer"] = {{"learning_rate", "fast"}};
  expectError(j, {"bad.json", "optimizer.learning_rate", "expected a number"});
}

TEST(Workload, ZeroBatchSize) {
  auto j = minimal();
  j["dataset"]["batch_size"] = 0;
  expectError(j, {"bad.json", "dataset.batch_size", "positive integer"});
}

TEST(Workload, MissingDatasetFileNamesIt) {
  auto j = minimal();
  j["dataset"] = {{"format", "idx"}, {"images", "no/such/images.gz"}};
  expectError(j, {"bad.json", "dataset.images", "no/such/images.gz"});
}

// Dataset files are found beside the workload, as its Keras file is, not in
// the working directory.
TEST(Workload, DatasetPathsAreRelativeToTheWorkloadFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ipusim-workload-paths-" + std::to_string(::getpid()));
  fs::create_directories(dir / "data");
  for (const char* name : {"data/images.gz", "data/labels.gz"}) std::ofstream(dir / name) << "x";
  auto j = minimal();
  j["dataset"] = {{"format", "idx"}, {"images", "data/images.gz"}, {"labels", "data/labels.gz"}};
  std::ofstream(dir / "job.json") << j.dump();
  const Workload w = loadWorkload((dir / "job.json").string());
  EXPECT_EQ(w.dataset.images, (dir / "data/images.gz").string());
  EXPECT_EQ(w.dataset.labels, (dir / "data/labels.gz").string());
  j["dataset"]["images"] = "data/missing.gz";
  std::ofstream(dir / "job.json") << j.dump();
  try {
    loadWorkload((dir / "job.json").string());
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "data/missing.gz").string()), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Workload, BadLayerAndEnumValues) {
  auto j = minimal();
  j["model"]["layers"][0]["activation"] = "log_softmax";
  expectError(j, {"model.layers[0].activation", "'log_softmax'", "linear | relu | leaky_relu | relu6", "mish | swish | hard_swish"});
  j = minimal();
  j["model"]["layers"][0].erase("units");
  expectError(j, {"model.layers[0].units", "missing"});
  j = minimal();
  j["compile"] = {{"scheduling", "fastest"}};
  expectError(j, {"compile.scheduling", "choose_best"});
}

TEST(Workload, StepsMustFillExecutions) {
  auto j = minimal();
  j["training"] = {{"steps", 15}, {"steps_per_execution", 10}};
  expectError(j, {"training.steps: 15 must be a multiple of training.steps_per_execution (10)"});
}

TEST(Workload, MissingFileAndBadJson) {
  EXPECT_THROW(loadWorkload("no_such_workload.json"), std::invalid_argument);
  try {
    loadWorkload("no_such_workload.json");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_workload.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace ipusim::scheduler::workload_test
