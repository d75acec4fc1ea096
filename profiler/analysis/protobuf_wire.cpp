#include "profiler/analysis/protobuf_wire.hpp"

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

}  // namespace ipusim::profiler::analysis
