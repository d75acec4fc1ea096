#pragma once
// SliceSummary: how busy one nesting depth of one track is over time, in
// equal buckets (the slice_summary table, SCHEMA.md). The viewer draws a
// zoomed-out track from it instead of loading millions of slices: per
// bucket, the cycles covered and the category covering most of it.
#include <cstdint>
#include <vector>

namespace ipusim::traces {

struct SliceSummary {
  static constexpr std::uint32_t kNoCategory = 0xffffffffu;  // an empty bucket

  std::int64_t depth = 0;
  std::int64_t originTs = 0;      // cycles: start of bucket 0
  std::int64_t bucketCycles = 1;  // width of every bucket, >= 1
  // Per bucket: cycles covered by the depth's slices (each slice clipped to
  // the bucket; overlapping slices of one depth add up, capped at bucketCycles).
  std::vector<std::uint32_t> busy;
  // Per bucket: slice_strings id of the category of the slice covering the
  // most of it, kNoCategory when nothing does.
  std::vector<std::uint32_t> category;

  std::size_t size() const { return busy.size(); }
  std::int64_t endTs() const { return originTs + bucketCycles * std::int64_t(busy.size()); }
};

}  // namespace ipusim::traces
