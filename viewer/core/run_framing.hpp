#pragma once
// Run framing: which stretch of cycles the execution trace opens on. A
// profile holds detail only for its first executionProfileProgramRunCount
// Engine::run calls, so fitting the whole profile shows mostly empty runs;
// like PopVision, the trace opens on the first captured runs instead. Also
// parses the `--range` argument (cycles FROM:TO, or runs:A-B).
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::viewer {

// A stretch of device cycles: `shown` is what the axis fits (the runs plus a
// margin), `runs` the runs' own extent, [first run start, last run end).
struct RunWindow {
  double shownFrom = 0, shownTo = 0;
  std::int64_t runsFrom = 0, runsTo = 0;
  double span() const { return shownTo - shownFrom; }
};

// The margin each side, as a share of the runs' extent.
inline constexpr double kRunMargin = 0.015;

// Runs firstRun..lastRun (Engine::run indices, inclusive), captured or not.
// Throws std::invalid_argument naming the runs the profile has when one of
// them is missing or firstRun > lastRun.
RunWindow windowForRuns(const std::vector<traces::RunRow>& runs, std::int64_t firstRun,
                        std::int64_t lastRun, double margin = kRunMargin);

// The first `count` captured runs (in run order; fewer if fewer are
// captured). Nothing when no run is captured: the caller fits everything.
std::optional<RunWindow> capturedRunsWindow(const std::vector<traces::RunRow>& runs, std::size_t count = 2,
                                            double margin = kRunMargin);

// Two profiles stacked and aligned at their first captured run: the span
// both show is the longer of their captured-runs windows, so the faster
// profile visibly covers more of its run in the same time. Returns the
// window for profile A (B follows A's offset from its own anchor); nothing
// when neither has a captured run.
std::optional<RunWindow> compareWindow(const std::vector<traces::RunRow>& a,
                                       const std::vector<traces::RunRow>& b, std::size_t count = 2,
                                       double margin = kRunMargin);

// Where a profile's story starts, for aligning two profiles: the start of
// its first captured run, else of its first run, else `fallback`.
std::int64_t alignmentAnchor(const std::vector<traces::RunRow>& runs, std::int64_t fallback);

// `--range` text: "FROM:TO" in cycles (FROM < TO) or "runs:A-B" / "runs:A"
// in Engine::run indices (A <= B). Throws std::invalid_argument quoting the
// text and both accepted forms.
struct RangeSpec {
  enum class Unit { Cycles, Runs } unit = Unit::Cycles;
  std::int64_t from = 0, to = 0;  // cycles [from, to) or runs from..to inclusive
};
RangeSpec parseRangeSpec(const std::string& text);

}  // namespace ipusim::viewer
