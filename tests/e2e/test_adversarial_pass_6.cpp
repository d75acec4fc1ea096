// Found by the sixth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::test {
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

}  // namespace
}  // namespace ipusim::test
