#pragma once
// Walking a profile's slices over a time range, as the device activity and
// the range statistics both do.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <string>

namespace ipusim::profiler {

// "StreamCopy infeed" -> "infeed"; other names unchanged.
inline std::string streamNameOf(const std::string& copySliceName) {
  const std::string prefix = "StreamCopy ";
  return copySliceName.rfind(prefix, 0) == 0 ? copySliceName.substr(prefix.size()) : copySliceName;
}

// Calls fn for the slices of a track that may overlap [from, to), in (ts,
// depth, id) order: a windowed index query when the range is a small part of
// the profile (a selection in the viewer), else one streamed pass over the
// track (a report over every captured run), so memory never holds a whole track.
template <typename Fn>
void forEachSliceIn(const traces::ProfileReader& reader, std::int64_t trackId, std::int64_t from, std::int64_t to,
                    Fn&& fn) {
  const auto [first, last] = reader.timeExtent();
  if (to - from < (last - first) / 4) {
    for (const auto& s : reader.slices(trackId, from, to)) fn(s);
  } else {
    reader.forEachSlice(trackId, fn);
  }
}

}  // namespace ipusim::profiler
