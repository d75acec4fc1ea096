#pragma once
// The temporaries a matmul or convolution plan makes on its tiles (operand
// copies and partials), which the planners keep within their budget
// (ipu.available_memory_proportion x tile memory: planning/matmul_plan.hpp,
// planning/conv_plan.hpp). The lowerings name them with these suffixes, so
// that an out-of-memory summary can tell them from other temporaries (a
// reduction's sums, a pool's windows): a lower proportion shrinks these only.
// A pipeline's copy of one for a later mini-batch (its name followed by
// " [mini-batch m]") is one too.
#include <string_view>

namespace ipusim::scheduler {

inline constexpr const char* kMatMulABlocks = "/a_blocks";
inline constexpr const char* kMatMulBBlocks = "/b_blocks";
inline constexpr const char* kConvWindows = "/windows";
inline constexpr const char* kConvKernelBlocks = "/kernel_blocks";
inline constexpr const char* kConvDeltasBlocks = "/deltas_blocks";
inline constexpr const char* kPlanPartials = "/partials";  // a matmul's or a convolution's

bool isPlanTemporary(std::string_view tensorName);

}  // namespace ipusim::scheduler
