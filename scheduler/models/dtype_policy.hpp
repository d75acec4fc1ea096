#pragma once
// Keras's dtype policy names ipusim models, for a workload's model.dtype and
// a Keras layer's dtype alike (one message for both): float32 (float32
// variables and compute), float16 (both half) and mixed_float16 (float32
// variables, half compute). Internal to scheduler/.
#include <string>

namespace ipusim::scheduler {

bool isModelledDtypePolicy(const std::string& name);
// Why `name` is refused: "'bfloat16' is not modelled (float32 | float16 |
// mixed_float16): ...", with the reason where there is one (bfloat16 and
// float64 have no IPU arithmetic).
std::string dtypePolicyRefusal(const std::string& name);

}  // namespace ipusim::scheduler
