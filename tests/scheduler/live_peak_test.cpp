#include "scheduler/planning/live_peak.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler::live_peak_test {
namespace {

ir::Tensor tensor(ir::Id id, const std::string& name, const std::string& category, bool alwaysLive,
                  std::vector<ir::TileInterval> mapping) {
  ir::Tensor t;
  t.id = id;
  t.name = name;
  t.category = category;
  t.alwaysLive = alwaysLive;
  t.dtype = ir::DType::Float;
  t.mapping = std::move(mapping);
  return t;
}

// Steps 0..3 on tile 0: 'kept' (activations, 100 B) lives 0-2, 'blocks'
// (temporaries, 300 B) 1-1, 'late' (temporaries, 360 B) 3-3; the weights are
// always live and 'elsewhere' lies on tile 1. The peak is step 1's 400 B,
// not step 3's 360 B, and not the sum over the step (760 B).
ir::Executable fourSteps() {
  ir::Executable exe;
  exe.tensors.push_back(tensor(0, "weights", "weights", true, {{0, 0, 500}}));
  exe.tensors.push_back(tensor(1, "kept", "activations", false, {{0, 0, 25}}));
  exe.tensors.push_back(tensor(2, "blocks", "temporaries", false, {{0, 0, 50}, {0, 60, 85}}));
  exe.tensors.push_back(tensor(3, "late", "temporaries", false, {{0, 0, 90}}));
  exe.tensors.push_back(tensor(4, "elsewhere", "temporaries", false, {{1, 0, 1000}}));
  return exe;
}
const std::vector<UseSpan> kSpans = {{0, 3}, {0, 2}, {1, 1}, {3, 3}, {1, 1}};

TEST(LivePeak, IsTheStepWhereTheTilesNotAlwaysLiveBytesSumHighest) {
  const ir::Executable exe = fourSteps();
  const LivePeak peak = livePeakOnTile(exe, kSpans, 0);
  EXPECT_EQ(peak.step, 1u);
  EXPECT_EQ(peak.bytes, 400u);
  ASSERT_EQ(peak.categories.size(), 2u);
  EXPECT_EQ(peak.categories[0], (std::pair<std::string, std::uint64_t>{"temporaries", 300}));
  EXPECT_EQ(peak.categories[1], (std::pair<std::string, std::uint64_t>{"activations", 100}));
  ASSERT_EQ(peak.live.size(), 2u);
  EXPECT_EQ(peak.live[0].first, 2u);
  EXPECT_EQ(describeLivePeak(exe, peak),
            "at its peak, 400 bytes not always live at once: temporaries 300, activations 100; largest: "
            "'blocks' (temporaries, 300 bytes), 'kept' (activations, 100 bytes)");
  // Another tile, and a tile holding nothing but always-live data.
  EXPECT_EQ(livePeakOnTile(exe, kSpans, 1).bytes, 4000u);
  EXPECT_EQ(livePeakOnTile(exe, kSpans, 2).bytes, 0u);
  EXPECT_EQ(describeLivePeak(exe, livePeakOnTile(exe, kSpans, 2)), "");
}

}  // namespace
}  // namespace ipusim::scheduler::live_peak_test
