#pragma once
// IDX files (the MNIST / Fashion-MNIST format), gzipped or not: a big-endian
// header (magic 0x0000 08 <dims>, then one uint32 per dimension) and unsigned
// bytes. Errors throw std::invalid_argument naming the file: missing, bad
// magic, truncated.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim::dataset {

struct IdxArray {
  std::vector<std::uint32_t> dims;  // e.g. {60000, 28, 28} or {60000}
  std::vector<std::uint8_t> data;   // row-major
};

IdxArray readIdx(const std::string& path);

}  // namespace ipusim::sim::dataset
