#include "traces/internal/slice_summary_builder.hpp"

#include <algorithm>

namespace ipusim::traces::internal {

SliceSummaryBuilder::SliceSummaryBuilder(std::int64_t minTs, std::int64_t maxEnd, std::int64_t sliceCount)
    : origin_(minTs) {
  const std::int64_t extent = std::max<std::int64_t>(1, maxEnd - minTs);
  const std::int64_t wanted = std::clamp<std::int64_t>(sliceCount, 1, kMaxBuckets);
  bucketCycles_ = std::max<std::int64_t>(1, (extent + wanted - 1) / wanted);
  buckets_ = (extent + bucketCycles_ - 1) / bucketCycles_;
}

void SliceSummaryBuilder::add(std::int64_t ts, std::int64_t dur, std::int64_t depth, std::uint32_t category) {
  if (depth < 0 || depth >= kMaxDepths || dur <= 0) return;  // an instant covers no cycles
  if (depth >= std::int64_t(depths_.size())) depths_.resize(std::size_t(depth) + 1);
  Depth& d = depths_[std::size_t(depth)];
  if (d.busy.empty()) {
    d.busy.assign(std::size_t(buckets_), 0);
    d.best.assign(std::size_t(buckets_), 0);
    d.category.assign(std::size_t(buckets_), SliceSummary::kNoCategory);
  }
  const std::int64_t end = ts + dur;
  // Clamped to the extent given: a slice outside it (none, when minTs and
  // maxEnd are the track's) covers nothing here.
  const std::int64_t first = std::max<std::int64_t>(0, (ts - origin_) / bucketCycles_);
  const std::int64_t last = std::min(buckets_ - 1, (end - 1 - origin_) / bucketCycles_);
  for (std::int64_t b = first; b <= last; ++b) {
    const std::int64_t from = std::max(ts, origin_ + b * bucketCycles_);
    const std::int64_t to = std::min(end, origin_ + (b + 1) * bucketCycles_);
    if (to <= from) continue;
    const auto overlap = std::uint64_t(to - from);
    const auto i = std::size_t(b);
    d.busy[i] += overlap;
    if (overlap > d.best[i]) {
      d.best[i] = overlap;
      d.category[i] = category;
    }
  }
}

std::vector<SliceSummary> SliceSummaryBuilder::take() {
  std::vector<SliceSummary> out;
  const auto cap = std::uint64_t(std::min<std::int64_t>(bucketCycles_, 0xffffffffLL));
  for (std::size_t depth = 0; depth < depths_.size(); ++depth) {
    Depth& d = depths_[depth];
    if (d.busy.empty()) continue;
    SliceSummary s;
    s.depth = std::int64_t(depth);
    s.originTs = origin_;
    s.bucketCycles = bucketCycles_;
    s.busy.resize(d.busy.size());
    for (std::size_t b = 0; b < d.busy.size(); ++b) s.busy[b] = std::uint32_t(std::min(d.busy[b], cap));
    s.category = std::move(d.category);
    out.push_back(std::move(s));
  }
  depths_.clear();
  return out;
}

}  // namespace ipusim::traces::internal
