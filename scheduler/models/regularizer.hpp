#pragma once
// Keras's weight and activity regularizers (keras/src/regularizers/
// regularizers.py; tf_keras/regularizers.py): L1, L2 and L1L2, a penalty
// added to the loss the optimizer minimizes,
//   l1 * sum(abs(x)) + l2 * sum(square(x)),
// x a weight (kernel_regularizer, bias_regularizer, depthwise_, pointwise_,
// gamma_, beta_, alpha_regularizer) or a layer's output
// (activity_regularizer; Keras divides that one by the batch size, both
// Keras 3's Layer.__call__ and TF 2.x's base_layer).
// Written as either format writes it, by one set of rules:
//   - a name: "l1" (l1 0.01), "l2" (l2 0.01), "l1_l2" (both 0.01: the
//     string's defaults, tf_keras's deserialize special case and both
//     Keras's documentation; Keras 3's get("l1_l2") builds L1L2() with
//     zeros, a no-op, which ipusim does not copy);
//   - a Keras object {"class_name": "L1" | "L2" | "L1L2" (or l1, l2, l1_l2),
//     "config": {...}} (module, registered_name ignored), with the class's
//     defaults: L1 l1 0.01, L2 l2 0.01, L1L2 0 and 0; null means the default,
//     TF 2.x's legacy "l" is L1's l1 or L2's l2;
//   - the workload's object {"type": "l1" | "l2" | "l1_l2", "l1", "l2"}, the
//     same classes' keys and defaults.
// Factors are finite numbers >= 0 (Keras's validate_float_arg). An
// OrthogonalRegularizer or any other class is refused by name.
// Internal to scheduler/.
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct Workload;

struct RegularizerSpec {
  double l1 = 0, l2 = 0;
  std::string text;  // as the file wrote it, for messages
  bool operator==(const RegularizerSpec& o) const { return l1 == o.l1 && l2 == o.l2; }
};

// The regularizer `v` (null: none, returns false); calls fail(what) on one
// that is not modelled or a value out of its range.
bool readRegularizer(const nlohmann::json& v, RegularizerSpec& out, const std::function<void(const std::string&)>& fail);

// The regularizer keys of a layer kind (Keras's names: "kernel_regularizer",
// ..., "activity_regularizer"); none for kinds without weights.
std::vector<std::string> regularizerKeys(const std::string& kind);
// The weight a regularizer key penalizes in a layer of `kind`, by its name
// in the training graph ("kernel", "depthwise_kernel", "gamma", ...), or
// "activity" for the layer's output.
std::string regularizedWeight(const std::string& key, const std::string& kind);
inline constexpr const char* kActivityRegularizer = "activity";

// Whether any layer of `w` has a regularizer (the loss then has a
// regularization term, outfed beside it).
bool hasRegularizers(const Workload& w);

}  // namespace ipusim::scheduler
