#pragma once
// BusySummary: one depth of a windowed lane zoomed out, drawn from the
// profile's slice_summary (busy cycles per bucket) instead of its slices.
// On load the buckets are merged pairwise into a pyramid, so a frame reads a
// couple of buckets per pixel column at any zoom: the cost follows pixels.
#include "traces/slice_summary.hpp"
#include "viewer/core/time_axis.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::viewer {

// A run of pixel columns with the same category and busy level.
struct BusySpan {
  double x0 = 0, x1 = 0;      // pixels of the axis, x0 inclusive, x1 exclusive
  float busy = 0;             // share of the span's cycles covered, quantised to eighths
  std::uint16_t category = 0; // index into BusySummary::categoryNames()
};

class BusySummary {
 public:
  static constexpr std::uint16_t kNoCategory = 0xffff;

  // `strings`: the profile's slice_strings, which the summary's categories index.
  BusySummary(const traces::SliceSummary& summary, const std::vector<std::string>& strings);

  std::int64_t depth() const { return depth_; }
  std::int64_t originTs() const { return origin_; }
  std::int64_t endTs() const;
  const std::string& categoryName(std::uint16_t index) const { return names_.at(index); }

  // Appends the busy spans visible on `axis` (idle pixel columns make none).
  void spans(const TimeAxis& axis, std::vector<BusySpan>& out) const;

 private:
  struct Level {
    std::int64_t bucketCycles = 1;
    std::vector<std::uint64_t> busy;
    std::vector<std::uint16_t> category;
  };
  std::int64_t depth_ = 0, origin_ = 0;
  std::vector<Level> levels_;  // levels_[0]: the file's buckets; each next one twice as wide
  std::vector<std::string> names_;
};

}  // namespace ipusim::viewer
