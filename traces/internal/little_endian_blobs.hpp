#pragma once
// Internal to traces/: the summaries' per-bucket arrays as BLOBs of
// little-endian words (SCHEMA.md slice_summary, counter_summary): unsigned
// 32-bit, signed 64-bit, and IEEE 754 binary64.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::traces::internal {

using BlobBytes = std::pair<const unsigned char*, std::size_t>;

std::string encodeWords(const std::vector<std::uint32_t>& words);
std::string encodeInt64s(const std::vector<std::int64_t>& values);
std::string encodeDoubles(const std::vector<double>& values);

// `count` words from `blob`; throws ProfileError("<what> has N bytes,
// expected W per bucket for C buckets") when its length is not count x W.
std::vector<std::uint32_t> decodeWords(BlobBytes blob, std::int64_t count, const std::string& what);
std::vector<std::int64_t> decodeInt64s(BlobBytes blob, std::int64_t count, const std::string& what);
std::vector<double> decodeDoubles(BlobBytes blob, std::int64_t count, const std::string& what);

}  // namespace ipusim::traces::internal
