#include "traces/internal/track_slice_stats.hpp"

#include <algorithm>

namespace ipusim::traces::internal {

void TrackSliceStats::add(std::int64_t id, std::int64_t ts, std::int64_t dur) {
  if (count_ == 0) {
    minTs_ = ts;
    maxEnd_ = ts + dur;
  }
  ++count_;
  minTs_ = std::min(minTs_, ts);
  maxEnd_ = std::max(maxEnd_, ts + dur);
  maxDur_ = std::max(maxDur_, dur);
  if (longest_.size() < kLongSliceLimit) {
    longest_.push({dur, id});
  } else if (dur > longest_.top().dur) {
    longest_.pop();
    longest_.push({dur, id});
  }
}

std::int64_t TrackSliceStats::lookBack() const {
  // While every slice fits in the heap there is nothing to gain: the track is
  // small, the plain look-back scans at most kLongSliceLimit rows.
  if (static_cast<std::size_t>(count_) <= kLongSliceLimit) return maxDur_;
  // Every slice outside the heap is at most as long as its shortest member.
  return longest_.top().dur;
}

std::vector<std::int64_t> TrackSliceStats::longSliceIds() const {
  std::vector<std::int64_t> ids;
  if (static_cast<std::size_t>(count_) <= kLongSliceLimit) return ids;
  const std::int64_t limit = lookBack();
  auto heap = longest_;
  while (!heap.empty()) {
    if (heap.top().dur > limit) ids.push_back(heap.top().id);
    heap.pop();
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace ipusim::traces::internal
