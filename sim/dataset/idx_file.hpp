#pragma once
// IDX files (the MNIST / Fashion-MNIST format), gzipped or not: a big-endian
// header (magic 0x0000 08 <dims>, then one uint32 per dimension) and unsigned
// bytes. Errors throw std::invalid_argument naming the file: missing, not a
// regular file, bad magic, over the size limit, truncated. The header is
// checked before the data is read, and no more than it announces is read.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim::dataset {

struct IdxArray {
  std::vector<std::uint32_t> dims;  // e.g. {60000, 28, 28} or {60000}
  std::vector<std::uint8_t> data;   // row-major
};

// Data bytes one IDX file may announce (design choice: 4 GiB, about 90 times
// Fashion-MNIST's 47 MB of training images; the data is held in host memory).
inline constexpr std::uint64_t kMaxIdxBytes = 4ull << 30;

IdxArray readIdx(const std::string& path);

}  // namespace ipusim::sim::dataset
