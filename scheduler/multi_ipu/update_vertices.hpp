#pragma once
// The weight updates' vertices as the multi-IPU passes find them (the
// all-reduce, gradient accumulation): plain SGD's ScaledAdd reads its
// gradient as `deltas`, a fused rule (Adam, momentum, ...) as `grad`; both
// update the weight in `data`.
#include "model/ir/executable.hpp"

namespace ipusim::scheduler {

inline bool isScaledAddUpdate(const ir::Vertex& v) { return v.codelet.rfind("ScaledAdd", 0) == 0; }
inline const char* gradientField(const ir::Vertex& v) { return isScaledAddUpdate(v) ? "deltas" : "grad"; }

}  // namespace ipusim::scheduler
