// `ipusim run --keras MODEL.json`: a Keras file trains with the defaults for
// the rest; a bad one is one clear error naming the file, the layer and the
// key, a non-zero exit and no profile.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

namespace ipusim::test {
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

TEST(KerasRun, BadKerasFileNamesFileLayerAndKey) {
  ScratchDir dir("keras-bad");
  const std::string file = sourcePath("tests/data/keras/kernel_regularizer.json");
  const auto r = runCommand("cd " + quote(dir.str()) + " && " + ipusimBinary() + " run --keras " + quote(file));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find(file + ": layer 'dense' (Dense): kernel_regularizer:"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

TEST(KerasRun, HelpNamesTheOption) {
  const auto r = runCommand(ipusimBinary() + " run --help");
  ASSERT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("--keras"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test
