#pragma once
// NumPy .npy files of integers (numpy.save of a tokenizer's ids and of the
// labels): the magic "\x93NUMPY", a version (1.0, 2.0, 3.0), a header
// dictionary ({'descr': '<i4', 'fortran_order': False, 'shape': (N, T), })
// and the little-endian data, row-major. Integer types of 1, 2, 4 and 8
// bytes, signed or not, are read. Errors throw std::invalid_argument naming
// the file and what was expected: missing, not a regular file, bad magic, a
// header that is not that dictionary, another type (floats, big-endian,
// objects), Fortran order, over the size limit, truncated, data after the
// array. The header, and the file's size against it, are checked before the
// data is read.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim::dataset {

struct NpyArray {
  std::vector<std::uint64_t> shape;  // () for a scalar
  std::vector<std::int64_t> values;  // row-major
};

// Values one .npy file may announce: they are held in memory as 64-bit
// integers, so this bounds that memory at 4 GiB (2^29 values: 4 M examples
// of 128 tokens), checked on the header before anything is read.
inline constexpr std::uint64_t kMaxNpyValues = 1ull << 29;

// `what` names the file's role in messages ("token ids").
NpyArray readNpyIntegers(const std::string& path, const std::string& what);

}  // namespace ipusim::sim::dataset
