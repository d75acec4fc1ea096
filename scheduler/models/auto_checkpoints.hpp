#pragma once
// training.recompute_checkpoints: "auto" — the checkpoints chosen as Chen,
// Xu, Zhang and Guestrin choose them ("Training Deep Nets with Sublinear
// Memory Cost", 2016, arXiv:1604.06174, section 4.1): the model cut into
// about sqrt(n) segments of about sqrt(n) layers each, the cuts taken only
// where the layer graph narrows to one value (an articulation point: no
// later layer reads anything before the cut but the cut layer itself), so
// a segment's recomputation starts from its checkpoint alone. On a chain
// every layer is a candidate; on a residual network, the blocks' outputs.
#include "scheduler/models/workload.hpp"

#include <string>
#include <vector>

namespace ipusim::scheduler {

// The candidates (articulation layers, in layer order, the output layers
// excepted), then every ceil(sqrt(m))-th of the m candidates. Empty when
// the model has fewer than two candidates.
std::vector<std::string> autoRecomputeCheckpoints(const Workload& w);

// Each layer's recomputation segment under w.training.recomputeCheckpoints:
// the number of checkpoints before it in layer order (a checkpoint ends its
// segment); the last segment, numbered the checkpoints' count, is not
// recomputed. The one definition the graph (graph/recomputation.hpp) and
// the up-front memory estimate share.
std::vector<std::size_t> recomputeSegments(const Workload& w);

}  // namespace ipusim::scheduler
