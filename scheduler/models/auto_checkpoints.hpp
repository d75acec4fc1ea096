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
// excepted), then every ceil(sqrt(m))-th of the m candidates, of which only
// those that cut something: whose segment a fit recomputes an op of (its
// training graph, as recomputationSummary lists them). When none does,
// the same choice among the candidates after the first at which a
// checkpoint would cut. Empty when the model has fewer than two
// candidates, or when no checkpoint would recompute anything.
std::vector<std::string> autoRecomputeCheckpoints(const Workload& w);

// Where the fit's recomputation cuts the model: each layer's segment, the
// number of cuts before it in layer order. A checkpoint
// (w.training.recomputeCheckpoints) ends its segment; in a pipeline that
// recomputes (pipeline.recomputation_mode) so does each stage, whose
// forward pass is recomputed from its inputs, stashed per mini-batch. The
// last segment, the layers after the last cut (and the loss), is not
// recomputed: its backward pass runs right after it. The one definition
// the graph (graph/recomputation.hpp) and the up-front memory estimate share.
struct RecomputeSegments {
  std::vector<std::size_t> ofLayer;  // per layer of w.layers
  std::size_t last = 0;              // the segment not recomputed
  // Checkpoints that cut nothing, said in a warning: on the model's last
  // computing layer (see recomputeSegments), or, in a pipeline that
  // recomputes, on a stage's last layer, where the stage's cut lies already.
  struct Uncut {
    std::string layer;
    std::string why;  // "it is the model's last layer, ... (training.recompute_checkpoints: expected ...)"
  };
  std::vector<Uncut> cuttingNothing;
};
RecomputeSegments recomputeSegments(const Workload& w);

// Whether a fit of `w` recomputes: checkpoints, or a pipeline's recomputation mode.
bool recomputes(const Workload& w);

// `w` recomputing as "auto" would make it: a pipeline with
// pipeline.recomputation_mode "Auto", another model with
// training.recompute_checkpoints "auto" (none found: unchanged). What the
// out-of-memory summaries try.
Workload withAutoRecomputation(const Workload& w);

// What a compiled fit recomputes: the one definition every summary prints
// (the run's and the compile's, their text and --json), so none claims
// recomputation the compiled step does not do. Asked-for recomputation that
// finds nothing to recompute has no ops, no checkpoints and no mode.
struct RecomputationSummary {
  std::size_t ops = 0;                   // the forward ops recomputed in the backward pass
  // The checkpoints (in the order given) that end a segment in which an op
  // is recomputed: not those that cut nothing (RecomputeSegments), nor those
  // whose segment keeps every value its backward pass reads.
  std::vector<std::string> checkpoints;
  std::string mode;                      // pipeline.recomputation_mode; empty outside a pipeline
};
// `recomputedLayers`: the layer of each op the compiled step recomputes
// (graph/recomputation.hpp's clones).
RecomputationSummary recomputationSummary(const Workload& w, const std::vector<std::string>& recomputedLayers);

// For the summaries: "from 3 checkpoints (training.recompute_checkpoints)",
// "each stage's forward pass (pipeline.recomputation_mode
// RecomputeThenBackpropagate)", ... (of r.checkpoints and r.mode; the
// caller says whether anything is recomputed: r.ops).
std::string describe(const RecomputationSummary& r);

}  // namespace ipusim::scheduler
