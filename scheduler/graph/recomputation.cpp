#include "scheduler/graph/recomputation.hpp"

#include "scheduler/models/auto_checkpoints.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ipusim::scheduler {
namespace {

constexpr std::size_t kNoOp = ~std::size_t(0);

// Ops that write state besides their outputs: running them twice would
// change the numbers.
bool hasSideEffect(OpKind k) {
  switch (k) {
    case OpKind::BatchNormStatistics:  // the moving mean and variance, in place
    case OpKind::IncrementStep:
    case OpKind::MeanLoss:
    case OpKind::Regularization:
    case OpKind::AddLossTerm:
    case OpKind::LearningRate:
    case OpKind::NadamMomentumProduct: return true;
    default: return false;
  }
}

class Recomputation {
 public:
  Recomputation(OpGraph& g, const Workload& w, std::size_t firstBackwardOp)
      : g_(g), firstBackward_(firstBackwardOp),
        wholeStages_(w.pipeline.enabled() && w.pipeline.recomputationMode == kRecomputeThenBackpropagate) {
    // A layer's segment (recomputeSegments: cut by the checkpoints and a
    // pipeline's stages). Layers after the last cut, and ops of no layer
    // (the loss's), are the last segment's.
    const RecomputeSegments segments = recomputeSegments(w);
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
      segmentOf_[w.layers[i].name] = segments.ofLayer[i];
      if (w.pipeline.enabled()) stageOf_[w.layers[i].name] = *w.layers[i].stage;
    }
    checkpointLayers_.insert(w.training.recomputeCheckpoints.begin(), w.training.recomputeCheckpoints.end());
    lastSegment_ = segments.last;
    // Kept: a checkpoint's outputs (its values that a forward op of another
    // layer reads), and a stage's inputs (values a forward op of another
    // stage reads: the copies each stage keeps per mini-batch in flight).
    for (std::size_t op = 0; op < firstBackward_; ++op)
      for (std::size_t in : g_.ops[op].inputs) {
        const std::size_t p = g_.producerOf[in];
        if (p == kNoOp || g_.ops[p].layer == g_.ops[op].layer) continue;
        if (checkpointLayers_.count(g_.ops[p].layer) || stageOfOp(p) != stageOfOp(op)) kept_.insert(in);
      }
  }

  std::size_t run() {
    const std::size_t before = g_.ops.size();
    // In build order (a topological order of the original ops), so a clone
    // is first made for the earliest backward op reading it.
    const std::size_t end = g_.ops.size();
    for (std::size_t op = firstBackward_; op < end; ++op) {
      std::vector<std::size_t> made;
      std::vector<std::size_t> inputs = g_.ops[op].inputs;
      bool changed = false;
      for (std::size_t& in : inputs)
        if (recomputed(in)) {
          in = cloneOf(in, made);
          changed = true;
        }
      if (!changed) continue;
      rewire(op, inputs);
      // After the ops giving `op` its gradients: the clones live only from
      // then. (Recomputing stages whole, only those of a later stage: the
      // clones run before every backward op of their own stage, below.)
      for (std::size_t in : inputs) {
        const std::size_t producer = g_.producerOf[in];
        if (g_.values[in].kind != ValueKind::Gradient || producer == kNoOp) continue;
        if (wholeStages_ && (stageOfOp(producer) == kNoStage || stageOfOp(producer) <= stageOfOp(op))) continue;
        for (std::size_t clone : made) g_.addOrderEdge(producer, clone);
      }
    }
    if (wholeStages_) recomputeStagesBeforeTheirBackward(before);
    return g_.ops.size() - before;
  }

 private:
  // RecomputeThenBackpropagate: every clone of a stage (ops from
  // `firstClone` on) runs before every backward op of its stage, so the
  // stage's forward pass is recomputed whole, then backpropagated. It is
  // enough to order them before the stage's entry ops, those reading a
  // gradient made outside the stage: every other backward op of the stage
  // follows one of them (the gradients all start from the loss). (A
  // pipeline's stage passes run after the gradient reaching the stage.)
  void recomputeStagesBeforeTheirBackward(std::size_t firstClone) {
    std::map<std::uint32_t, std::vector<std::size_t>> entries;  // per stage
    for (std::size_t op = firstBackward_; op < originalOps_; ++op) {
      const std::uint32_t stage = stageOfOp(op);
      if (stage == kNoStage || !producesGradient(op)) continue;
      for (std::size_t in : g_.ops[op].inputs) {
        const std::size_t producer = g_.producerOf[in];
        if (g_.values[in].kind == ValueKind::Gradient && producer != kNoOp && stageOfOp(producer) != stage) {
          entries[stage].push_back(op);
          break;
        }
      }
    }
    for (std::size_t clone = firstClone; clone < g_.ops.size(); ++clone)
      for (std::size_t entry : entries[stageOfOp(clone)]) g_.addOrderEdge(clone, entry);
  }

  bool producesGradient(std::size_t op) const {
    const std::vector<std::size_t>& outs = g_.ops[op].outputs;
    return std::any_of(outs.begin(), outs.end(), [&](std::size_t v) { return g_.values[v].kind == ValueKind::Gradient; });
  }

  static constexpr std::uint32_t kNoStage = ~0u;
  std::uint32_t stageOfOp(std::size_t op) const {
    auto it = stageOf_.find(g_.ops[op].layer);
    return it == stageOf_.end() ? kNoStage : it->second;
  }

  std::size_t segmentOfOp(std::size_t op) const {
    auto it = segmentOf_.find(g_.ops[op].layer);
    return it == segmentOf_.end() ? lastSegment_ : it->second;
  }

  bool recomputed(std::size_t v) const {
    const std::size_t p = g_.producerOf[v];
    return g_.values[v].kind == ValueKind::Activation && p != kNoOp && p < firstBackward_ &&
           !hasSideEffect(g_.ops[p].kind) && segmentOfOp(p) < lastSegment_ && !kept_.count(v);
  }

  // The recomputed copy of value v: its producer's clone's output (made, with
  // the clones of its recomputed inputs, on first use; listed in `made`).
  // Depth first, inputs before the op that reads them, on a stack of its
  // own: recursing once per op overflowed the call stack on a long segment
  // (a checkpoint after 3,000 dense layers: SIGSEGV).
  std::size_t cloneOf(std::size_t v, std::vector<std::size_t>& made) {
    struct Pending {
      std::size_t producer;
      Op op;              // the clone being made: its inputs replaced one by one
      std::size_t input;  // the next input to replace
    };
    std::vector<Pending> stack;
    const auto visit = [&](std::size_t value) {
      if (!clones_.count(value)) stack.push_back({g_.producerOf[value], g_.ops[g_.producerOf[value]], 0});
    };
    visit(v);
    while (!stack.empty()) {
      Pending& top = stack.back();
      if (top.input < top.op.inputs.size()) {
        std::size_t& in = top.op.inputs[top.input];
        if (!recomputed(in)) {
          ++top.input;
        } else if (auto it = clones_.find(in); it != clones_.end()) {
          in = it->second;
          ++top.input;
        } else {
          visit(in);  // (back to this input once its clone is made)
        }
        continue;
      }
      Op op = std::move(top.op);
      const std::size_t producer = top.producer;
      stack.pop_back();
      for (std::size_t& out : op.outputs) {
        Value copy = g_.values[out];
        copy.name += " [recomputed]";
        const std::size_t original = out;
        out = g_.addValue(std::move(copy));
        clones_[original] = out;
      }
      op.recomputed = true;
      op.name = "recompute/" + op.name;
      const std::size_t clone = g_.addOp(std::move(op));
      keepOrderAfter(producer, clone);
      made.push_back(clone);
    }
    return clones_.at(v);
  }

  // A clone reads what its original reads, so it must run before what
  // the original runs before without reading its outputs: the in-place
  // updates of the backward pass and after it (a weight's update after every
  // reader of the weight: the clone of a mixed-precision model's cast of a
  // weight to half, or of a product reading it, must not read the updated
  // weight).
  void keepOrderAfter(std::size_t original, std::size_t clone) {
    std::vector<std::size_t> after;
    for (auto [e, end] = boost::out_edges(original, g_.graph); e != end; ++e) {
      const std::size_t next = boost::target(*e, g_.graph);
      if (next < firstBackward_ || next >= originalOps_) continue;
      const std::vector<std::size_t>& reads = g_.ops[next].inputs;
      const std::vector<std::size_t>& writes = g_.ops[original].outputs;
      if (std::none_of(reads.begin(), reads.end(),
                       [&](std::size_t in) { return std::find(writes.begin(), writes.end(), in) != writes.end(); }))
        after.push_back(next);
    }
    for (std::size_t next : after) g_.addOrderEdge(clone, next);
  }

  // Op `op` reads `inputs` instead of its inputs. (Its edges from the
  // originals' producers stay: those forward ops ran before it anyway, and
  // the originals' lives end at their last reader.)
  void rewire(std::size_t op, const std::vector<std::size_t>& inputs) {
    for (std::size_t in : inputs)
      if (g_.producerOf[in] != kNoOp) g_.addOrderEdge(g_.producerOf[in], op);
    g_.ops[op].inputs = inputs;
  }

  OpGraph& g_;
  const std::size_t firstBackward_;
  const bool wholeStages_;  // a pipeline's RecomputeThenBackpropagate
  const std::size_t originalOps_ = g_.ops.size();  // the ops before any clone
  std::map<std::string, std::size_t> segmentOf_;
  std::map<std::string, std::uint32_t> stageOf_;  // a pipeline's layers' stages
  std::size_t lastSegment_ = 0;
  std::set<std::string> checkpointLayers_;
  std::set<std::size_t> kept_;
  std::map<std::size_t, std::size_t> clones_;  // original value -> its recomputed copy
};

}  // namespace

std::size_t addRecomputation(OpGraph& g, const Workload& w, std::size_t firstBackwardOp) {
  if (!recomputes(w)) return 0;
  return Recomputation(g, w, firstBackwardOp).run();
}

}  // namespace ipusim::scheduler
