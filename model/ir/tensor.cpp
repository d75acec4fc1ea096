#include "model/ir/tensor.hpp"

#include "model/ir/orthogonal.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace ipusim::ir {

namespace {

// Keras's Identity: gain * eye(rows, cols); Orthogonal: gain * Q of n normal draws.
std::vector<double> matrixValues(const DrawnInit& init, std::uint64_t n) {
  const bool identity = init.distribution == DrawnInit::Distribution::Identity;
  if (init.rows == 0 || n % init.rows != 0 || n / init.rows != init.cols)
    throw std::invalid_argument(std::string(identity ? "Identity" : "Orthogonal") + " initial values: a " +
                                std::to_string(init.rows) + " x " + std::to_string(init.cols) + " matrix for " +
                                std::to_string(n) + " elements");
  if (identity) {
    std::vector<double> v(n, 0.0);
    for (std::uint64_t i = 0; i < std::min(init.rows, init.cols); ++i) v[i * init.cols + i] = float(init.gain);
    return v;
  }
  DrawnInit normal;
  normal.seed = init.seed, normal.distribution = DrawnInit::Distribution::Normal, normal.stddev = 1;
  std::vector<double> v = orthogonalFromGaussian(drawnValues(normal, n), init.rows, init.cols);
  for (double& x : v) x = float(init.gain * x);
  return v;
}

}  // namespace

std::vector<double> drawnValues(const DrawnInit& init, std::uint64_t n) {
  if (init.distribution == DrawnInit::Distribution::Orthogonal || init.distribution == DrawnInit::Distribution::Identity)
    return matrixValues(init, n);
  std::vector<double> v;
  v.reserve(n);
  std::mt19937_64 rng(init.seed);
  // The 53 high bits as a fraction in [0, 1): the same on every standard library.
  auto unit = [&rng] { return double(rng() >> 11) * (1.0 / 9007199254740992.0); };
  // A standard normal by Box-Muller (1 - u: in (0, 1], so the log is finite).
  auto normal = [&] {
    const double r = std::sqrt(-2.0 * std::log(1.0 - unit()));
    return r * std::cos(6.283185307179586 * unit());
  };
  using D = DrawnInit::Distribution;
  for (std::uint64_t i = 0; i < n; ++i) {
    double x = 0;
    if (init.distribution == D::Uniform) {
      x = init.center - init.limit + 2 * init.limit * unit();
    } else {
      double z = normal();
      while (init.distribution == D::TruncatedNormal && std::fabs(z) > 2.0) z = normal();
      x = init.center + init.stddev * z;
    }
    v.push_back(float(x));
  }
  return v;
}

std::vector<double> initialValues(const Tensor& t) {
  if (!t.initialValue.empty()) return t.initialValue;
  if (t.drawnInit) return drawnValues(*t.drawnInit, t.numElements());
  return {};
}

}  // namespace ipusim::ir
