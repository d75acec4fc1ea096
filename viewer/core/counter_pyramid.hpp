#pragma once
// CounterPyramid: a counter lane zoomed out, drawn from the profile's
// counter_summary instead of its values. On load the buckets are merged
// pairwise into a pyramid, so a frame reads one or two buckets per pixel
// column at any zoom (the cost follows pixels). Zoomed in further than the
// finest buckets, the lane reads the values in view instead
// (planCounterWindow, LaneLoader).
#include "traces/counter_summary.hpp"
#include "viewer/core/counter_envelope.hpp"
#include "viewer/core/lane_window.hpp"
#include "viewer/core/time_axis.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace ipusim::viewer {

// A counter window holds at most this many values (~4 MB; a few tenths of a
// second of reading through the (track_id, ts) index): more than a 1,600 px
// view can tell apart, fewer than the summary stands for.
inline constexpr std::int64_t kMaxCounterWindowValues = 262144;

class CounterPyramid {
 public:
  explicit CounterPyramid(const traces::CounterSummary& summary);

  std::int64_t valueCount() const { return valueCount_; }
  std::int64_t originTs() const { return origin_; }
  std::int64_t finestBucketCycles() const { return levels_[0].bucketCycles; }
  // The least and greatest value of the track (NaNs left out).
  double min() const { return min_; }
  double max() const { return max_; }
  // Values in the finest buckets meeting [from, to): at least the values
  // with ts in it, at most one bucket's worth more at each end.
  std::int64_t valuesMeeting(std::int64_t from, std::int64_t to) const;

  // The envelope per pixel column, as counterEnvelope (counter_envelope.hpp)
  // computes it from the values, with whole buckets in place of values: the
  // columns are the same wherever pixel columns do not cut a bucket (the
  // buckets used are at most a pixel column wide, so a bucket cut by one
  // lands whole in the column of its first value). The column before the
  // view holds only the last value before it, as with the values.
  std::vector<CounterColumn> columns(const TimeAxis& axis) const;

 private:
  struct Level {
    std::int64_t bucketCycles = 1;
    std::vector<std::uint64_t> count;
    std::vector<std::int64_t> firstTs, lastTs;
    std::vector<double> min, max, first, last;
  };
  std::int64_t valueCount_ = 0, origin_ = 0;
  double min_ = 0, max_ = 0;
  std::vector<Level> levels_;              // levels_[0]: the file's buckets; each next one twice as wide
  std::vector<std::int64_t> valuesBefore_;  // per finest bucket b: values in buckets < b (and one past the end)
};

// The window to read for a view of a counter lane: the view with a margin of
// one view width each side when that holds at most `maxValues` values, else
// the view alone; nullopt when even the view holds more (the summary then
// stands for them). `chunks` stays empty.
std::optional<WindowPlan> planCounterWindow(const CounterPyramid& pyramid, double viewFrom, double viewTo,
                                            std::int64_t maxValues = kMaxCounterWindowValues);

}  // namespace ipusim::viewer
