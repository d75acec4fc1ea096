#include "scheduler/models/dtype_policy.hpp"

namespace ipusim::scheduler {

bool isModelledDtypePolicy(const std::string& name) {
  return name == "float32" || name == "float16" || name == "mixed_float16";
}

std::string dtypePolicyRefusal(const std::string& name) {
  std::string why;
  // The IPU computes in IEEE float (32-bit) and half (16-bit); Poplar has no
  // bfloat16 type, and no hardware 64-bit floating point (Poplar User Guide,
  // "Supported types").
  if (name == "bfloat16" || name == "mixed_bfloat16")
    why = ": bfloat16 is not an arithmetic type of the IPU (its hardware computes in 32-bit float and 16-bit IEEE "
          "half; mixed_float16 is the IPU's mixed precision)";
  else if (name == "float64")
    why = ": the IPU has no 64-bit floating-point arithmetic (its hardware computes in 32-bit float and 16-bit half)";
  return "'" + name + "' is not modelled (float32 | float16 | mixed_float16)" + why;
}

}  // namespace ipusim::scheduler
