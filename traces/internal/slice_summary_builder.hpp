#pragma once
// Internal to traces/: builds the slice_summary rows of one track from its
// slices (any order), at commit. Bucket width: the track's extent over
// min(slice count, kMaxBuckets) buckets, so a small track gets no more
// buckets than slices and a huge one at most kMaxBuckets per depth.
#include "traces/slice_summary.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::traces::internal {

class SliceSummaryBuilder {
 public:
  // 131,072 buckets: a 1,600 px view of the whole track has ~80 per pixel,
  // and one still covers under a pixel when zoomed in until only a few dozen
  // of the track's 65,536-slice chunks are in view (the viewer then loads them).
  static constexpr std::int64_t kMaxBuckets = 131072;
  // Deeper slices are left out of the summary (the viewer shows them only
  // when zoomed in, from the chunks).
  static constexpr std::int64_t kMaxDepths = 16;

  SliceSummaryBuilder(std::int64_t minTs, std::int64_t maxEnd, std::int64_t sliceCount);
  void add(std::int64_t ts, std::int64_t dur, std::int64_t depth, std::uint32_t category);
  // One summary per depth that has slices, by depth.
  std::vector<SliceSummary> take();

 private:
  struct Depth {
    std::vector<std::uint64_t> busy, best;  // best: the largest single overlap so far
    std::vector<std::uint32_t> category;
  };
  std::int64_t origin_, bucketCycles_, buckets_;
  std::vector<Depth> depths_;
};

}  // namespace ipusim::traces::internal
