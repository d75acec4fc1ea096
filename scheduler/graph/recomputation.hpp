#pragma once
// Recomputation outside pipelines, as Graphcore's manual recomputation
// (`recompute_mode: manual`, `recompute_checkpoints` in graphcore/examples'
// vision/cnns/pytorch/train/configs.yml; TF's RecomputationCheckpoint): the
// checkpoint layers cut the forward pass into segments; the backward pass
// keeps only the checkpoints' outputs, and every other activation a backward
// op of an earlier segment reads is computed again, by a clone of its forward
// ops (Op::recomputed), just before it is needed.
//
// - A value is recomputed when a backward op reads it and it is an
//   activation produced by a forward op of a segment before the last one,
//   not a checkpoint layer's output (a value of the layer read by a forward
//   op of another layer), and its producer has no side effect (a batch
//   normalization's statistics update the moving averages in place: their
//   outputs, a few values per channel, are kept). The last segment, the
//   layers after the last checkpoint and the loss, is not recomputed: its
//   backward pass runs right after it.
// - A clone reads the clones of its recomputed inputs and the originals of
//   the rest (weights, checkpoints, the step count: a dropout mask is drawn
//   again from the same seed and step), so it computes the same numbers; each
//   value is recomputed once, shared by the backward ops that read it.
// - Order: a clone made for a backward op runs after the ops giving that op
//   its gradients, so the recomputed values live only during their segment's
//   backward pass, while the originals die after their last forward reader.
//
// In a pipeline (pipeline.recomputation_mode, TF's RecomputationMode), each
// stage is a segment of its own as well (auto_checkpoints.hpp's
// recomputeSegments): its inputs, which it keeps per mini-batch in flight,
// are kept, and its other activations are recomputed in its backward pass
// (the compiler puts the clones in the stage's backward passes), so a
// mini-batch in flight holds only the stage's inputs (and checkpoints). The
// last stage is not recomputed: its backward pass follows its forward.
// - RecomputeAndBackpropagateInterleaved: clones ordered as above, each
//   just before the backward ops needing it, the stage cut further by the
//   checkpoints;
// - RecomputeThenBackpropagate: the stage's whole forward pass is recomputed
//   before its first backward op (checkpoints have no effect), so its
//   recomputed activations are all live at once as the backward pass starts.
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/workload.hpp"

#include <cstddef>

namespace ipusim::scheduler {

// Rewrites the training step `g` for w.training.recomputeCheckpoints and
// w.pipeline.recomputationMode (neither, or not a fit: unchanged). `firstBackwardOp`: the index of the first op of the backward
// pass (every op before it is the forward pass and the loss). Returns the
// number of ops added.
std::size_t addRecomputation(OpGraph& g, const Workload& w, std::size_t firstBackwardOp);

}  // namespace ipusim::scheduler
