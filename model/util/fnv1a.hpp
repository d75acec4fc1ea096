#pragma once
// FNV-1a, 64 bits: the digests ipusim compares between runs and between the
// ranks of an MPI job (the trained weights, a run's shape and its data, a
// sweep's plan). Not a cryptographic hash: it tells apart what was meant to
// be equal, bit for bit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ipusim::util {

class Fnv1a {
 public:
  Fnv1a& add(const void* data, std::size_t bytes) {
    const auto* byte = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ byte[i]) * 1099511628211ull;
    return *this;
  }
  Fnv1a& add(const std::string& text) { return add(text.data(), text.size()); }
  std::uint64_t value() const { return hash_; }
  // 16 hex digits.
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  std::uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace ipusim::util
