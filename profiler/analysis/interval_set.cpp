#include "profiler/analysis/interval_set.hpp"

#include <algorithm>

namespace ipusim::profiler::analysis {

void IntervalSet::add(std::int64_t begin, std::int64_t end) {
  if (end <= begin) return;
  // Appending in order keeps the set normalized without a sort (the common
  // case: slices streamed in ts order).
  if (normalized_ && !items_.empty() && begin >= items_.back().begin) {
    if (begin <= items_.back().end) {
      items_.back().end = std::max(items_.back().end, end);
      return;
    }
    items_.push_back({begin, end});
    return;
  }
  if (normalized_ && items_.empty()) {
    items_.push_back({begin, end});
    return;
  }
  items_.push_back({begin, end});
  normalized_ = false;
}

void IntervalSet::add(const IntervalSet& other) {
  for (const auto& i : other.intervals()) add(i.begin, i.end);
}

void IntervalSet::normalize() const {
  if (normalized_) return;
  std::sort(items_.begin(), items_.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> merged;
  merged.reserve(items_.size());
  for (const auto& i : items_) {
    if (!merged.empty() && i.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, i.end);
    else
      merged.push_back(i);
  }
  items_ = std::move(merged);
  normalized_ = true;
}

const std::vector<Interval>& IntervalSet::intervals() const {
  normalize();
  return items_;
}

std::int64_t IntervalSet::length() const {
  std::int64_t total = 0;
  for (const auto& i : intervals()) total += i.length();
  return total;
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
  const auto& a = intervals();
  const auto& b = other.intervals();
  IntervalSet result;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t begin = std::max(a[i].begin, b[j].begin);
    const std::int64_t end = std::min(a[i].end, b[j].end);
    if (begin < end) result.add(begin, end);
    if (a[i].end < b[j].end) ++i; else ++j;
  }
  return result;
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
  const auto& b = other.intervals();
  IntervalSet result;
  std::size_t j = 0;
  for (const auto& i : intervals()) {
    std::int64_t cursor = i.begin;
    while (j < b.size() && b[j].end <= cursor) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].begin < i.end) {
      if (b[k].begin > cursor) result.add(cursor, b[k].begin);
      cursor = std::max(cursor, b[k].end);
      ++k;
    }
    if (cursor < i.end) result.add(cursor, i.end);
  }
  return result;
}

}  // namespace ipusim::profiler::analysis
