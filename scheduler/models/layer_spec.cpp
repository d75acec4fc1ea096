#include "scheduler/models/layer_spec.hpp"

namespace ipusim::scheduler {
namespace {
struct ActivationName { Activation a; const char* name; };
constexpr ActivationName kActivations[] = {{Activation::Linear, "linear"}, {Activation::Relu, "relu"},
                                           {Activation::Sigmoid, "sigmoid"}, {Activation::Tanh, "tanh"},
                                           {Activation::Softmax, "softmax"}, {Activation::Gelu, "gelu"}};
}  // namespace

const char* toString(Activation a) {
  for (const auto& n : kActivations)
    if (n.a == a) return n.name;
  return "linear";
}

bool parseActivation(const std::string& name, Activation& out) {
  for (const auto& n : kActivations)
    if (name == n.name) return out = n.a, true;
  return false;
}

std::string activationNames() {
  std::string s;
  for (const auto& n : kActivations) s += (s.empty() ? "" : " | ") + std::string(n.name);
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
