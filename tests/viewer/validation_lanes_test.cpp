// Fit with validation in the viewer: a profile `ipusim run` writes for a
// training with validation opens with a counter lane per outfed value, the
// training's loss and accuracy and the validation's val_loss and
// val_accuracy, each with its own values, and the trace draws them.
#include "tests/test_build.hpp"
#include "sample_profile.hpp"
#include "viewer/core/colours.hpp"
#include "viewer/core/profile_session.hpp"

#include <gtest/gtest.h>

#include <stb/stb_image.h>  // (its implementation: stb_image_implementation.cpp)

#include <cstdlib>
#include <fstream>
#include <map>

namespace ipusim::viewer::validation_lanes_test {
namespace {

const std::string kBin = std::string(ipusim::test::binaryDir()) + "/bin/";

// 24 steps in runs of 4: epochs of 8 steps, each followed by a validation of 4 steps.
std::string writeProfile(const testing::ScratchDirectory& scratch) {
  const std::string workload = scratch.file("validating.json");
  std::ofstream(workload) << R"({"name": "validating",
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "sgd", "learning_rate": 0.05},
    "training": {"steps": 24, "steps_per_execution": 4, "steps_per_epoch": 8, "validation": {"steps": 4}},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})";
  const std::string command = "POPLAR_ENGINE_OPTIONS='{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" +
                              scratch.file("reports") + "\"}' \"" + kBin + "ipusim\" run \"" + workload + "\" >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return scratch.file("reports/profile.pop");
}

TEST(ValidationLanes, TheTrainingAndValidationCountersEachGetALaneWithTheirValues) {
  testing::ScratchDirectory scratch;
  ProfileSession session(writeProfile(scratch), /*loadInBackground=*/false);
  std::map<std::string, std::size_t> values;
  for (const auto& lane : session.lanes())
    if (lane->kind == LaneKind::Counter) values[lane->title] = lane->counterTs.size();
  EXPECT_EQ(values, (std::map<std::string, std::size_t>{
                        {"loss", 24}, {"accuracy", 24}, {"val_loss", 12}, {"val_accuracy", 12}}));
  std::vector<std::string> runs;
  for (const auto& run : session.runs()) runs.push_back(run.name);
  EXPECT_EQ(runs, (std::vector<std::string>{"train", "train", "validation", "train", "train", "validation", "train",
                                            "train", "validation"}));
}

// ("Screenshot" in its name: .ci/sanitize runs the viewer's screenshots without LeakSanitizer.)
TEST(ValidationLanes, TheScreenshotDrawsBothLossTracks) {
  if (std::system("command -v xvfb-run >/dev/null 2>&1") != 0) GTEST_SKIP() << "xvfb-run is not installed";
  testing::ScratchDirectory scratch;
  const std::string profile = writeProfile(scratch), png = scratch.file("trace.png");
  // The whole job in view, every run: the counter lanes' lines span it.
  const std::string command = "xvfb-run -a -s \"-screen 0 1600x1200x24\" \"" + kBin + "ipusim-view\" \"" + profile +
                              "\" --screenshot \"" + png + "\" --range runs:0-8 --size 1200x1100 >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  int w = 0, h = 0, channels = 0;
  unsigned char* rgb = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(rgb, nullptr);
  // Rows holding the counter line's colour, grouped into bands (one per lane drawn).
  const int r = palette::kCounterLine & 0xff, g = (palette::kCounterLine >> 8) & 0xff, b = (palette::kCounterLine >> 16) & 0xff;
  int bands = 0;
  bool inBand = false;
  for (int y = 0; y < h; ++y) {
    int n = 0;
    for (int x = 0; x < w; ++x) {
      const unsigned char* p = rgb + (std::size_t(y) * w + x) * 3;
      n += std::abs(p[0] - r) <= 6 && std::abs(p[1] - g) <= 6 && std::abs(p[2] - b) <= 6;
    }
    if (n > 0 && !inBand) ++bands;
    inBand = n > 0;
  }
  stbi_image_free(rgb);
  EXPECT_GE(bands, 4) << "a line in each of the four counter lanes (loss, accuracy, val_loss, val_accuracy)";
}

}  // namespace
}  // namespace ipusim::viewer::validation_lanes_test
