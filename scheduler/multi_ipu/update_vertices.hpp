#pragma once
// The weight updates' vertices as the multi-IPU passes find them (the
// all-reduce, gradient accumulation): plain SGD's ScaledAdd reads its
// gradient as `deltas`, a fused rule (Adam, momentum, ...) as `grad`; both
// update the weight in `data`.
#include "model/codelets/per_worker.hpp"
#include "model/ir/executable.hpp"

namespace ipusim::scheduler {

// (SGD's update is one PerWorker<ScaledAdd> vertex a placed range: model/codelets/per_worker.hpp.)
inline bool isScaledAddUpdate(const ir::Vertex& v) {
  return model::workerCodeletOf(v.codelet.str()).rfind("ScaledAdd", 0) == 0;
}
inline const char* gradientField(const ir::Vertex& v) { return isScaledAddUpdate(v) ? "deltas" : "grad"; }

}  // namespace ipusim::scheduler
