#include "cpu_reference_activations.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipusim::testing {
namespace {

using scheduler::Activation;

constexpr double kPi = 3.14159265358979323846;
// tf.nn.selu / jax.nn.selu.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 0 ? x + std::log(1.0 + std::exp(-x)) : std::log(1.0 + std::exp(x)); }
double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }

}  // namespace

double activationValue(Activation a, const scheduler::ActivationParams& p, double x) {
  switch (a) {
    case Activation::Relu:
    case Activation::Relu6:
    case Activation::LeakyRelu: {  // Keras's relu: x * (x > t), clipped at max_value, minus slope relu(t - x)
      if (x > p.threshold) return p.maxValue ? std::min(x, *p.maxValue) : x;
      return -p.negativeSlope * (p.threshold - x);
    }
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Tanh: return std::tanh(x);
    case Activation::Gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::GeluApproximate:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
    case Activation::Elu: return x > 0 ? x : p.alpha * (std::exp(x) - 1.0);
    case Activation::Selu: return kSeluScale * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1.0));
    case Activation::Silu: return x * sigmoid(x);
    case Activation::Softplus: return softplus(x);
    case Activation::Softsign: return x / (1.0 + std::fabs(x));
    case Activation::HardSigmoid: return std::min(std::max(p.hardSigmoidSlope * x + 0.5, 0.0), 1.0);
    case Activation::HardSilu: return x * relu6(x + 3.0) / 6.0;
    case Activation::Exponential: return std::exp(x);
    case Activation::Mish: return x * std::tanh(softplus(x));
    case Activation::Linear:
    case Activation::Softmax: break;
  }
  throw std::logic_error("activationValue: not an elementwise activation");
}

// At a kink, the slope of the side below it (tf.nn.leaky_relu's rule; relu's
// and relu6's derivative is 0 at 0 and 6, TF's Relu6Grad).
double activationSlope(Activation a, const scheduler::ActivationParams& p, double x) {
  switch (a) {
    case Activation::Relu:
    case Activation::Relu6:
    case Activation::LeakyRelu:
      if (x > p.threshold) return p.maxValue && x >= *p.maxValue ? 0.0 : 1.0;
      return p.negativeSlope;
    case Activation::Sigmoid: return sigmoid(x) * (1.0 - sigmoid(x));
    case Activation::Tanh: return 1.0 - std::tanh(x) * std::tanh(x);
    case Activation::Gelu: return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi);
    case Activation::GeluApproximate: {
      const double c = std::sqrt(2.0 / kPi), u = c * (x + 0.044715 * x * x * x), t = std::tanh(u);
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case Activation::Elu: return x > 0 ? 1.0 : p.alpha * std::exp(x);
    case Activation::Selu: return x > 0 ? kSeluScale : kSeluScale * kSeluAlpha * std::exp(x);
    case Activation::Silu: return sigmoid(x) + x * sigmoid(x) * (1.0 - sigmoid(x));
    case Activation::Softplus: return sigmoid(x);
    case Activation::Softsign: return 1.0 / ((1.0 + std::fabs(x)) * (1.0 + std::fabs(x)));
    case Activation::HardSigmoid: {
      const double y = p.hardSigmoidSlope * x + 0.5;
      return y > 0.0 && y < 1.0 ? p.hardSigmoidSlope : 0.0;
    }
    case Activation::HardSilu: return x <= -3.0 ? 0.0 : x >= 3.0 ? 1.0 : (2.0 * x + 3.0) / 6.0;
    case Activation::Exponential: return std::exp(x);
    case Activation::Mish: {
      const double t = std::tanh(softplus(x));
      return t + x * sigmoid(x) * (1.0 - t * t);
    }
    case Activation::Linear:
    case Activation::Softmax: break;
  }
  throw std::logic_error("activationSlope: not an elementwise activation");
}

std::vector<float> softmaxForward(const std::vector<float>& x, std::uint64_t n, std::uint64_t inner) {
  std::vector<float> y(x.size());
  for (std::uint64_t block = 0; block < x.size(); block += n * inner)
    for (std::uint64_t j = 0; j < inner; ++j) {
      double mx = -INFINITY, sum = 0;
      for (std::uint64_t i = 0; i < n; ++i) mx = std::max(mx, double(x[block + i * inner + j]));
      for (std::uint64_t i = 0; i < n; ++i) sum += std::exp(double(x[block + i * inner + j]) - mx);
      for (std::uint64_t i = 0; i < n; ++i) y[block + i * inner + j] = float(std::exp(double(x[block + i * inner + j]) - mx) / sum);
    }
  return y;
}

std::vector<float> softmaxBackward(const std::vector<float>& y, const std::vector<float>& g, std::uint64_t n,
                                   std::uint64_t inner) {
  std::vector<float> dx(y.size());
  for (std::uint64_t block = 0; block < y.size(); block += n * inner)
    for (std::uint64_t j = 0; j < inner; ++j) {
      double dot = 0;
      for (std::uint64_t i = 0; i < n; ++i) dot += double(g[block + i * inner + j]) * y[block + i * inner + j];
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t e = block + i * inner + j;
        dx[e] = float(y[e] * (g[e] - dot));
      }
    }
  return dx;
}

std::vector<double> constantPerElement(const scheduler::BroadcastConstant& c, const std::vector<std::size_t>& axisOfDim,
                                       const std::vector<std::uint64_t>& in) {
  std::uint64_t count = 1;
  for (std::uint64_t d : in) count *= d;
  std::vector<double> out(count);
  std::vector<std::uint64_t> pos(in.size());
  for (std::uint64_t e = 0; e < count; ++e) {
    std::uint64_t rest = e;
    for (std::size_t a = in.size(); a-- > 0;) pos[a] = rest % in[a], rest /= in[a];
    std::uint64_t at = 0;
    for (std::size_t d = 0; d < c.shape.size(); ++d) at = at * c.shape[d] + (c.shape[d] == 1 ? 0 : pos[axisOfDim[d]]);
    out[e] = c.values.at(at);
  }
  return out;
}

std::vector<std::size_t> numpyAxes(const scheduler::BroadcastConstant& c, std::size_t rank) {
  std::vector<std::size_t> axes(c.shape.size(), 0);
  for (std::size_t d = c.shape.size(), a = rank; d-- > 0 && a-- > 0;) axes[d] = a;
  return axes;
}

std::vector<std::size_t> keptAxesFromTheRight(const scheduler::BroadcastConstant& c, const std::vector<std::int64_t>& kept) {
  std::vector<std::size_t> axes(c.shape.size(), 0);
  for (std::size_t d = 0; d < c.shape.size(); ++d) axes[d] = std::size_t(kept[kept.size() - c.shape.size() + d] - 1);
  return axes;
}

}  // namespace ipusim::testing
