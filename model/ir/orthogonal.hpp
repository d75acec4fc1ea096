#pragma once
// A random orthogonal matrix as Keras's Orthogonal initializer makes one
// (keras/src/initializers/random_initializers.py): a standard normal matrix
// of max(rows, cols) x min(rows, cols), its QR decomposition, Q's columns
// multiplied by the signs of R's diagonal (which makes Q Haar-distributed:
// uniform over the orthogonal matrices), transposed when rows < cols. The
// decomposition is Householder's, in double; no library.
#include <cstdint>
#include <vector>

namespace ipusim::ir {

// The rows x cols matrix (row-major) with orthonormal columns (rows >= cols)
// or rows (rows < cols) made from `gaussian`: the max(rows, cols) x
// min(rows, cols) standard normal matrix, row-major. Throws
// std::invalid_argument when gaussian.size() != rows * cols.
std::vector<double> orthogonalFromGaussian(const std::vector<double>& gaussian, std::uint64_t rows, std::uint64_t cols);

}  // namespace ipusim::ir
