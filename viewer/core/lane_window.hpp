#pragma once
// Windowed lanes: a track of more than one packed chunk is not loaded whole.
// The lane keeps its chunks' time spans and its busy summary (drawn zoomed
// out); when few enough chunks meet the view, the loader reads just those
// into a LaneWindow, which the UI thread adopts at the start of a frame.
// A lane holds one window at a time, of at most kMaxWindowChunks chunks: the
// memory per lane is bounded whatever the profile's size.
#include "traces/packed_slices.hpp"
#include "viewer/core/slice_columns.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace ipusim::viewer {

// 24 chunks of 65,536 slices: ~1.6 M slices, ~50 MB of rows per lane.
inline constexpr std::size_t kMaxWindowChunks = 24;

// The slices of one lane that meet [from, to): all of them, as rows. For a
// counter lane: its values with ts in [from, to), plus the last one before
// and the first one after (the line continues to them), in ts order.
struct LaneWindow {
  std::int64_t from = 0, to = 0;
  std::vector<std::int64_t> counterTs;
  std::vector<double> counterValue;
  std::vector<SliceColumns> rows;
  std::vector<int> rowDepth;
  StringTable strings;
  std::uint64_t sliceCount = 0;
  std::int64_t firstPhaseId = -1;
  bool covers(double viewFrom, double viewTo) const { return double(from) <= viewFrom && double(to) >= viewTo; }
};

// What to load for a view.
struct WindowPlan {
  std::int64_t from = 0, to = 0;     // the window: the view with a margin of one view width each side, when it fits
  std::vector<std::int64_t> chunks;  // the chunks meeting it, ascending
};

// nullopt when more than `maxChunks` chunks meet the view itself: too many
// slices to draw one by one, the summary stands for them.
std::optional<WindowPlan> planWindow(const std::vector<traces::PackedChunkSpan>& chunks, double viewFrom,
                                     double viewTo, std::size_t maxChunks = kMaxWindowChunks);

}  // namespace ipusim::viewer
