#pragma once
// TraceView: the execution trace of one profile drawn with Dear ImGui:
// overview strip, cycle ruler (time alongside), lanes (flame graphs, BSP,
// counters) and per IPU a tile view; navigation, hover, selection and range
// selection. Geometry and level of detail come from viewer/core.
#include "profiler/analysis/range_stats.hpp"
#include "viewer/core/level_of_detail.hpp"
#include "viewer/core/profile_session.hpp"
#include "viewer/core/slice_search.hpp"
#include "viewer/core/tile_rows.hpp"
#include "viewer/core/time_axis.hpp"

#include <imgui.h>

#include <future>
#include <optional>
#include <unordered_set>

namespace ipusim::viewer {

struct SliceRef {
  std::size_t lane = 0, row = 0, index = 0;
  bool operator==(const SliceRef& o) const { return lane == o.lane && row == o.row && index == o.index; }
};

class TraceView {
 public:
  explicit TraceView(ProfileSession& session);

  ProfileSession& session() { return session_; }
  TimeAxis& axis() { return axis_; }
  // Fit the whole profile, captured runs or not.
  void fitAll();
  // Fit the first two captured Engine::run calls (the opening view, as in
  // PopVision); the whole profile when none is captured.
  void fitCapturedRuns();
  void setRange(std::int64_t from, std::int64_t to);  // shows and selects it
  // Shows runs firstRun..lastRun (with a margin) and selects their extent.
  // Throws std::invalid_argument naming the profile when a run is missing.
  void setRunRange(std::int64_t firstRun, std::int64_t lastRun);
  // The opening view: the first two captured runs, selected so that their
  // statistics fill the side panel (computed at once, or on a worker thread).
  void openOnCapturedRuns(bool statsInBackground);
  // Forgets the opening selection if the user has not replaced it (the
  // compare view frames both profiles on one span: per-profile selections
  // of different spans would mislead there).
  void dropOpeningSelection();
  // Shows [from, to) from the next frame on (the width is known when drawing).
  void showCycles(double from, double to) { pendingFit_ = std::make_pair(from, to); }

  // Draws into the current ImGui window, filling `size`. Returns true when
  // the view changed (zoom/pan), for synchronised comparison.
  bool draw(const char* id, ImVec2 size, bool compact = false);
  void drawSidePanel();

  // Highlight the slices of a program subtree (-1: none).
  void highlightProgram(std::int64_t programId);
  // Highlight the slices of these programs (an operations summary row).
  void highlightPrograms(const std::unordered_set<std::int64_t>& programIds) { highlighted_ = programIds; }
  // Searches slice names (loaded lanes) and selects the first match; returns
  // the number of matches. next/previousMatch step through them.
  std::size_t search(const std::string& query);
  void nextMatch();
  void previousMatch();
  // Selects a slice (its details in the side panel) and shows it centred.
  void selectSlice(const SliceRef& slice);
  // Flat view: each program lane drawn on one row (the innermost step in
  // front), instead of the flame graph of nested program steps.
  void setFlat(bool flat) { flat_ = flat; }
  bool flat() const { return flat_; }
  std::optional<std::pair<std::int64_t, std::int64_t>> selection() const { return selection_; }
  std::int64_t framesDrawnBlocks() const { return lastBlockCount_; }

 private:
  float laneHeight(const Lane& lane, bool compact) const;
  void drawOverview(ImDrawList* dl, ImVec2 origin, ImVec2 size);
  void drawRuler(ImDrawList* dl, ImVec2 origin, float width);
  void drawSliceLane(ImDrawList* dl, std::size_t laneIndex, ImVec2 origin, float width, float rowH);
  // A windowed lane zoomed out (or its window still loading): its busy summary.
  void drawSummaryLane(ImDrawList* dl, const Lane& lane, ImVec2 origin, float width, float rowH);
  // A windowed lane: whether its rows hold the view; asks for them when not.
  bool windowHoldsView(std::size_t laneIndex);
  // After a lane's rows changed: selection and search matches point into them.
  void windowAdopted(std::size_t laneIndex);
  void drawUncapturedRuns(ImDrawList* dl, ImVec2 origin, float width, float rowH);
  void drawCounterLane(ImDrawList* dl, std::size_t laneIndex, ImVec2 origin, ImVec2 size);
  void drawTileView(ImDrawList* dl, const Lane& bspLane, ImVec2 origin, ImVec2 size);
  void handleInput(ImVec2 plotOrigin, ImVec2 plotSize, bool& changed);
  // Synchronous (setRange, screenshots) or on a worker thread (a drag in the
  // UI: a whole-run selection of a huge profile takes seconds).
  void updateStats(bool inBackground = false);
  void collectStats();

  ProfileSession& session_;
  TimeAxis axis_;
  bool fitted_ = false;
  std::optional<std::pair<double, double>> pendingFit_;  // applied once the width is known
  FoldOptions fold_;
  std::vector<DrawBlock> blocks_;  // scratch, reused every row
  std::vector<BusySpan> spans_;    // scratch, for summaries
  std::optional<SliceRef> hovered_, selected_;
  std::optional<SliceDetails> hoveredDetails_, selectedDetails_;
  std::int64_t hoveredSliceId_ = -1, selectedSliceId_ = -1;
  std::string hoveredFold_;
  std::optional<std::pair<std::int64_t, std::int64_t>> selection_;
  std::optional<std::pair<std::int64_t, std::int64_t>> openingSelection_;
  std::optional<double> selectionDragStart_;
  std::optional<profiler::RangeStats> stats_;
  std::string statsError_;
  // The worker's result (its own ProfileReader: one per thread), and the
  // selection it is for; a newer selection waits in statsQueued_.
  std::future<profiler::RangeStats> statsJob_;
  std::pair<std::int64_t, std::int64_t> statsJobRange_{0, 0};
  std::optional<std::pair<std::int64_t, std::int64_t>> statsQueued_;
  std::unordered_set<std::int64_t> highlighted_;
  std::vector<TileWindow> tileWindows_;  // per lane index (BSP lanes with tile detail)
  std::vector<char> hasTiles_;           // per lane index, -1 unknown
  std::int64_t lastBlockCount_ = 0;
  bool flat_ = false;
  SliceSearch search_;
  char searchInput_[256] = "";
  float labelWidth_ = 200;
};

}  // namespace ipusim::viewer
