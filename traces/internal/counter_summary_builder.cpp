#include "traces/internal/counter_summary_builder.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::traces::internal {

CounterSummaryBuilder::CounterSummaryBuilder(std::int64_t minTs, std::int64_t maxTs, std::int64_t valueCount) {
  // ts is an instant: a track whose values all share one ts spans 1 cycle.
  const std::int64_t extent = std::max<std::int64_t>(1, maxTs - minTs + 1);
  const std::int64_t wanted = std::clamp<std::int64_t>(valueCount, 1, kMaxBuckets);
  summary_.originTs = minTs;
  summary_.bucketCycles = std::max<std::int64_t>(1, (extent + wanted - 1) / wanted);
  const auto buckets = std::size_t((extent + summary_.bucketCycles - 1) / summary_.bucketCycles);
  summary_.count.assign(buckets, 0);
  summary_.firstTs.assign(buckets, 0);
  summary_.lastTs.assign(buckets, 0);
  summary_.min.assign(buckets, 0);
  summary_.max.assign(buckets, 0);
  summary_.first.assign(buckets, 0);
  summary_.last.assign(buckets, 0);
}

void CounterSummaryBuilder::add(std::int64_t ts, double value) {
  CounterSummary& s = summary_;
  const std::int64_t b = std::clamp<std::int64_t>((ts - s.originTs) / s.bucketCycles, 0, std::int64_t(s.size()) - 1);
  const auto i = std::size_t(b);
  if (s.count[i] == 0) {
    s.firstTs[i] = ts;
    s.first[i] = s.min[i] = s.max[i] = value;
  } else if (std::isnan(s.min[i])) {  // NaN is the extent of a bucket of NaNs only
    s.min[i] = s.max[i] = value;
  } else if (!std::isnan(value)) {
    s.min[i] = std::min(s.min[i], value);
    s.max[i] = std::max(s.max[i], value);
  }
  if (s.count[i] < 0xffffffffu) ++s.count[i];
  s.lastTs[i] = ts;
  s.last[i] = value;
  ++s.valueCount;
}

}  // namespace ipusim::traces::internal
