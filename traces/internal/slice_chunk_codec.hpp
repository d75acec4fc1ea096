#pragma once
// Internal to traces/: the byte format of a slice_chunks row (SCHEMA.md).
// Per slice, in the writer's order, eight LEB128 varints:
//   zigzag(id - previous id), zigzag(ts - previous ts), dur, depth,
//   name string id, category string id, program_id + 1, phase_id + 1
// ("previous" is 0 at the start of a chunk, so chunks decode on their own;
// NULL ids are -1 and so encode as 0).
#include "traces/packed_slices.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ipusim::traces::internal {

class SliceChunkEncoder {
 public:
  static constexpr std::size_t kSlicesPerChunk = 65536;

  void add(std::int64_t id, std::int64_t ts, std::int64_t dur, std::int64_t depth, std::uint32_t name,
           std::uint32_t category, std::int64_t programId, std::int64_t phaseId);
  std::size_t count() const { return count_; }
  bool full() const { return count_ >= kSlicesPerChunk; }
  // The chunk's time span so far: earliest start, latest end (ts + dur).
  std::int64_t minTs() const { return minTs_; }
  std::int64_t maxEnd() const { return maxEnd_; }
  // The encoded chunk; the encoder starts a new one.
  std::string take();

 private:
  void put(std::uint64_t value);
  std::string bytes_;
  std::size_t count_ = 0;
  std::int64_t previousId_ = 0, previousTs_ = 0;
  std::int64_t minTs_ = 0, maxEnd_ = 0;
};

// Appends the `count` slices of one chunk to `out` (not its strings).
// Throws ProfileError naming `file` when the bytes do not hold `count` slices.
void decodeSliceChunk(const unsigned char* data, std::size_t size, std::size_t count, PackedSlices& out,
                      const std::string& file);

}  // namespace ipusim::traces::internal
