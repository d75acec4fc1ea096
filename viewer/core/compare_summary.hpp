#pragma once
// Comparison of two profiles (the with/without feeds story): a table of
// metrics side by side with their deltas.
#include "viewer/core/profile_session.hpp"

#include <string>
#include <vector>

namespace ipusim::viewer {

struct CompareRow {
  std::string metric;
  double a = 0, b = 0;
  bool percent = false;  // a and b are fractions shown as %
  double delta() const { return b - a; }
  // b / a, 0 when a is 0.
  double ratio() const { return a != 0 ? b / a : 0.0; }
};

// Total time (cycles, seconds), runs, steps, steps per run, and per IPU the
// compute / exchange / sync / stream copy / idle proportions of the whole run.
std::vector<CompareRow> compareProfiles(const ProfileSession& a, const ProfileSession& b);

}  // namespace ipusim::viewer
