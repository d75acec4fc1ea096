#include "model/ir/tensor.hpp"

#include <random>

namespace ipusim::ir {

std::vector<double> uniformValues(const UniformInit& init, std::uint64_t n) {
  std::vector<double> v;
  v.reserve(n);
  std::mt19937_64 rng(init.seed);
  for (std::uint64_t i = 0; i < n; ++i) {
    // The 53 high bits as a fraction in [0, 1): the same on every standard library.
    const double u = double(rng() >> 11) * (1.0 / 9007199254740992.0);
    v.push_back(float(-init.limit + 2 * init.limit * u));
  }
  return v;
}

std::vector<double> initialValues(const Tensor& t) {
  if (!t.initialValue.empty()) return t.initialValue;
  if (t.uniformInit) return uniformValues(*t.uniformInit, t.numElements());
  return {};
}

}  // namespace ipusim::ir
