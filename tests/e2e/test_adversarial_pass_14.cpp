// Found by the fourteenth adversarial pass of issue 33 (acceptance 2). Each
// case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test {
namespace {

const char* const kTinyWorkload = R"({
  "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
  "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                       {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
  "optimizer": {"type": "sgd"},
  "training": {"steps": 2, "steps_per_execution": 2},
  "ipu": {"tiles": 4}})";

// A sweep's failed point named "--workload-set", a flag the user never
// typed: `--vary steps=3` became `--workload-set training.steps=3` in the
// child. It names the --vary values now.
TEST(AdversarialPass14, ASweepPointsErrorNamesTheVaryValuesNotWorkloadSet) {
  ScratchDir dir("sweep-vary-source");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << kTinyWorkload;
  const fs::path out = dir.path() / "sweep";
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(file.string()) +
                            " --vary steps=3 --vary tiles=4 -j 1 --no-plot -o " + quote(out.string()));
  EXPECT_NE(r.output.find(file.string() + " with --vary steps=3: training.steps: 3 must be a multiple of "
                                          "training.steps_per_execution (2)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("--workload-set"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test
