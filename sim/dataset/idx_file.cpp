#include "sim/dataset/idx_file.hpp"

#include <zlib.h>

#include <stdexcept>

namespace ipusim::sim::dataset {
namespace {

// The whole file, through zlib (which reads plain files transparently).
std::vector<std::uint8_t> readAll(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::invalid_argument(path + ": cannot open IDX file");
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const int n = gzread(f, buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      const std::string message = gzerror(f, &code);
      gzclose(f);
      throw std::invalid_argument(path + ": cannot read IDX file (" + message + ")");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  gzclose(f);
  return bytes;
}

std::uint32_t bigEndian32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

IdxArray readIdx(const std::string& path) {
  const std::vector<std::uint8_t> bytes = readAll(path);
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 || bytes[3] == 0)
    throw std::invalid_argument(path + ": bad magic (expected an IDX file of unsigned bytes: 00 00 08 <dims>)");
  const std::size_t rank = bytes[3];
  if (bytes.size() < 4 + 4 * rank) throw std::invalid_argument(path + ": truncated IDX header");
  IdxArray a;
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    a.dims.push_back(bigEndian32(&bytes[4 + 4 * d]));
    elements *= a.dims.back();
  }
  const std::size_t header = 4 + 4 * rank;
  if (bytes.size() - header < elements)
    throw std::invalid_argument(path + ": truncated: the header announces " + std::to_string(elements) +
                                " bytes of data, the file has " + std::to_string(bytes.size() - header));
  a.data.assign(bytes.begin() + header, bytes.begin() + header + elements);
  return a;
}

}  // namespace ipusim::sim::dataset
