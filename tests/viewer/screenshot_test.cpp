// ipusim-view --screenshot under Xvfb: a real frame with the trace's colours,
// and a clear non-zero exit on profiles it cannot open.
#include "tests/test_build.hpp"
#include "sample_profile.hpp"
#include "viewer/core/colours.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <stb/stb_image.h>  // (its implementation: stb_image_implementation.cpp)

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

namespace ipusim::viewer::screenshot_test {
namespace {

const std::string kViewer = std::string(ipusim::test::binaryDir()) + "/bin/ipusim-view";

bool haveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

struct ViewerRun {
  int status;
  std::string output;
};

ViewerRun runViewer(const std::string& args) {
  const std::string cmd = "xvfb-run -a -s \"-screen 0 1600x900x24\" \"" + kViewer + "\" " + args + " 2>&1";
  ViewerRun r{0, ""};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) r.output += buffer.data();
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  std::size_t count(Rgba c, int tolerance = 6) const {
    const int r = c & 0xff, g = (c >> 8) & 0xff, b = (c >> 16) & 0xff;
    std::size_t n = 0;
    for (std::size_t i = 0; i + 2 < rgb.size(); i += 3)
      if (std::abs(rgb[i] - r) <= tolerance && std::abs(rgb[i + 1] - g) <= tolerance &&
          std::abs(rgb[i + 2] - b) <= tolerance)
        ++n;
    return n;
  }
  // The most pixels of colour `c` on any one image row from `fromY` down (a
  // lane's width in view).
  std::size_t maxRowCount(Rgba c, int fromY, int tolerance = 6) const {
    const int r = c & 0xff, g = (c >> 8) & 0xff, b = (c >> 16) & 0xff;
    std::size_t best = 0;
    for (int y = fromY; y < h; ++y) {
      std::size_t n = 0;
      for (int x = 0; x < w; ++x) {
        const unsigned char* p = &rgb[(std::size_t(y) * w + x) * 3];
        if (std::abs(p[0] - r) <= tolerance && std::abs(p[1] - g) <= tolerance && std::abs(p[2] - b) <= tolerance)
          ++n;
      }
      best = std::max(best, n);
    }
    return best;
  }
};

Image load(const std::string& path) {
  Image img;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &channels, 3);
  if (!data) return img;
  img.rgb.assign(data, data + std::size_t(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

class ScreenshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed: no headless display for screenshots";
    ASSERT_TRUE(std::filesystem::exists(kViewer)) << kViewer << " is not built (build the ipusim-view target)";
    profile_ = scratch_.file("profile.pop");
    testing::writeSampleProfile(profile_);
  }
  testing::ScratchDirectory scratch_;
  std::string profile_;
};

TEST_F(ScreenshotTest, TraceShowsTheCategoryColours) {
  const std::string png = scratch_.file("trace.png");
  const ViewerRun r = runViewer("\"" + profile_ + "\" --screenshot \"" + png + "\" --size 1200x700");
  ASSERT_EQ(r.status, 0) << r.output;
  const Image img = load(png);
  ASSERT_EQ(img.w, 1200);
  ASSERT_EQ(img.h, 700);
  // Not blank: many distinct colours are there, and each category's own.
  EXPECT_GT(img.count(palette::kStreamCopy), 500u) << "StreamCopy salmon";
  EXPECT_GT(img.count(palette::kStreamCopyBegin), 500u) << "Begin grey";
  EXPECT_GT(img.count(palette::kStreamCopyMid), 200u) << "Mid orange";
  EXPECT_GT(img.count(palette::kStreamCopyEnd), 20u) << "End yellow";
  EXPECT_GT(img.count(palette::kExchange), 100u) << "exchange";
  EXPECT_GT(img.count(computeColour(0)) + img.count(computeColour(1)), 500u) << "compute pink";
  EXPECT_GT(img.count(palette::kEngineRun), 1000u) << "Engine::run bar";
}

TEST_F(ScreenshotTest, RangeAndMemoryViewsRender) {
  const std::string range = scratch_.file("range.png");
  ViewerRun r = runViewer("\"" + profile_ + "\" --screenshot \"" + range + "\" --range 380:720 --size 1200x700");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GT(load(range).count(palette::kStreamCopyMid), 1000u);  // zoomed in, Mid is wide
  const std::string memory = scratch_.file("memory.png");
  r = runViewer("\"" + profile_ + "\" --screenshot \"" + memory + "\" --view memory --size 1200x700");
  ASSERT_EQ(r.status, 0) << r.output;
  const Image img = load(memory);
  // Each category in its own colour: weights and activations both show.
  EXPECT_GT(img.count(memoryCategoryColour("weights", 0)), 1000u) << "weights bars";
  EXPECT_GT(img.count(memoryCategoryColour("activations", 1)), 100u) << "activations bars";
  EXPECT_EQ(img.count(computeColour(0)), 0u) << "no compute pink in the memory view";
  EXPECT_GT(img.count(rgb(200, 0, 0)), 500u) << "capacity line";
}

TEST_F(ScreenshotTest, AnalysisTabsRenderAndSelectNamesWhatItFound) {
  for (const char* view : {"operations", "liveness", "insights"}) {
    const std::string png = scratch_.file(std::string(view) + ".png");
    const ViewerRun r = runViewer("\"" + profile_ + "\" --screenshot \"" + png + "\" --view " + view + " --size 1000x600");
    ASSERT_EQ(r.status, 0) << view << ": " << r.output;
    EXPECT_EQ(load(png).w, 1000) << view;
  }
  const std::string flat = scratch_.file("flat.png");
  ViewerRun r = runViewer("\"" + profile_ + "\" --screenshot \"" + flat + "\" --flat --size 1000x600");
  ASSERT_EQ(r.status, 0) << r.output;
  r = runViewer("\"" + profile_ + "\" --screenshot \"" + scratch_.file("none.png") + "\" --select no-such-slice --size 1000x600");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--select: no slice named like 'no-such-slice'"), std::string::npos) << r.output;
}

TEST_F(ScreenshotTest, CompareStacksTwoProfiles) {
  const std::string png = scratch_.file("compare.png");
  const ViewerRun r = runViewer("\"" + profile_ + "\" \"" + profile_ + "\" --screenshot \"" + png +
                          "\" --view compare --size 1400x900");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GT(load(png).count(palette::kStreamCopyBegin), 1000u);
}

TEST_F(ScreenshotTest, UnopenableProfilesExitNonZeroWithTheReason) {
  const std::string png = scratch_.file("never.png");
  // Missing file.
  ViewerRun r = runViewer("\"" + scratch_.file("missing.pop") + "\" --screenshot \"" + png + "\"");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("missing.pop"), std::string::npos) << r.output;
  // Not SQLite.
  const std::string text = scratch_.file("text.pop");
  std::ofstream(text) << "this is not a database";
  r = runViewer("\"" + text + "\" --screenshot \"" + png + "\"");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("text.pop"), std::string::npos) << r.output;
  // Truncated: the first 2 KiB of a real profile.
  const std::string truncated = scratch_.file("truncated.pop");
  {
    std::ifstream in(profile_, std::ios::binary);
    std::string bytes(2048, '\0');
    in.read(bytes.data(), bytes.size());
    std::ofstream(truncated, std::ios::binary).write(bytes.data(), in.gcount());
  }
  r = runViewer("\"" + truncated + "\" --screenshot \"" + png + "\"");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("truncated.pop"), std::string::npos) << r.output;
  // A bad --range is an error naming the option.
  r = runViewer("\"" + profile_ + "\" --screenshot \"" + png + "\" --range 9:3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--range"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(png));
}

// A profile that passes the checks made on opening but fails those run
// after it (the row counts) is refused like one that does not open: exit 2,
// the file and the failed check named, no picture.
TEST_F(ScreenshotTest, AProfileFailingTheChecksAfterOpeningIsRefused) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(profile_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM counters WHERE ts = 900", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const std::string png = scratch_.file("damaged.png");
  const ViewerRun r = runViewer("\"" + profile_ + "\" --screenshot \"" + png + "\"");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(profile_ + ": damaged profile: table counters has 1 rows, its writer recorded 2"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(png));
}

// At 1200x700 the plot is about 596 px wide (window less the side panel and
// the lane labels). The multi-run profile has runs of 1,000 cycles 200 apart,
// #0-#2 captured, #3 not: how wide the Engine::run bars draw says which
// cycles are framed.
class RunFramingScreenshotTest : public ScreenshotTest {
 protected:
  void SetUp() override {
    ScreenshotTest::SetUp();
    if (IsSkipped()) return;
    multiRun_ = scratch_.file("runs.pop");
    testing::writeMultiRunProfile(multiRun_);
  }
  std::size_t engineRunWidth(const std::string& extraArgs, const std::string& name) {
    const std::string png = scratch_.file(name);
    const ViewerRun r = runViewer("\"" + multiRun_ + "\" --screenshot \"" + png + "\" --size 1200x700 " + extraArgs);
    EXPECT_EQ(r.status, 0) << r.output;
    // Below the tab bar, overview strip (the whole profile) and ruler.
    return load(png).maxRowCount(palette::kEngineRun, 90);
  }
  std::string multiRun_;
};

TEST_F(RunFramingScreenshotTest, OpensOnTheFirstTwoCapturedRuns) {
  // Default: runs #0-#1 (2,000 of 2,266 cycles shown: ~526 px of bars);
  // the whole profile [100, 4700] would show 3,000 of 4,692 (~381 px).
  const std::size_t opening = engineRunWidth("", "opening.png");
  const std::size_t whole = engineRunWidth("--range 54:4746", "whole.png");
  EXPECT_GT(opening, 480u);
  EXPECT_LT(opening, 560u);
  EXPECT_GT(whole, 340u);
  EXPECT_LT(whole, 420u);
}

TEST_F(RunFramingScreenshotTest, RangeOfRunsFramesThoseRuns) {
  // runs:2-3 frames [2500, 4700): only #2 has a bar (~265 px), #3 is outlined.
  const std::size_t two = engineRunWidth("--range runs:2-3", "runs23.png");
  EXPECT_GT(two, 230u);
  EXPECT_LT(two, 300u);
  // runs:1 alone: its bar fills the plot but for the 1.5 % margins (~578 px).
  const std::size_t one = engineRunWidth("--range runs:1", "run1.png");
  EXPECT_GT(one, 550u);
}

TEST_F(RunFramingScreenshotTest, AMissingRunIsAnErrorNamingTheProfileAndItsRuns) {
  const std::string png = scratch_.file("never.png");
  ViewerRun r = runViewer("\"" + multiRun_ + "\" --screenshot \"" + png + "\" --range runs:3-9");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("runs.pop"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("run 9 does not exist (the profile has runs 0-3)"), std::string::npos) << r.output;
  r = runViewer("\"" + multiRun_ + "\" --screenshot \"" + png + "\" --range runs:2-x");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("'runs:2-x'"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(png));
}

}  // namespace
}  // namespace ipusim::viewer::screenshot_test
