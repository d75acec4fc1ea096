#include "traces/internal/little_endian_blobs.hpp"

#include "traces/profile_error.hpp"

#include <cstring>

namespace ipusim::traces::internal {

namespace {

template <typename Unsigned>
void putLittleEndian(Unsigned bits, char* out) {
  for (std::size_t k = 0; k < sizeof(Unsigned); ++k) out[k] = static_cast<char>((bits >> (8 * k)) & 0xff);
}

template <typename Unsigned>
Unsigned getLittleEndian(const unsigned char* in) {
  Unsigned bits = 0;
  for (std::size_t k = 0; k < sizeof(Unsigned); ++k) bits |= Unsigned(in[k]) << (8 * k);
  return bits;
}

// Values of type T stored as the little-endian bytes of their bit pattern (Unsigned).
template <typename T, typename Unsigned>
std::string encode(const std::vector<T>& values) {
  static_assert(sizeof(T) == sizeof(Unsigned));
  std::string bytes(values.size() * sizeof(T), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    Unsigned bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    putLittleEndian(bits, &bytes[i * sizeof(T)]);
  }
  return bytes;
}

template <typename T, typename Unsigned>
std::vector<T> decode(BlobBytes blob, std::int64_t count, const std::string& what) {
  if (count < 0 || blob.second != std::size_t(count) * sizeof(T))
    throw ProfileError(what + " has " + std::to_string(blob.second) + " bytes, expected " +
                       std::to_string(sizeof(T)) + " per bucket for " + std::to_string(count) + " buckets");
  std::vector<T> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Unsigned bits = getLittleEndian<Unsigned>(blob.first + i * sizeof(T));
    std::memcpy(&values[i], &bits, sizeof bits);
  }
  return values;
}

}  // namespace

std::string encodeWords(const std::vector<std::uint32_t>& words) { return encode<std::uint32_t, std::uint32_t>(words); }
std::string encodeInt64s(const std::vector<std::int64_t>& values) { return encode<std::int64_t, std::uint64_t>(values); }
std::string encodeDoubles(const std::vector<double>& values) { return encode<double, std::uint64_t>(values); }

std::vector<std::uint32_t> decodeWords(BlobBytes blob, std::int64_t count, const std::string& what) {
  return decode<std::uint32_t, std::uint32_t>(blob, count, what);
}
std::vector<std::int64_t> decodeInt64s(BlobBytes blob, std::int64_t count, const std::string& what) {
  return decode<std::int64_t, std::uint64_t>(blob, count, what);
}
std::vector<double> decodeDoubles(BlobBytes blob, std::int64_t count, const std::string& what) {
  return decode<double, std::uint64_t>(blob, count, what);
}

}  // namespace ipusim::traces::internal
