// Found by the sixth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::test::test_adversarial_pass_6 {
namespace {

// A small Keras workload in `dir`: w.json reading the model file `model`
// (relative to the workload), two synthetic steps.
std::string kerasWorkload(const fs::path& dir, const std::string& model) {
  nlohmann::json w = {{"name", "swept"},
                      {"dataset", {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 8}, {"input_shape", {28, 28}}, {"classes", 10}}},
                      {"model", {{"keras", model}}},
                      {"training", {{"steps", 2}, {"steps_per_execution", 1}}},
                      {"ipu", {{"tiles", 16}}}};
  std::ofstream(dir / "w.json") << w.dump();
  return (dir / "w.json").string();
}

// `sweep` knew the workload alone as its input: the Keras model the workload
// reads, named o/sweep.json, was replaced by the results; a workload kept as
// o/points/0.json was deleted as an earlier point's output (every point then
// failed on an empty file); a folder o/points/2024/ of the user's, deleted
// as an earlier point's report directory.
TEST(AdversarialPass6, ASweepWritesAndEmptiesNoneOfItsInputs) {
  ScratchDir dir("sweep-inputs");
  const fs::path out = dir.path() / "o";
  const std::string model = readText(sourcePath("workloads/keras/tutorial_mlp_tf2.json"));
  const auto sweep = [&](const std::string& workload) {
    return runCommand(ipusimBinary() + " sweep " + quote(workload) + " --vary training.steps=1,2 -o " + quote(out.string()) +
                      " -j 1 --no-plot --synthetic-data");
  };
  fs::create_directories(out);
  std::ofstream(out / "sweep.json") << model;
  std::string workload = kerasWorkload(dir.path(), "o/sweep.json");
  expectRefusal(sweep(workload), "sweep.json: is an input of this command");
  EXPECT_EQ(readText(out / "sweep.json"), model);

  // The Keras model as points/1.json, and the workload as points/0.json.
  fs::remove(out / "sweep.json");
  fs::create_directories(out / "points");
  std::ofstream(out / "points" / "1.json") << model;
  workload = kerasWorkload(dir.path(), "o/points/1.json");
  expectRefusal(sweep(workload), "1.json: is an input of this sweep");
  EXPECT_EQ(readText(out / "points" / "1.json"), model);
  fs::rename(out / "points" / "1.json", dir.path() / "model.json");
  kerasWorkload(dir.path(), "../../model.json");
  fs::rename(dir.path() / "w.json", out / "points" / "0.json");
  const std::string kept = readText(out / "points" / "0.json");
  expectRefusal(sweep((out / "points" / "0.json").string()), "0.json: is an input of this sweep");
  EXPECT_EQ(readText(out / "points" / "0.json"), kept);
  fs::rename(out / "points" / "0.json", dir.path() / "w.json");

  // A folder named as a point's report directory that holds other files.
  workload = kerasWorkload(dir.path(), "model.json");
  fs::create_directories(out / "points" / "2024");
  std::ofstream(out / "points" / "2024" / "notes.txt") << "mine";
  expectRefusal(sweep(workload), "2024: not written by a sweep");
  EXPECT_EQ(readText(out / "points" / "2024" / "notes.txt"), "mine");

  // A point's own report directory is still emptied, and the sweep runs.
  fs::remove_all(out / "points" / "2024");
  fs::create_directories(out / "points" / "7");
  std::ofstream(out / "points" / "7" / "profile.pop") << "earlier";
  std::ofstream(out / "points" / "7" / "serialized_graph.json.tmp-12") << "earlier";
  const auto r = sweep(workload);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_FALSE(fs::exists(out / "points" / "7"));
  EXPECT_TRUE(fs::exists(out / "points" / "1.json"));
}

// A .keras archive holding config.json twice was read by its first entry,
// where Keras (Python's zipfile) reads the last: here the first a valid
// model, the last not one, and ipusim trained the first without a word.
TEST(AdversarialPass6, AKerasArchiveWithTwoConfigsIsRefused) {
  ScratchDir dir("archive-two-configs");
  const std::string model = readText(sourcePath("workloads/keras/user_guide_logits_keras3.json"));
  const std::string archive = (dir.path() / "m.keras").string();
  std::ofstream(archive, std::ios::binary) << storedZip({{"config.json", model}, {"metadata.json", "{}"}, {"config.json", "{}"}});
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(archive) + " --synthetic-data --steps 1 --steps-per-execution 1"),
                "ipusim: error: " + archive + ": config.json: 2 entries of that name (expected one; Keras's zipfile would read the last)");
  // One config.json among other entries is read.
  std::ofstream(archive, std::ios::binary) << storedZip({{"metadata.json", "{}"}, {"config.json", model}});
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(archive) + " --synthetic-data --steps 1 --steps-per-execution 1");
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// The host-link bytes of `report`, `report --json`, `compare` and the
// viewer's selection were summed unchecked: a damaged profile whose stream
// copies each claim 2^62 - 1 bytes (the readers' bound for one value)
// printed "bytes to device -16 B, to host -8 B" (SCHEMA.md promises
// overflow-checked sums, as every other sum has).
TEST(AdversarialPass6, HostLinkBytesOverflowingIsADamagedProfile) {
  ScratchDir dir("host-link-bytes");
  const fs::path profile = writeProfile(dir.path());
  execSql(profile, "UPDATE slices SET bytes = 4611686018427387903 WHERE category = 'stream_copy_mid'");
  for (const char* command : {" report ", " report --json ", " insights "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(profile.string()));
    expectRefusal(r, profile.string() + ": damaged profile: the sum of slices.bytes overflows 64 bits");
  }
  expectRefusal(runCommand(ipusimBinary() + " compare " + quote(profile.string()) + " " + quote(profile.string())),
                "the sum of slices.bytes overflows 64 bits");
  // Within 64 bits, the sums are the stream copies' bytes.
  execSql(profile, "UPDATE slices SET bytes = 1000 WHERE category = 'stream_copy_mid'");
  const auto r = runCommand(ipusimBinary() + " report --json " + quote(profile.string()) + " 2>/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json report = nlohmann::json::parse(r.output);
  EXPECT_GT(report.at("captured").at("bytes_to_device").get<std::int64_t>(), 0) << r.output;
  EXPECT_EQ(report.at("captured").at("bytes_to_device").get<std::int64_t>() % 1000, 0) << r.output;
}

// Known items of the fifth pass (counted as old): a keras_history whose
// node index is negative was read as call 0 of the layer.
TEST(AdversarialPass6, ANegativeKerasNodeIndexIsRefused) {
  ScratchDir dir("negative-node-index");
  nlohmann::json m = nlohmann::json::parse(readText(sourcePath("tests/data/keras/einsum_dense_keras3.json")));
  m["config"]["layers"][1]["inbound_nodes"][0]["args"][0]["config"]["keras_history"][1] = -1;
  const std::string model = (dir.path() / "m.json").string();
  std::ofstream(model) << m.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(model) + " --synthetic-data --steps 1 --steps-per-execution 1"),
                "reads [\"input_1\",-1,0]: node index -1 names no call of layer 'input_1' (expected 0 or more, below its number of "
                "calls)");
  m["config"]["layers"][1]["inbound_nodes"][0]["args"][0]["config"]["keras_history"][1] = 9223372036854775808ull;
  std::ofstream(model) << m.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(model) + " --synthetic-data --steps 1 --steps-per-execution 1"),
                "node index 9223372036854775808 names no call of layer 'input_1'");
}

// A LayerNormalization axis naming one axis twice ([-1, -1], or [2, -1] on
// a rank-3 input) was read as [-1], where tf.keras refuses it ("Duplicate
// axis"); a known item of the fifth pass (counted as old).
TEST(AdversarialPass6, ADuplicatedLayerNormalizationAxisIsRefused) {
  ScratchDir dir("duplicated-axis");
  const auto normalized = [&](const nlohmann::json& axis) {
    return workloadWith(dir.path(), [&](nlohmann::json& j) {
      j["dataset"] = {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 8}, {"input_shape", {5, 3}}, {"classes", 3}};
      j["model"] = {{"layers", {{{"type", "layer_normalization"}, {"axis", axis}},
                                {{"type", "flatten"}},
                                {{"type", "dense"}, {"units", 3}, {"activation", "softmax"}}}}};
      j["training"] = {{"steps", 1}, {"steps_per_execution", 1}};
    });
  };
  for (const nlohmann::json& axis : {nlohmann::json{-1, -1}, nlohmann::json{2, -1}})
    expectRefusal(runCommand(ipusimBinary() + " run " + quote(normalized(axis))),
                  "axis: " + axis.dump() + " names the axis 2 twice (expected each axis once; Keras: Duplicate axis)");
  // Distinct trailing axes still normalize together.
  const auto r = runCommand(ipusimBinary() + " run " + quote(normalized({1, -1})));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A workload's ipu.num_ipus that differs from --ipus was refused with
// "expected a multiple of the IPUs one replica needs (1)" for 4 IPUs
// against 2, which is one: the rule is that the two agree (`sweep --vary
// ipus=2,4` of a 2-IPU workload said the same of its 4-IPU point).
TEST(AdversarialPass6, IpusThatDifferFromTheWorkloadsSayTheRule) {
  const std::string replicated = sourcePath("workloads/mnist_replicated_4ipus.json");
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(replicated) + " --ipus 2"),
                replicated + ": ipu.num_ipus is 4 but the target has 2 IPUs (--ipus / ipuLink.numIpus): expected the same "
                "number (ipu.num_ipus 2 runs the model on 2 IPUs)");
  const std::string sharded = sourcePath("workloads/mnist_sharded_2ipus.json");
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(sharded) + " --ipus 3"),
                "ipu.num_ipus is 2 but the target has 3 IPUs (--ipus / ipuLink.numIpus): expected the same number (a "
                "multiple of the 2 IPUs one replica needs, which 3 is not)");
  const auto r = runCommand(ipusimBinary() + " run " + quote(replicated) +
                            " --ipus 2 --workload-set ipu.num_ipus=2 --synthetic-data --steps 2 --steps-per-execution 1");
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A workload value of the wrong type named the key and the type expected
// but not the value: "model.layers[0].bias_axes: expected a string" for 5
// (the Keras reader and the workload's integer keys say "got ...").
TEST(AdversarialPass6, AWorkloadValueOfTheWrongTypeIsShown) {
  ScratchDir dir("wrong-type");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& j) { j["name"] = 5; }, "w.json: name: expected a string, got 5"},
      {[](nlohmann::json& j) { j["optimizer"]["learning_rate"] = "fast"; }, "optimizer.learning_rate: expected a number, got \"fast\""},
      {[](nlohmann::json& j) { j["training"]["feeds"] = "yes"; }, "training.feeds: expected true or false, got \"yes\""},
      {[](nlohmann::json& j) { j["dataset"] = nlohmann::json::array(); }, "dataset: expected an object, got array"},
      {[](nlohmann::json& j) { j["model"]["layers"][1]["activation"] = nullptr; }, "model.layers[1].activation: expected a string, got null"}};
  for (const auto& [edit, message] : cases)
    expectRefusal(runCommand(ipusimBinary() + " run " + quote(workloadWith(dir.path(), edit))), message);
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_6
