#pragma once
// Internal to traces/: builds a counter track's counter_summary row at commit
// from its values in (ts, writing) order. Buckets: the track's extent
// [min ts, max ts] over min(value count, kMaxBuckets) buckets, as
// slice_summary does for slices.
#include "traces/counter_summary.hpp"

#include <cstdint>

namespace ipusim::traces::internal {

class CounterSummaryBuilder {
 public:
  // The same bound as slice_summary's: a 1,600 px view of the whole track
  // has ~80 buckets per pixel column.
  static constexpr std::int64_t kMaxBuckets = 131072;
  // Tracks of at most this many values get no summary: the viewer reads
  // them whole (65,536: one slice_chunks chunk's worth, milliseconds).
  static constexpr std::int64_t kMinValues = 65536;

  CounterSummaryBuilder(std::int64_t minTs, std::int64_t maxTs, std::int64_t valueCount);
  // In (ts, writing) order; a ts outside [minTs, maxTs] goes to the nearest bucket.
  void add(std::int64_t ts, double value);
  CounterSummary take() { return std::move(summary_); }

 private:
  CounterSummary summary_;
};

}  // namespace ipusim::traces::internal
