// `ipusim run --keras MODEL.keras`: a Keras 3 .keras archive trains exactly as
// its config.json does (tests/data/keras/make_keras_archives.py packs
// optimizers_keras3.json as Keras 3's model.save() would); a damaged archive
// is one clear error naming the file.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace ipusim::test::test_keras_archive_run {
namespace {

// The run's --json summary without what depends on the host's clock or the file's name.
nlohmann::json simulatedSummary(const std::string& kerasFile) {
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(kerasFile) + " --steps 4 --steps-per-execution 2 --json");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  if (j.is_discarded()) return j;
  for (const char* timed : {"compile_seconds", "wall_seconds", "examples_per_second", "examples_per_second_per_ipu",
                            "speed_factor", "peak_rss_bytes", "host_threads", "workload"})
    j.erase(timed);
  return j;
}

TEST(KerasArchiveRun, RunsAsItsConfigJson) {
  const nlohmann::json archive = simulatedSummary(sourcePath("tests/data/keras/archives/mlp_adam.keras"));
  const nlohmann::json config = simulatedSummary(sourcePath("tests/data/keras/optimizers_keras3.json"));
  ASSERT_FALSE(archive.is_discarded());
  ASSERT_TRUE(archive.contains("cycles") && archive.contains("final_loss"));
  EXPECT_TRUE(archive.at("final_loss").is_number());
  EXPECT_EQ(archive, config);  // the same cycles, step phases and final loss, bit for bit
}

TEST(KerasArchiveRun, ArchiveWithoutConfigJsonIsOneError) {
  const std::string file = sourcePath("tests/data/keras/archives/no_config.keras");
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(file));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find(file + ": a zip archive without config.json"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_keras_archive_run
