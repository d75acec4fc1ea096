#pragma once
// The protobuf wire format, encoding only: enough for the Perfetto trace
// export (perfetto_trace.hpp). A message is built in a byte string, field by
// field, in any order; a nested message is built apart and written whole
// (length-delimited). Wire types: 0 varint (integers, bools, enums),
// 1 fixed 64-bit (double), 2 length-delimited (strings, bytes, messages).
// Negative int64 values are written as 10-byte varints (two's complement),
// as protobuf does for int64 fields.
#include <cstdint>
#include <string>
#include <string_view>

namespace ipusim::profiler::analysis {

class ProtoMessage {
 public:
  ProtoMessage& varint(std::uint32_t field, std::uint64_t value);
  ProtoMessage& int64(std::uint32_t field, std::int64_t value) { return varint(field, static_cast<std::uint64_t>(value)); }
  ProtoMessage& float64(std::uint32_t field, double value);
  ProtoMessage& bytes(std::uint32_t field, std::string_view value);
  // A string field: protobuf's strings are UTF-8, so a byte that is not
  // (a name in a damaged profile) is written as U+FFFD, as the JSON export
  // writes it.
  ProtoMessage& text(std::uint32_t field, std::string_view value);
  ProtoMessage& message(std::uint32_t field, const ProtoMessage& nested) { return bytes(field, nested.data()); }

  const std::string& data() const { return data_; }
  bool empty() const { return data_.empty(); }

 private:
  void key(std::uint32_t field, std::uint32_t wireType);
  void rawVarint(std::uint64_t value);
  std::string data_;
};

}  // namespace ipusim::profiler::analysis
