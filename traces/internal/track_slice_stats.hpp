#pragma once
// Internal to traces/: per-track facts gathered while slices are written, so
// the reader can find the slices overlapping a time window through the
// (track_id, ts) index without scanning the track.
//
// A slice overlapping [from, to) starts at or after from - look_back, where
// look_back is the longest slice of the track: an index range. One slice
// spanning the whole profile would make that range the whole track, so the
// kLongSliceLimit longest slices of a track are kept aside (long_slices) and
// the look-back is the longest slice *not* kept aside.
#include <cstdint>
#include <queue>
#include <vector>

namespace ipusim::traces::internal {

class TrackSliceStats {
 public:
  static constexpr std::size_t kLongSliceLimit = 1024;

  void add(std::int64_t id, std::int64_t ts, std::int64_t dur);

  std::int64_t count() const { return count_; }
  std::int64_t minTs() const { return minTs_; }
  std::int64_t maxEnd() const { return maxEnd_; }
  std::int64_t maxDur() const { return maxDur_; }
  // Longest duration of a slice not listed by longSliceIds().
  std::int64_t lookBack() const;
  // Slices longer than lookBack() (at most kLongSliceLimit of them).
  std::vector<std::int64_t> longSliceIds() const;

 private:
  struct Candidate {
    std::int64_t dur;
    std::int64_t id;
    bool operator>(const Candidate& other) const { return dur > other.dur; }
  };
  std::int64_t count_ = 0;
  std::int64_t minTs_ = 0;
  std::int64_t maxEnd_ = 0;
  std::int64_t maxDur_ = 0;
  // Min-heap of the longest slices so far: top() is the shortest of them.
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> longest_;
};

}  // namespace ipusim::traces::internal
