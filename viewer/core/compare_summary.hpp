#pragma once
// Comparison of two profiles (the with/without feeds story): a table of
// metrics side by side with their deltas.
#include "viewer/core/profile_session.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ipusim::viewer {

struct CompareRow {
  std::string metric;
  double a = 0, b = 0;
  bool percent = false;  // a and b are fractions shown as %; NaN: not measured (no captured run)
  double delta() const { return b - a; }
  // b / a, 0 when a is 0.
  double ratio() const { return a != 0 ? b / a : 0.0; }
};

// Total time (cycles, seconds: ProfileSession::jobCycles), runs, steps, steps
// per run, cycles per step, captured runs, IPU waiting for the host
// (ProfileSession::hostWait, the job-level figure of `report` and `compare`),
// the StreamCopy Begin share, compute/IO overlap, the fullest tile's peak
// (the memory view's figure) and per IPU compute /
// exchange / sync / stream copy / idle proportions over each profile's
// statisticsWindow.
std::vector<CompareRow> compareProfiles(const ProfileSession& a, const ProfileSession& b);

// Where the proportions are measured: from the start of the first captured
// run to the end of the last one (only there does the profile hold slices:
// counting uncaptured runs would read as idle), else the whole profile.
std::pair<std::int64_t, std::int64_t> statisticsWindow(const ProfileSession& s);

}  // namespace ipusim::viewer
