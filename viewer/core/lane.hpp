#pragma once
// Lane: one horizontal band of the execution trace, backed by one profile
// track. A slice lane holds its slices column-wise, one SliceColumns per row
// (nesting depth, plus an extra row wherever slices of one depth overlap); a
// counter lane holds a value series. Lanes are created empty when a profile
// opens and filled by LaneLoader on a background thread: readers check
// `loaded` (acquire) before touching the data, the loader writes the data and
// then sets it (release), and never touches a lane again.
#include "traces/packed_slices.hpp"
#include "viewer/core/busy_summary.hpp"
#include "viewer/core/counter_pyramid.hpp"
#include "viewer/core/lane_window.hpp"
#include "viewer/core/slice_columns.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::viewer {

enum class LaneKind { Slices, Counter };

struct Lane {
  LaneKind kind = LaneKind::Slices;
  std::int64_t trackId = -1;
  std::string trackKind;  // engine, host, stream, program, bsp, counter, ...
  std::string title;
  std::int64_t ipu = -1;

  // Slice lanes.
  std::vector<SliceColumns> rows;
  std::vector<int> rowDepth;  // nesting depth drawn by each row
  StringTable strings;        // slice names and categories
  std::uint64_t sliceCount = 0;
  std::int64_t firstPhaseId = -1;  // BSP lanes: the phase of the first slice that has one

  // Counter lanes, ordered by ts: every value, or with a summary the values
  // of the window adopted last (`window`, below).
  std::vector<std::int64_t> counterTs;
  std::vector<double> counterValue;
  double counterMin = 0, counterMax = 0;
  // A counter track with a counter_summary: drawn from it zoomed out; its
  // values are read by window (planCounterWindow) through the same
  // hand-over as slice windows. Set by the loader before `loaded`.
  std::optional<CounterPyramid> counterSummary;

  // Windowed slice lanes (lane_window.hpp): a track of several packed
  // chunks. The loader sets these before `loaded`; `rows` then start empty
  // (one per summarised depth) and hold a window once one is adopted.
  bool windowed = false;
  std::vector<traces::PackedChunkSpan> chunks;
  std::vector<BusySummary> summary;  // by depth
  // UI thread only: the cycles `rows` (or the counter values) hold, and the last window asked for.
  std::optional<std::pair<std::int64_t, std::int64_t>> window, requested;
  // Hand-over: the loader leaves a finished window in `pendingWindow`; the UI
  // thread swaps it in and leaves the old rows in `retiredWindow`, which the
  // loader frees (unmapping megabytes on the UI thread stalls frames).
  std::mutex windowMutex;
  std::unique_ptr<LaneWindow> pendingWindow, retiredWindow;
  std::string windowError;  // a window that could not be read (under windowMutex)

  std::atomic<bool> visible{true};  // the loader skips hidden lanes until shown
  std::atomic<bool> loaded{false};
  std::string loadError;            // set instead of data when loading failed

  bool isLoaded() const { return loaded.load(std::memory_order_acquire); }
  // What went wrong loading the lane, or else its last window; "" when
  // nothing did. UI thread.
  std::string failure() {
    if (isLoaded() && !loadError.empty()) return loadError;
    std::lock_guard<std::mutex> lock(windowMutex);
    return windowError;
  }
  std::size_t rowCount() const { return isLoaded() ? std::max(rows.size(), summary.size()) : 1; }
  // Whether the lane's data arrives by window (slices or counter values).
  bool loadsByWindow() const { return windowed || counterSummary.has_value(); }
};

}  // namespace ipusim::viewer
