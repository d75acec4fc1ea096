#pragma once
// IntervalSet: a set of half-open cycle intervals [begin, end), kept merged.
// The analyses measure time as the length of a union of slices, so that
// nested or overlapping slices are never counted twice.
#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::profiler::analysis {

struct Interval {
  std::int64_t begin = 0, end = 0;  // [begin, end), cycles
  std::int64_t length() const { return end > begin ? end - begin : 0; }
};

class IntervalSet {
 public:
  IntervalSet() = default;
  // Empty intervals are ignored.
  void add(std::int64_t begin, std::int64_t end);
  void add(const IntervalSet& other);
  // Sorted, disjoint, non-adjacent intervals.
  const std::vector<Interval>& intervals() const;
  // Total cycles covered.
  std::int64_t length() const;
  bool empty() const { return length() == 0; }
  IntervalSet intersect(const IntervalSet& other) const;
  // This set minus `other`.
  IntervalSet subtract(const IntervalSet& other) const;

 private:
  void normalize() const;
  mutable std::vector<Interval> items_;
  mutable bool normalized_ = true;
};

}  // namespace ipusim::profiler::analysis
