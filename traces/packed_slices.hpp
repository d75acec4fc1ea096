#pragma once
// PackedSlices: the slices of one track as columns, the drawing subset only
// (no run, parent or bytes), read from the profile's slice_chunks table in a
// fraction of the time the row-wise slices table takes (see SCHEMA.md). The
// viewer loads whole tracks this way. Order is the writer's order, not
// necessarily by ts.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::traces {

struct PackedSlices {
  std::vector<std::int64_t> id, ts, dur;
  std::vector<std::int32_t> depth;
  std::vector<std::uint32_t> name, category;  // indexes into `strings`
  std::vector<std::int64_t> programId, phaseId;  // -1 for NULL
  std::vector<std::string> strings;              // the profile's slice_strings, by id

  std::size_t size() const { return ts.size(); }
  // Empties the columns, keeping their memory for the next chunk.
  void clear() {
    id.clear(), ts.clear(), dur.clear(), depth.clear();
    name.clear(), category.clear(), programId.clear(), phaseId.clear();
  }
  void reserve(std::size_t n) {
    id.reserve(n), ts.reserve(n), dur.reserve(n), depth.reserve(n);
    name.reserve(n), category.reserve(n), programId.reserve(n), phaseId.reserve(n);
  }
};

// One slice_chunks row without its data: which slices of the track it holds
// (by writing order) and the time they cover, so a reader can load only the
// chunks that meet a window.
struct PackedChunkSpan {
  std::int64_t chunk = 0;       // 0, 1, ... in writing order
  std::int64_t sliceCount = 0;
  std::int64_t minTs = 0;       // earliest start of its slices
  std::int64_t maxEnd = 0;      // latest end (ts + dur)
  bool meets(std::int64_t from, std::int64_t to) const { return minTs < to && maxEnd >= from; }
};

}  // namespace ipusim::traces
