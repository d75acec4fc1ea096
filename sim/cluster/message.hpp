#pragma once
// What travels between ranks: a tag and bytes. MessageWriter and
// MessageReader put whole numbers and strings into the bytes and take them
// out again (little-endian 64-bit; a string is its length, then its bytes,
// which need not be text), so that a message carries a sweep point's output
// as the point wrote it.
#include <cstdint>
#include <string>
#include <utility>

namespace ipusim::sim::cluster {

struct Message {
  int source = 0;  // the sending rank
  int tag = 0;
  std::string bytes;
};

class MessageWriter {
 public:
  MessageWriter& number(std::uint64_t value);
  MessageWriter& text(const std::string& value);
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Throws std::runtime_error naming the message's tag and source when the
// bytes end before what is read (a message of another kind or version).
class MessageReader {
 public:
  explicit MessageReader(Message message) : message_(std::move(message)) {}
  std::uint64_t number();
  std::string text();
  bool atEnd() const { return offset_ == message_.bytes.size(); }

 private:
  void need(std::uint64_t bytes) const;
  Message message_;
  std::size_t offset_ = 0;
};

}  // namespace ipusim::sim::cluster
