#pragma once
// Keras's weight initializers (keras/src/initializers/): what a layer's
// kernel_initializer, bias_initializer, ... says, and the values it gives a
// weight of a given shape. Every built-in with a distribution or a constant:
// Zeros, Ones, Constant(value); RandomUniform(minval, maxval),
// RandomNormal(mean, stddev), TruncatedNormal(mean, stddev: cut at two
// deviations); VarianceScaling(scale, mode fan_in | fan_out | fan_avg,
// distribution truncated_normal | untruncated_normal | uniform; TF's
// "normal" is its truncated_normal) and its named forms GlorotUniform,
// GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal; the
// snake_case names (glorot_uniform, ...) and Keras 1's (uniform, normal);
// Orthogonal(gain) (Keras 3's OrthogonalInitializer too: the weight read as
// a matrix of all dimensions but the last by the last, at least 2-D) and
// Identity(gain) (IdentityInitializer: 2-D weights only, rectangular
// allowed). Fans as Keras's compute_fans: the last two dimensions of the
// weight as Keras stores it are its inputs and outputs, the others the
// receptive field.
#include "model/ir/tensor.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct InitializerSpec {
  enum class Kind { Constant, Uniform, Normal, TruncatedNormal, VarianceScaling, Orthogonal, Identity };
  Kind kind = Kind::Constant;
  // Constant: value a; Uniform: [a, b); (Truncated)Normal: mean a, deviation b;
  // VarianceScaling: scale a; Orthogonal, Identity: gain a.
  double a = 0, b = 0;
  std::string mode = "fan_in";                   // VarianceScaling
  std::string distribution = "truncated_normal";  // VarianceScaling
  std::string text;                              // as the file wrote it, for messages
  std::string key;                               // the layer's key that gave it ("kernel_initializer"), for messages
  bool operator==(const InitializerSpec& o) const {
    return kind == o.kind && a == o.a && b == o.b && mode == o.mode && distribution == o.distribution;
  }
};

// A Keras initializer (a name, or {"class_name", "config"}); calls
// fail(what) on one that is not modelled or a value out of its range.
InitializerSpec readInitializer(const nlohmann::json& v, const std::function<void(const std::string&)>& fail);

// Keras's defaults: GlorotUniform for kernels, Zeros for biases.
InitializerSpec glorotUniformSpec();
InitializerSpec constantSpec(double value);

// The values of a weight of `shape` (as Keras stores it): drawn at load
// (from `seed`), or a constant. Calls fail(what) when the initializer does
// not fit the shape (as Keras raises: Orthogonal on fewer than 2
// dimensions, Identity on other than 2).
struct InitialValues {
  std::optional<ir::DrawnInit> drawn;
  double fill = 0;
};
InitialValues initialValuesOf(const InitializerSpec& spec, const std::vector<std::uint64_t>& shape, std::uint64_t seed,
                              const std::function<void(const std::string&)>& fail);

}  // namespace ipusim::scheduler
