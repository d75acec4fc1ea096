#include "model/ir/orthogonal.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ipusim::ir {
namespace {

// An m x n matrix (m >= n) held column by column, so that a reflection
// reads and writes contiguous columns.
struct Columns {
  std::uint64_t m = 0, n = 0;
  std::vector<double> v;
  double* col(std::uint64_t j) { return v.data() + j * m; }
};

// Reflects columns [from, n) of `a` by I - 2 u u^T / (u^T u), where u is
// nonzero on rows [k, m) only (held in u[k..m)).
void reflect(Columns& a, const std::vector<double>& u, double uu, std::uint64_t k, std::uint64_t from) {
  for (std::uint64_t j = from; j < a.n; ++j) {
    double* c = a.col(j);
    double dot = 0;
    for (std::uint64_t i = k; i < a.m; ++i) dot += u[i] * c[i];
    const double f = 2 * dot / uu;
    for (std::uint64_t i = k; i < a.m; ++i) c[i] -= f * u[i];
  }
}

}  // namespace

std::vector<double> orthogonalFromGaussian(const std::vector<double>& gaussian, std::uint64_t rows, std::uint64_t cols) {
  if (gaussian.size() != rows * cols)
    throw std::invalid_argument("orthogonal matrix: " + std::to_string(gaussian.size()) + " normal draws for a " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
  const std::uint64_t m = std::max(rows, cols), n = std::min(rows, cols);
  Columns a{m, n, std::vector<double>(m * n)};
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) a.v[j * m + i] = gaussian[i * n + j];

  // A = QR: reflection k zeroes column k below the diagonal. Each reflector
  // u_k is kept (reflectors[k]), and the sign of R's diagonal entry r_kk.
  std::vector<std::vector<double>> reflectors(n);
  std::vector<double> uus(n, 0), signs(n, 1);
  for (std::uint64_t k = 0; k < n; ++k) {
    const double* c = a.col(k);
    double norm = 0;
    for (std::uint64_t i = k; i < m; ++i) norm += c[i] * c[i];
    norm = std::sqrt(norm);
    // u = x - alpha e_k with alpha = -sign(x_k) |x|: no cancellation; r_kk = alpha.
    const double alpha = c[k] >= 0 ? -norm : norm;
    std::vector<double> u(m, 0);
    for (std::uint64_t i = k; i < m; ++i) u[i] = c[i];
    u[k] -= alpha;
    double uu = 0;
    for (std::uint64_t i = k; i < m; ++i) uu += u[i] * u[i];
    signs[k] = alpha < 0 ? -1 : 1;
    if (uu > 0) reflect(a, u, uu, k, k);
    reflectors[k] = std::move(u);
    uus[k] = uu;
  }

  // Q's first n columns: the reflections applied, last first, to I's (when
  // reflection k applies, columns before k are still e_j, zero where it acts).
  Columns q{m, n, std::vector<double>(m * n, 0)};
  for (std::uint64_t j = 0; j < n; ++j) q.col(j)[j] = 1;
  for (std::uint64_t k = n; k-- > 0;)
    if (uus[k] > 0) reflect(q, reflectors[k], uus[k], k, k);

  // Q diag(sign(diag(R))), transposed when there are fewer rows than columns.
  std::vector<double> out(rows * cols);
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      const double x = q.v[j * m + i] * signs[j];
      if (rows >= cols)
        out[i * cols + j] = x;
      else
        out[j * cols + i] = x;
    }
  return out;
}

}  // namespace ipusim::ir
