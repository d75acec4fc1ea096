#pragma once
// Workload key overrides: `key.path=value` assignments applied to a
// workload's JSON before it is parsed, so that any workload key can be
// changed from the command line (`ipusim run --workload-set`, sweeps).
#include "scheduler/models/workload.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ipusim::sim {

// Set by `ipusim sweep` in a point's environment: the --vary values the
// point's --workload-set assignments come from ("--vary steps=3"), which the
// child's errors name instead of a --workload-set the user never typed.
// `ipusim run` reads it once and removes it (not inherited further).
inline constexpr const char* kWorkloadSetsFromVariable = "IPUSIM_WORKLOAD_SETS_FROM";

// Splits "a.b.c=value" into the key path and the value. The value is JSON
// when it parses as JSON (10, 0.5, true, "x", [1,2]), else a plain string
// (ALL). Throws std::invalid_argument naming the assignment when there is no
// '=' or the key is empty.
std::pair<std::vector<std::string>, nlohmann::json> parseWorkloadAssignment(const std::string& assignment);

// Sets the key path in `workload` (objects created as needed). A part may
// index a list that is there: "model.layers[0].units=4", "model.layers[1]={...}".
// Throws std::invalid_argument naming the assignment when a step of the path
// is not an object (or, indexed, not a list), or an index is beyond the list.
void applyWorkloadAssignment(nlohmann::json& workload, const std::string& assignment);
// `ipusim run --input-shape H,W,C`: positive sizes separated by commas, as
// a JSON array; an error naming the option and the part that is not a size.
nlohmann::json inputShapeJson(const std::string& text);

// Reads the workload file, applies the assignments and parses it (unknown
// keys and bad values are errors naming the file and key, as without them).
// (`from`: the flags that gave the assignments, as the errors name them.)
scheduler::Workload loadWorkloadWith(const std::string& path, const std::vector<std::string>& assignments,
                                     const std::string& from = "--workload-set");

// `ipusim run --keras MODEL.json`: a workload of the Keras file with the
// defaults for the rest (Fashion-MNIST when the model reads 28x28 images
// into 10 classes, else synthetic data; the compile_config's optimizer, loss
// and steps_per_execution when it has one), then the assignments.
scheduler::Workload kerasWorkload(const std::string& kerasPath, const std::vector<std::string>& assignments,
                                  const std::string& from = "--workload-set");

// Key paths of `workload` whose last part is `leaf` ("steps_per_execution"
// -> {"training.steps_per_execution"}), for short names in sweeps.
std::vector<std::string> workloadKeysNamed(const nlohmann::json& workload, const std::string& leaf);

}  // namespace ipusim::sim
