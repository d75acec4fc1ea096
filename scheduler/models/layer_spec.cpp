#include "scheduler/models/layer_spec.hpp"

namespace ipusim::scheduler {
namespace {
struct ActivationName { Activation a; const char* name; };
// Keras's names (keras/src/activations/__init__.py ALL_OBJECTS_DICT), in its
// order; gelu_approximate is KerasHub's name for gelu(x, approximate=True).
constexpr ActivationName kActivations[] = {
    {Activation::Linear, "linear"},        {Activation::Relu, "relu"},           {Activation::LeakyRelu, "leaky_relu"},
    {Activation::Relu6, "relu6"},          {Activation::Softmax, "softmax"},     {Activation::Elu, "elu"},
    {Activation::Selu, "selu"},            {Activation::Softplus, "softplus"},   {Activation::Softsign, "softsign"},
    {Activation::Silu, "silu"},            {Activation::Gelu, "gelu"},           {Activation::GeluApproximate, "gelu_approximate"},
    {Activation::Tanh, "tanh"},            {Activation::Sigmoid, "sigmoid"},     {Activation::Exponential, "exponential"},
    {Activation::HardSigmoid, "hard_sigmoid"}, {Activation::HardSilu, "hard_silu"}, {Activation::Mish, "mish"}};
// Keras's aliases (ALL_OBJECTS_DICT["swish"], ["hard_swish"]).
constexpr ActivationName kAliases[] = {{Activation::Silu, "swish"}, {Activation::HardSilu, "hard_swish"}};
}  // namespace

const char* toString(Activation a) {
  for (const auto& n : kActivations)
    if (n.a == a) return n.name;
  return "linear";
}

bool parseActivation(const std::string& name, Activation& out) {
  for (const auto& n : kActivations)
    if (name == n.name) return out = n.a, true;
  for (const auto& n : kAliases)
    if (name == n.name) return out = n.a, true;
  return false;
}

ActivationParams defaultParams(Activation a) {
  ActivationParams p;
  if (a == Activation::LeakyRelu) p.negativeSlope = 0.2;  // keras.activations.leaky_relu (tf.nn.leaky_relu: 0.2 too)
  if (a == Activation::Relu6) p.maxValue = 6;
  return p;
}

std::string activationNames() {
  std::string s;
  for (const auto& n : kActivations) s += (s.empty() ? "" : " | ") + std::string(n.name);
  for (const auto& n : kAliases) s += " | " + std::string(n.name);
  return s;
}

std::uint64_t elementsOf(const std::vector<std::uint64_t>& shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shapeText(const std::vector<std::uint64_t>& shape) {
  std::string s;
  for (auto d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "a scalar" : s;
}

}  // namespace ipusim::scheduler
