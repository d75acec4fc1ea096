#pragma once
// CounterSummary: a counter track's values over time in equal buckets (the
// counter_summary table, SCHEMA.md). The viewer draws a zoomed-out counter
// of millions of values from it instead of reading them: per bucket, how
// many values fall in it, their least and greatest, and the first and last
// (value and ts), which is what a line envelope per pixel column needs.
#include <cstdint>
#include <vector>

namespace ipusim::traces {

struct CounterSummary {
  std::int64_t valueCount = 0;    // values of the track (the sum of `count`)
  std::int64_t originTs = 0;      // cycles: start of bucket 0 (the track's earliest ts)
  std::int64_t bucketCycles = 1;  // width of every bucket, >= 1
  // Per bucket; the other fields are 0 where count is 0.
  std::vector<std::uint32_t> count;
  std::vector<std::int64_t> firstTs, lastTs;       // ts of the bucket's first and last value
  std::vector<double> min, max, first, last;       // in (ts, writing) order

  std::size_t size() const { return count.size(); }
  std::int64_t endTs() const { return originTs + bucketCycles * std::int64_t(count.size()); }
};

}  // namespace ipusim::traces
