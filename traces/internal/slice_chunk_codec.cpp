#include "traces/internal/slice_chunk_codec.hpp"

#include "traces/profile_error.hpp"

#include <algorithm>
#include <limits>

namespace ipusim::traces::internal {

namespace {

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

}  // namespace

void SliceChunkEncoder::put(std::uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void SliceChunkEncoder::add(std::int64_t id, std::int64_t ts, std::int64_t dur, std::int64_t depth,
                            std::uint32_t name, std::uint32_t category, std::int64_t programId,
                            std::int64_t phaseId) {
  put(zigzag(id - previousId_));
  put(zigzag(ts - previousTs_));
  put(static_cast<std::uint64_t>(dur));
  put(static_cast<std::uint64_t>(depth));
  put(name);
  put(category);
  put(static_cast<std::uint64_t>(programId + 1));
  put(static_cast<std::uint64_t>(phaseId + 1));
  previousId_ = id;
  previousTs_ = ts;
  const std::int64_t end = ts + (dur > 0 ? dur : 0);
  minTs_ = count_ == 0 ? ts : std::min(minTs_, ts);
  maxEnd_ = count_ == 0 ? end : std::max(maxEnd_, end);
  ++count_;
}

std::string SliceChunkEncoder::take() {
  std::string chunk = std::move(bytes_);
  bytes_.clear();
  count_ = 0;
  previousId_ = previousTs_ = 0;
  minTs_ = maxEnd_ = 0;
  return chunk;
}

void decodeSliceChunk(const unsigned char* data, std::size_t size, std::size_t count, PackedSlices& out,
                      const std::string& file) {
  const unsigned char* p = data;
  const unsigned char* const end = data + size;
  bool truncated = false;
  const auto get = [&]() -> std::uint64_t {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) {
        truncated = true;
        return 0;
      }
      const unsigned char byte = *p++;
      value |= std::uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    truncated = true;
    return 0;
  };
  // A value too wide for its column would be cut (a depth of 2^40 read as 0):
  // refused instead. The reader checks the values against the rules.
  bool tooWide = false;
  const auto upTo = [&](std::uint64_t value, std::uint64_t max) {
    tooWide = tooWide || value > max;
    return value;
  };
  constexpr std::uint64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  std::int64_t id = 0, ts = 0;
  for (std::size_t i = 0; i < count && !truncated && !tooWide; ++i) {
    id += unzigzag(get());
    ts += unzigzag(get());
    out.id.push_back(id);
    out.ts.push_back(ts);
    out.dur.push_back(static_cast<std::int64_t>(upTo(get(), kInt64Max)));
    out.depth.push_back(static_cast<std::int32_t>(upTo(get(), std::numeric_limits<std::int32_t>::max())));
    out.name.push_back(static_cast<std::uint32_t>(upTo(get(), std::numeric_limits<std::uint32_t>::max())));
    out.category.push_back(static_cast<std::uint32_t>(upTo(get(), std::numeric_limits<std::uint32_t>::max())));
    out.programId.push_back(static_cast<std::int64_t>(upTo(get(), kInt64Max)) - 1);
    out.phaseId.push_back(static_cast<std::int64_t>(upTo(get(), kInt64Max)) - 1);
  }
  if (tooWide)
    throw ProfileError(file + ": corrupt slice_chunks row: slice " + std::to_string(id) +
                       " holds a value too wide for its column");
  if (truncated || p != end)
    throw ProfileError(file + ": corrupt slice_chunks row: its " + std::to_string(size) +
                       " bytes do not hold the " + std::to_string(count) + " slices it claims");
}

}  // namespace ipusim::traces::internal
