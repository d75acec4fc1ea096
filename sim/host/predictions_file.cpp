#include "sim/host/predictions_file.hpp"

#include "model/util/text.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ipusim::sim {
namespace {

// numpy.lib.format version 1.0: magic, version, a little-endian uint16 header
// length, then the header (a Python dict literal) padded with spaces and a
// newline so that the data starts at a multiple of 64 bytes.
std::string npyHeader(std::uint64_t rows, std::uint64_t width) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(width) + "), }";
  const std::size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  std::size_t total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(1), out += char(0);
  out += char(dict.size() & 0xff), out += char(dict.size() >> 8);
  return out + dict;
}

}  // namespace

void PredictionsFile::checkName(const std::string& path) {
  if (!util::endsWith(path, ".csv") && !util::endsWith(path, ".npy"))
    throw std::invalid_argument("--predictions " + path + ": expected a file name ending in .npy (a NumPy array) or .csv");
}

PredictionsFile::PredictionsFile(const std::string& path, std::uint64_t rows, std::uint64_t width,
                                 const traces::OutputPolicy& policy)
    : csv_(util::endsWith(path, ".csv")), rows_(rows), width_(width) {
  checkName(path);
  file_ = std::make_unique<traces::OutputFile>(path, policy);
  if (!csv_) file_->stream() << npyHeader(rows, width);
}

void PredictionsFile::append(const float* values, std::uint64_t count) {
  if (written_ + count > rows_) throw std::logic_error("PredictionsFile: more rows than announced");
  std::ostream& out = file_->stream();
  if (!csv_) {
    // The host is little-endian (x86-64, aarch64), as '<f4' says.
    out.write(reinterpret_cast<const char*>(values), std::streamsize(count * width_ * sizeof(float)));
  } else {
    char number[32];
    for (std::uint64_t r = 0; r < count; ++r)
      for (std::uint64_t c = 0; c < width_; ++c) {
        std::snprintf(number, sizeof number, "%.9g", double(values[r * width_ + c]));
        out << number << (c + 1 < width_ ? ',' : '\n');
      }
  }
  written_ += count;
}

void PredictionsFile::commit() {
  if (written_ != rows_)
    throw std::logic_error("PredictionsFile: " + std::to_string(written_) + " of " + std::to_string(rows_) + " rows written");
  file_->commit();
}

}  // namespace ipusim::sim
