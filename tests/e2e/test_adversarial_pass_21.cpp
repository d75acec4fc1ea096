// Found by the twenty-first adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_21 {
namespace {

// Three 512-wide dense layers (a, b, out) at batch 64 on `tiles` tiles: too
// big for 8 tiles once compiled, and for 3 before compiling.
std::string wideMlp(const fs::path& dir, int tiles, const std::string& task) {
  const fs::path file = dir / "w.json";
  std::ofstream(file) << R"({"task": ")" << task << R"(",
    "dataset": {"format": "synthetic", "batch_size": 64, "input_shape": [512], "classes": 10, "examples": 640},
    "model": {"layers": [{"type": "dense", "units": 512, "activation": "relu", "name": "a"},
                         {"type": "dense", "units": 512, "activation": "relu", "name": "b"},
                         {"type": "dense", "units": 10, "activation": "softmax", "name": "out"}]},
    "optimizer": {"type": "sgd"}, "training": {"steps": 10, "steps_per_execution": 10},
    "ipu": {"tiles": )" << tiles << "}}";
  return file.string();
}

// The out-of-memory summary's worst tile said "at its peak (program step
// 52), 409600 bytes not always live" beside "not-always-live peak 429184":
// step 52 of `report --liveness` (which counts syncs) was another program
// than the one whose tensors it listed, and the two figures read as one
// figure twice. No step number now, and the layout's figure is told apart.
// The estimate before compiling said it counted the "largest weight
// gradient ... and the activations the backward pass keeps" for predict
// too, where its sum has neither: it says what it counts now.
TEST(AdversarialPass21, OutOfMemorySummariesSayWhatTheirFiguresCount) {
  ScratchDir dir("oom");
  const auto r = runCommand(ipusimBinary() + " compile " + quote(wideMlp(dir.path(), 8, "fit")));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("always-live 281680, not-always-live peak 429184)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("weights 265256; at its peak, 409600 bytes not always live at once (laid out with their "
                          "alignment and the gaps between them: 429184): temporaries 229376,"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("program step"), std::string::npos) << r.output;
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(wideMlp(dir.path(), 3, "predict"))),
                "even spread evenly over every tile, its weights, stream buffers and outputs (2255400 bytes; no "
                "backward pass in predict) need 751800 bytes per tile");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_21
