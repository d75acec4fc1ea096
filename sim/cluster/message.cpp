#include "sim/cluster/message.hpp"

#include <stdexcept>

namespace ipusim::sim::cluster {

MessageWriter& MessageWriter::number(std::uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) bytes_ += static_cast<char>((value >> (8 * byte)) & 0xff);
  return *this;
}

MessageWriter& MessageWriter::text(const std::string& value) {
  number(value.size());
  bytes_ += value;
  return *this;
}

void MessageReader::need(std::uint64_t bytes) const {
  if (bytes > message_.bytes.size() - offset_)
    throw std::runtime_error("message (tag " + std::to_string(message_.tag) + ") from rank " +
                             std::to_string(message_.source) + ": " + std::to_string(message_.bytes.size()) +
                             " bytes end before the " + std::to_string(bytes) + " expected at byte " +
                             std::to_string(offset_));
}

std::uint64_t MessageReader::number() {
  need(8);
  std::uint64_t value = 0;
  for (int byte = 0; byte < 8; ++byte)
    value |= std::uint64_t(static_cast<unsigned char>(message_.bytes[offset_ + byte])) << (8 * byte);
  offset_ += 8;
  return value;
}

std::string MessageReader::text() {
  const std::uint64_t size = number();
  need(size);
  std::string value = message_.bytes.substr(offset_, size);
  offset_ += size;
  return value;
}

}  // namespace ipusim::sim::cluster
