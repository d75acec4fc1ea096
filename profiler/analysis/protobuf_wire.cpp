#include "profiler/analysis/protobuf_wire.hpp"

#include <nlohmann/json.hpp>

#include <cstring>

namespace ipusim::profiler::analysis {

void ProtoMessage::rawVarint(std::uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void ProtoMessage::key(std::uint32_t field, std::uint32_t wireType) {
  rawVarint((static_cast<std::uint64_t>(field) << 3) | wireType);
}

ProtoMessage& ProtoMessage::varint(std::uint32_t field, std::uint64_t value) {
  key(field, 0);
  rawVarint(value);
  return *this;
}

ProtoMessage& ProtoMessage::float64(std::uint32_t field, double value) {
  key(field, 1);
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i) data_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));  // little-endian
  return *this;
}

ProtoMessage& ProtoMessage::bytes(std::uint32_t field, std::string_view value) {
  key(field, 2);
  rawVarint(value.size());
  data_.append(value.data(), value.size());
  return *this;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (Unicode's table 3-7:
// no overlong forms, no surrogates, nothing above U+10FFFF), or 0: a valid
// name is written as it is, without the JSON library's round trip.
std::size_t utf8SequenceAt(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = byte(0);
  const auto tail = [&](std::size_t k) { return byte(k) >= 0x80 && byte(k) <= 0xBF; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && tail(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && tail(2) && tail(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

ProtoMessage& ProtoMessage::text(std::uint32_t field, std::string_view value) {
  std::size_t i = 0;
  for (std::size_t n; i < value.size() && (n = utf8SequenceAt(value, i)) != 0;) i += n;
  if (i == value.size()) return bytes(field, value);
  // (A name in a damaged profile.) Replaced by the JSON library's rule, as the
  // JSON export replaces it (chrome_trace.cpp): a cut-off sequence such as
  // E2 82 is one U+FFFD, not one a byte.
  const std::string dumped =
      nlohmann::json(std::string(value)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return bytes(field, nlohmann::json::parse(dumped).get<std::string>());
}

}  // namespace ipusim::profiler::analysis
