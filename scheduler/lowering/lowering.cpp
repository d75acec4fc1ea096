#include "scheduler/lowering/lowering.hpp"

#include "model/codelets/per_worker.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "scheduler/lowering/conv_lowering.hpp"
#include "scheduler/lowering/embedding_lowering.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/matmul_lowering.hpp"
#include "scheduler/lowering/optimizer_lowering.hpp"
#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/padding_layers.hpp"
#include "scheduler/lowering/pool_lowering.hpp"
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/lowering/reduction.hpp"
#include "scheduler/lowering/view_copy.hpp"
#include "scheduler/multi_ipu/collectives.hpp"
#include "scheduler/planning/tile_mapper.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <tuple>
#include <utility>

namespace ipusim::scheduler {
namespace {

using ir::Id;

// [begin, end) of a rows x cols row-major tensor in runs that are either
// part of one row or whole rows.
struct RowRun { std::uint64_t begin, rows, col, len; };
std::vector<RowRun> rowRuns(std::uint64_t begin, std::uint64_t end, std::uint64_t cols) {
  std::vector<RowRun> runs;
  for (std::uint64_t e = begin; e < end;) {
    const std::uint64_t col = e % cols;
    if (col == 0 && end - e >= cols) {
      const std::uint64_t rows = (end - e) / cols;
      runs.push_back({e, rows, 0, cols});
      e += rows * cols;
    } else {
      const std::uint64_t len = std::min(end - e, cols - col);
      runs.push_back({e, 1, col, len});
      e += len;
    }
  }
  return runs;
}

class Lowerer {
 public:
  Lowerer(OpGraph& g, const model::Target& target, std::uint32_t tiles, std::uint64_t budget)
      : g_(g), target_(target), tiles_(tiles), budget_(budget), b_(target), tensorOf_(g.values.size(), ir::kNoId) {
    b_.setOpTiles(tiles);
  }

  LoweredStep run(const Schedule& schedule, const std::map<std::string, std::uint32_t>& tileBaseOfLayer,
                  std::uint64_t maxVertices) {
    LoweredStep out;
    placeEmbeddingTables(tileBaseOfLayer);
    // The vertices laid out so far, held to maxVertices (kMaxLaidOutVertices) as each op is
    // lowered: a model's step may need more than the host can lay out (a
    // 2-layer LSTM(256) unrolled over 256 steps at batch 32 on a Mk2: 31 M
    // vertices, past 8 GB), and stops at the bound instead of after it.
    std::uint64_t vertices = 0;
    std::size_t countedComputeSets = 0;
    std::optional<ir::Cycles> trainingStepCycles;  // the estimate before a validation pass's first op
    for (std::size_t opIndex : schedule.order) {
      const Op& op = g_.ops[opIndex];
      if (g_.isValidationOp(opIndex) && !trainingStepCycles) trainingStepCycles = b_.estimatedCycles();
      const auto base = tileBaseOfLayer.find(op.layer);
      if (base != tileBaseOfLayer.end()) b_.setTileBase(base->second);
      b_.beginOp({op.layer, op.name});
      const std::vector<std::pair<std::size_t, Id>> remote = tileBaseOfLayer.empty() ? decltype(remote){} : bringToThisIpu(op);
      lowerOp(op);
      for (; countedComputeSets < b_.exe().computeSets.size(); ++countedComputeSets)
        vertices += b_.exe().computeSets[countedComputeSets].vertices.size();
      if (vertices > maxVertices)
        throw std::invalid_argument(
            "layer '" + op.layer + "': the step lays out more than " + std::to_string(maxVertices) +
            " vertices by its op '" + op.name + "' (" + std::to_string(vertices) + " so far), over the limit "
            "(scheduler/models/workload_limits.hpp: host memory grows with them, about 400 bytes each): use fewer "
            "steps, a smaller batch or smaller layers");
      for (const auto& [value, tensor] : remote) tensorOf_[value] = tensor;
      ir::Program seq;
      seq.kind = ir::ProgramKind::Sequence;
      seq.name = op.layer + "/" + op.name;
      seq.children = b_.endOp();
      seq.debug = {op.layer, op.name};
      seq.id = Id(b_.exe().programs.size());
      b_.exe().programs.push_back(seq);
      out.opSequences.push_back(seq.id);
    }
    for (std::size_t v : {g_.images, g_.labels})  // (predict has no labels)
      if (v < g_.values.size() && tensorOf_[v] == ir::kNoId) define(v, mapTensor(g_.values[v].shape, dtypeOf(v), target_, tiles_));
    out.images = tensorOf_[g_.images];
    out.labels = g_.labels < g_.values.size() ? tensorOf_[g_.labels] : ir::kNoId;
    out.loss = tensorOf_[g_.loss];
    if (g_.validationLoss < g_.values.size()) out.validationLoss = tensorOf_[g_.validationLoss];
    for (std::size_t w : g_.modelWeights) out.weightTensors.push_back(tensorOf_[w]);
    out.useSpans = b_.useSpans();
    out.shardOfVertex = std::move(shardOfVertex_);
    out.lastStep = b_.currentStep() - 1;
    out.estimatedStepCycles = trainingStepCycles.value_or(b_.estimatedCycles());
    out.estimatedValidationStepCycles = b_.estimatedCycles() - out.estimatedStepCycles;
    out.exe = std::move(b_.exe());
    return out;
  }

 private:
  // ---- values ----
  static std::string categoryOf(const Value& v) {
    switch (v.kind) {
      case ValueKind::Input: return "stream_buffers";
      case ValueKind::Weight:
      case ValueKind::NonTrainable: return "weights";
      case ValueKind::Gradient: return "gradients";
      case ValueKind::OptimizerState:
      case ValueKind::StepCounter:
      case ValueKind::PerTile: return "optimizer";
      default: return "activations";
    }
  }
  ir::DType dtypeOf(std::size_t value) const { return g_.values[value].dtype; }
  // The codelet `base` typed for `types` ("Relu<half>"; plain when all float).
  static std::string typed(const std::string& base, std::initializer_list<ir::DType> types) {
    return model::typedCodeletName(base, types);
  }

  Id define(std::size_t value, const Placement& p) {
    const Value& v = g_.values[value];
    if (v.kind == ValueKind::StepCounter || v.kind == ValueKind::PerTile) {
      // One copy per tile of the replica (every IPU of a sharded one), n
      // elements each, tile t's at [t n, (t + 1) n): read where it is
      // needed, never exchanged (copyOf).
      const std::uint64_t n = v.numElements();
      const std::uint32_t copies = target_.totalTiles();
      Placement perTile;
      for (std::uint32_t t = 0; t < copies; ++t) perTile.push_back({t * n, (t + 1) * n, t - b_.tileBase()});
      const Id t = b_.addTensor(v.name, {copies * n}, dtypeOf(value), categoryOf(v), true, perTile);
      if (!v.initialValues.empty())
        for (std::uint32_t c = 0; c < copies; ++c)
          b_.exe().tensors[t].initialValue.insert(b_.exe().tensors[t].initialValue.end(), v.initialValues.begin(),
                                                   v.initialValues.end());
      else if (v.initialFill != 0)
        b_.exe().tensors[t].initialValue.assign(copies * n, v.initialFill);
      tensorOf_[value] = t;
      return t;
    }
    const Id t = b_.addTensor(v.name, v.shape, dtypeOf(value), categoryOf(v), v.alwaysLive(), p);
    b_.exe().tensors[t].drawnInit = v.drawnInit;
    if (!v.drawnInit && v.initialFill != 0) b_.exe().tensors[t].initialValue.assign(v.numElements(), v.initialFill);
    if (!v.drawnInit && !v.initialValues.empty()) b_.exe().tensors[t].initialValue = v.initialValues;
    tensorOf_[value] = t;
    return t;
  }
  // The value's tensor, defined with the default mapping on first use.
  Id tensorOf(std::size_t value) {
    if (tensorOf_[value] == ir::kNoId) define(value, mapTensor(g_.values[value].shape, dtypeOf(value), target_, tiles_));
    return tensorOf_[value];
  }
  // The value in placement `p`: its own tensor, or a copy laid out so.
  Id realize(std::size_t value, const Placement& p) {
    if (tensorOf_[value] == ir::kNoId) return define(value, p);
    const Id t = tensorOf_[value];
    if (normalized(b_.placementOf(t)) == normalized(p)) return t;
    const Value& v = g_.values[value];
    const Id relaid = b_.addTensor(v.name + "/relaid", v.shape, dtypeOf(value), "temporaries", false, p);
    std::vector<ir::CopyRegion> regions{{{t, 0, v.numElements()}, {relaid, 0, v.numElements()}}};
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), "relayout", estimate);
    return relaid;
  }
  Id produce(std::size_t value, const Placement& p) { return define(value, p); }
  // A sharded model: the activations and gradients `op` reads from another
  // IPU, copied to this one first (one Copy "to_ipu" over the IPU-Links per
  // value and IPU, kept for later readers there), as Poplar copies a tensor
  // between shards once, rather than every tile's gather of it crossing the
  // links. Points tensorOf_ at the copies for the op; returns what to restore.
  std::vector<std::pair<std::size_t, Id>> bringToThisIpu(const Op& op) {
    std::vector<std::pair<std::size_t, Id>> restore;
    const std::uint32_t base = b_.tileBase(), perIpu = target_.tile.tilesPerIpu;
    for (std::size_t v : op.inputs) {
      const Value& value = g_.values[v];
      const bool copyable = value.kind == ValueKind::Activation || value.kind == ValueKind::Gradient;
      if (!copyable || tensorOf_[v] == ir::kNoId) continue;
      if (std::any_of(restore.begin(), restore.end(), [&](const auto& r) { return r.first == v; })) continue;
      const auto& mapping = b_.tensor(tensorOf_[v]).mapping;
      const bool elsewhere = std::any_of(mapping.begin(), mapping.end(), [&](const ir::TileInterval& i) {
        return i.tile < base || i.tile >= base + perIpu;
      });
      if (!elsewhere) continue;
      const auto [at, first] = onIpu_.try_emplace({v, base}, ir::kNoId);
      Id& local = at->second;
      if (first) {
        local = b_.addTensor(value.name + "/on_ipu_" + std::to_string(base / perIpu), value.shape, dtypeOf(v), "temporaries",
                             false, mapTensor(value.shape, dtypeOf(v), target_, tiles_));
        std::vector<ir::CopyRegion> regions{{{tensorOf_[v], 0, value.numElements()}, {local, 0, value.numElements()}}};
        const ir::Cycles estimate = estimateCopy(b_, regions);
        b_.copy(std::move(regions), "to_ipu", estimate);
      }
      restore.emplace_back(v, tensorOf_[v]);
      tensorOf_[v] = local;
    }
    return restore;
  }
  // The copy on `tile` (relative to the op's shard) of a step counter or PerTile value.
  ir::TensorRef copyOf(std::size_t value, std::uint32_t tile) {
    const std::uint64_t n = g_.values[value].numElements(), at = std::uint64_t(tile + b_.tileBase()) * n;
    return {tensorOf(value), at, at + n};
  }
  // The weight a layer's gradient updates (same layer, same shape), if any.
  std::size_t weightOf(const Op& op, const std::vector<std::uint64_t>& shape) const {
    for (std::size_t w : g_.weights)
      if (g_.values[w].layer == op.layer && g_.values[w].shape == shape) return w;
    return ~std::size_t(0);
  }

  // ---- ops ----
  void lowerOp(const Op& op) {
    switch (op.kind) {
      case OpKind::MatMul:
      case OpKind::BatchMatMul: lowerMatMulOp(op); break;
      case OpKind::AddBias: lowerAddBias(op); break;
      case OpKind::Relu: lowerElementwise(op, typed("Relu", {dtypeOf(op.outputs[0])}), {"in"}, "out"); break;
      case OpKind::ReluGrad:
        lowerElementwise(op, typed("ReluGrad", {dtypeOf(op.outputs[0])}), {"activation", "gradIn"}, "gradOut");
        break;
      case OpKind::Cast:
        lowerElementwise(op, typed("Cast", {dtypeOf(op.inputs[0]), dtypeOf(op.outputs[0])}), {"in"}, "out");
        break;
      case OpKind::SoftmaxCrossEntropy: lowerSoftmaxCrossEntropy(op); break;
      case OpKind::SoftmaxCrossEntropyGrad: lowerSoftmaxCrossEntropyGrad(op); break;
      case OpKind::ReduceRows: lowerReduceRows(op); break;
      case OpKind::MeanLoss: lowerMeanLoss(op); break;
      case OpKind::Accuracy: lowerAccuracy(op); break;
      case OpKind::RowLoss: lowerRowLoss(op); break;
      case OpKind::TargetDifference: lowerTargetDifference(op); break;
      case OpKind::SgdUpdate: lowerSgdUpdate(op); break;
      case OpKind::NonLinearity:
      case OpKind::NonLinearityGrad: {
        const ActivationCodelets c = activationCodelets(op.activation, op.activationParams);
        const bool grad = op.kind == OpKind::NonLinearityGrad;
        lowerElementwise(op, typed(grad ? c.gradient : c.forward, {dtypeOf(op.outputs[0])}),
                         grad ? std::vector<std::string>{"activation", "gradIn"} : std::vector<std::string>{"in"},
                         grad ? "gradOut" : "out", c.params);
        break;
      }
      case OpKind::IncrementStep: lowerIncrementStep(op); break;
      case OpKind::Dropout: lowerDropout(op, "Dropout", "in", "out"); break;
      case OpKind::DropoutGrad: lowerDropout(op, "Dropout", "in", "out"); break;  // the same mask, applied to the gradient
      case OpKind::GaussianNoise: lowerDropout(op, op.codelet, "in", "out", "stddev"); break;
      case OpKind::MomentumUpdate:
      case OpKind::AdamUpdate:
      case OpKind::RmspropUpdate:
      case OpKind::GradientDescentUpdate:
      case OpKind::AdagradUpdate:
      case OpKind::AdamaxUpdate:
      case OpKind::NadamUpdate: lowerOptimizerUpdate(op); break;
      case OpKind::LearningRate:
      case OpKind::NadamMomentumProduct: lowerOptimizerScalar(op); break;
      case OpKind::SumOfSquares: {
        std::vector<Id> ins;
        for (std::size_t in : op.inputs) ins.push_back(tensorOf(in));
        const std::size_t out = op.outputs[0];
        sumOfSquares(b_, ins, produce(out, mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_)));
        break;
      }
      case OpKind::ClipByNorm: {
        std::vector<Id> ins, outs;
        for (std::size_t i = 0; i + 1 < op.inputs.size(); ++i) {
          ins.push_back(tensorOf(op.inputs[i]));
          outs.push_back(produce(op.outputs[i], b_.placementOf(ins.back())));
        }
        clipByNorm(b_, ins, tensorOf(op.inputs.back()), outs, op.scale, op.index != 0);
        break;
      }
      case OpKind::ClipByValue:
        lowerElementwise(op, typed("ClipByValue", {dtypeOf(op.outputs[0])}), {"in"}, "out", {{"clipValue", op.scale}});
        break;
      case OpKind::Conv2D:
      case OpKind::Conv2DInputGrad:
      case OpKind::Conv2DWeightGrad: lowerConvOp(op); break;
      case OpKind::MaxPool2D: lowerPoolOp(op, PoolCodelet::MaxPool); break;
      case OpKind::AvgPool2D: lowerPoolOp(op, PoolCodelet::AvgPool); break;
      case OpKind::MaxPool2DGrad: lowerPoolOp(op, PoolCodelet::MaxPoolGrad); break;
      case OpKind::AvgPool2DGrad: lowerPoolOp(op, PoolCodelet::AvgPoolGrad); break;
      case OpKind::Square: lowerElementwise(op, typed("Square", {dtypeOf(op.outputs[0])}), {"in"}, "out"); break;
      case OpKind::Mul: lowerElementwise(op, typed("Mul", {dtypeOf(op.outputs[0])}), {"in0", "in1"}, "out"); break;
      case OpKind::BatchNormStatistics:
        lowerElementwise(op, "BatchNormStatistics", {"mean", "meanSquare", "movingMean", "movingVariance"}, "invStdDev",
                         {{"epsilon", op.epsilon}, {"momentum", op.momentum}});
        break;
      case OpKind::BatchNormInvStdDev:
        lowerElementwise(op, "BatchNormInvStdDev", {"variance"}, "invStdDev", {{"epsilon", op.epsilon}});
        break;
      case OpKind::BatchNormalise: lowerBatchNormalise(op); break;
      case OpKind::BatchNormInputGrad: lowerBatchNormInputGrad(op); break;
      case OpKind::Add: lowerElementwise(op, typed("Add", {dtypeOf(op.outputs[0])}), {"in0", "in1"}, "out"); break;
      case OpKind::Sub: lowerElementwise(op, typed("Sub", {dtypeOf(op.outputs[0])}), {"in0", "in1"}, "out"); break;
      case OpKind::Neg: lowerElementwise(op, typed("Neg", {dtypeOf(op.outputs[0])}), {"in"}, "out"); break;
      case OpKind::Maximum: lowerElementwise(op, typed("Maximum", {dtypeOf(op.outputs[0])}), {"in0", "in1"}, "out"); break;
      case OpKind::Minimum: lowerElementwise(op, typed("Minimum", {dtypeOf(op.outputs[0])}), {"in0", "in1"}, "out"); break;
      case OpKind::ExtremumGrad:
        lowerElementwise(op, typed(op.codelet, {dtypeOf(op.outputs[0])}), {"in0", "in1", "grad"}, "out",
                         {{"operand", double(op.index)}});
        break;
      case OpKind::Concat:
      case OpKind::Slice: lowerConcatOrSlice(op); break;
      case OpKind::Reshape: tensorOf_[op.outputs[0]] = tensorOf(op.inputs[0]); break;
      case OpKind::CopyView: lowerCopyView(op); break;
      case OpKind::Pad2D:
      case OpKind::Crop2D: lowerPaddingOrCropping(op); break;
      case OpKind::Softmax:
      case OpKind::SoftmaxGrad: lowerSoftmax(op); break;
      case OpKind::PRelu: lowerColumns(op, "PRelu", {"in"}, {"alpha"}, "out"); break;
      case OpKind::PReluGrad: lowerColumns(op, "PReluGrad", {"activation", "gradIn"}, {"alpha"}, "gradOut"); break;
      case OpKind::PReluAlphaGrad:
        lowerElementwise(op, typed("PReluAlphaGrad", {dtypeOf(op.outputs[0])}), {"activation", "gradIn"}, "gradOut");
        break;
      case OpKind::Normalize: lowerColumns(op, "Normalize", {"in"}, {"mean", "stdDev"}, "out"); break;
      case OpKind::ScaleShift: lowerColumns(op, "ScaleShift", {"in"}, {"scale", "shift"}, "out"); break;
      case OpKind::LayerNormalise:
      case OpKind::LayerNormInputGrad: lowerLayerNorm(op); break;
      case OpKind::EmbeddingLookup:
      case OpKind::EmbeddingGrad: lowerEmbedding(op); break;
      case OpKind::Regularization: {
        std::vector<Id> ins;
        for (std::size_t i = 0; i + 1 < op.inputs.size(); ++i) ins.push_back(tensorOf(op.inputs[i]));
        sumOfPenalties(b_, ins, op.coefficients, tensorOf(op.inputs.back()), op.index);
        break;
      }
      case OpKind::RegularizerGrad:
        lowerElementwise(op, typed("RegularizerGrad", {dtypeOf(op.outputs[0])}), {"in"}, "out",
                         {{"l1", op.coefficients.at(0)[0]}, {"l2", op.coefficients.at(0)[1]}});
        break;
      case OpKind::IdMask: lowerIdMask(op); break;
      case OpKind::AddLossTerm: {  // loss[0] += loss[index], on the loss's tile
        const Id loss = tensorOf(op.inputs[0]);
        b_.execute({{"ScaledAdd", b_.placementOf(loss).at(0).tile,
                     {{"data", {loss, 0, 1}}, {"deltas", {loss, op.index, op.index + 1}}}, {{"scale", 1.0}}}},
                   "");
        break;
      }
    }
  }

  void lowerMatMulOp(const Op& op) {
    const Value& av = g_.values[op.inputs[0]];
    const Value& bv = g_.values[op.inputs[1]];
    MatMulShape s;
    s.transposeA = op.transposeA, s.transposeB = op.transposeB;
    // An operand of rank > 2 (a flattened NHWC activation) is its first
    // dimension by the product of the others, as stored; a batched product's
    // operands are [groups, rows, columns].
    const bool grouped = op.kind == OpKind::BatchMatMul;
    s.groups = grouped ? av.shape.at(0) : 1;
    const std::uint64_t aRows = grouped ? av.shape.at(1) : av.shape[0];
    const std::uint64_t aCols = av.numElements() / s.groups / aRows;
    const std::size_t bFirst = grouped ? 1 : 0;
    s.m = op.transposeA ? aCols : aRows;
    s.k = op.transposeA ? aRows : aCols;
    s.n = op.transposeB ? bv.shape.at(bFirst) : bv.shape.at(bFirst + 1);
    s.inputType = av.dtype;
    s.outputType = dtypeOf(op.outputs[0]);
    MatMulTensors t;
    t.a = tensorOf(op.inputs[0]);
    t.b = tensorOf(op.inputs[1]);
    const std::size_t out = op.outputs[0];
    const std::size_t weight = weightOf(op, g_.values[out].shape);
    const bool isWeightGradient = g_.values[out].kind == ValueKind::Gradient && weight != ~std::size_t(0);
    t.out = produce(out, isWeightGradient ? b_.placementOf(tensorOf(weight))
                                          : mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_));
    s.aTiles = b_.tensor(t.a).mapping.size();
    s.bTiles = b_.tensor(t.b).mapping.size();
    s.outTiles = b_.tensor(t.out).mapping.size();
    const MatMulPlan plan = planMatMul(s, target_, tiles_, budget_);
    plans_.push_back({op.layer + "/" + op.name, s.m, s.k, s.n, s.groups,
                      double(s.groups) * double(s.m) * double(s.k) * double(s.n), plan});
    scheduler::lowerMatMul(b_, s, plan, t, g_.values[out].name);
  }

  // One compute set: each tile's ranges of `p` cut into one chunk per worker
  // (multiples of `grain` elements), one vertex per chunk from
  // make(tile, begin, end).
  template <typename MakeVertex>
  void executePerWorker(const Placement& p, std::uint64_t grain, MakeVertex make) {
    std::vector<ir::Vertex> v;
    for (const PlacedRange& r : p)
      for (auto [b, e] : chunks(r.begin, r.end, target_.tile.workerContexts, grain)) v.push_back(make(r.tile, b, e));
    b_.execute(std::move(v), "");
  }

  // One compute set of a map: one vertex a range of `p`, `codelet`'s
  // PerWorker vertex, standing for the worker vertices that share the range
  // (model/codelets/per_worker.hpp: in runs of whole vectors of the result,
  // one a worker, as executePerWorker cuts them).
  template <typename MakeVertex>
  void executeMap(const Placement& p, const std::string& codelet, MakeVertex make) {
    const std::string name = model::perWorkerName(codelet);
    std::vector<ir::Vertex> v;
    v.reserve(p.size());
    for (const PlacedRange& r : p) v.push_back(make(name, r.tile, r.begin, r.end));
    b_.execute(std::move(v), "");
  }

  // Elementwise: the output where the first input is, the others brought
  // there; each tile's ranges shared by its workers.
  void lowerElementwise(const Op& op, const std::string& codelet, const std::vector<std::string>& inFields,
                        const std::string& outField, const std::map<std::string, double>& params = {}) {
    const Placement p = b_.placementOf(tensorOf(op.inputs[0]));
    std::vector<Id> ins;
    for (std::size_t in : op.inputs) ins.push_back(realize(in, p));
    const Id o = produce(op.outputs[0], p);
    executeMap(p, codelet, [&](const std::string& name, std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      std::vector<ir::VertexField> fields;
      for (std::size_t f = 0; f < ins.size(); ++f) fields.push_back({inFields[f], {ins[f], b, e}});
      fields.push_back({outField, {o, b, e}});
      return ir::Vertex{name, tile, std::move(fields), params};
    });
  }

  // Concat: each input's rows copied into their columns of the output's
  // rows; Slice: a block of columns of every row copied out. One Copy of
  // 2-D regions (one per input), the output mapped linearly.
  void lowerConcatOrSlice(const Op& op) {
    const std::size_t out = op.outputs[0];
    const Id o = produce(out, mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_));
    std::vector<ir::CopyRegion> regions;
    auto region = [&](Id src, std::uint64_t srcBegin, std::uint64_t srcStride, std::uint64_t dstBegin,
                      std::uint64_t dstStride, std::uint64_t len) {
      ir::CopyRegion r{{src, srcBegin, srcBegin + len}, {o, dstBegin, dstBegin + len}};
      r.rows = op.rows;
      if (op.rows > 1) r.srcStride = srcStride, r.dstStride = dstStride;
      regions.push_back(r);
    };
    if (op.kind == OpKind::Concat) {
      std::uint64_t total = 0, at = 0;
      for (std::uint64_t b : op.blocks) total += b;
      for (std::size_t i = 0; i < op.inputs.size(); ++i) {
        region(tensorOf(op.inputs[i]), 0, op.blocks[i], at, total, op.blocks[i]);
        at += op.blocks[i];
      }
    } else {
      region(tensorOf(op.inputs[0]), op.blocks[0], op.blocks[2], 0, op.blocks[1], op.blocks[1]);
    }
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), op.name, estimate);
  }

  // CopyView: the output, mapped linearly, gathers the input's elements at
  // the view with one Copy (view_copy.hpp): what crosses tiles is
  // exchanged, the rest copied within the tile, by the machine's rules.
  void lowerCopyView(const Op& op) {
    const std::size_t out = op.outputs[0];
    const Id in = tensorOf(op.inputs[0]);
    const Id o = produce(out, mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_));
    std::vector<ir::CopyRegion> regions = viewCopyRegions(in, o, op.view);
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), op.name, estimate);
  }

  // Pad2D: the output filled with zeros (one compute set over its linear
  // mapping), then the input's rows copied inside it; Crop2D: the inside
  // copied out. One 2-D region per image: its rows, at the strides of the
  // smaller and the larger image. (Poplar pads by concatenating a constant
  // zero tensor; filling the whole output is an estimate of that cost.)
  void lowerPaddingOrCropping(const Op& op) {
    const bool pad = op.kind == OpKind::Pad2D;
    const std::size_t out = op.outputs[0];
    const PaddedGeometry small = paddedGeometryOf(g_.values[pad ? op.inputs[0] : out].shape);
    const PaddedGeometry large = paddedGeometryOf(g_.values[pad ? out : op.inputs[0]].shape);
    const Id in = tensorOf(op.inputs[0]);
    const Id o = produce(out, mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_));
    if (pad) {
      executeMap(b_.placementOf(o), typed("Fill", {dtypeOf(out)}),
                 [&](const std::string& name, std::uint32_t tile, std::uint64_t begin, std::uint64_t end) {
                   return ir::Vertex{name, tile, {{"out", {o, begin, end}}}, {{"value", 0.0}}};
                 });
    }
    const Id smallT = pad ? in : o, largeT = pad ? o : in;
    const std::uint64_t rowLen = small.cols * small.channels, largeRow = large.cols * large.channels;
    std::vector<ir::CopyRegion> regions;
    for (std::uint64_t i = 0; i < small.images; ++i) {
      const std::uint64_t s0 = i * small.rows * rowLen;
      const std::uint64_t l0 = ((i * large.rows + op.pads[0]) * large.cols + op.pads[2]) * large.channels;
      ir::CopyRegion r = pad ? ir::CopyRegion{{smallT, s0, s0 + rowLen}, {largeT, l0, l0 + rowLen}}
                             : ir::CopyRegion{{largeT, l0, l0 + rowLen}, {smallT, s0, s0 + rowLen}};
      r.rows = small.rows;
      if (small.rows > 1) {
        r.srcStride = pad ? rowLen : largeRow;
        r.dstStride = pad ? largeRow : rowLen;
      }
      regions.push_back(r);
    }
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), op.name, estimate);
  }

  // in + bias: each tile gets the bias columns its rows touch (one Copy),
  // then adds them, whole rows or row parts, over its workers.
  void lowerAddBias(const Op& op) {
    const Id in = tensorOf(op.inputs[0]);
    tensorOf(op.inputs[1]);  // the bias defined before the output, in the order the tensors always had
    const Id o = produce(op.outputs[0], b_.placementOf(in));
    lowerChannelwise(typed("AddBias", {dtypeOf(op.inputs[1])}), in, {{"in", in}, {"out", o}}, {{"bias", op.inputs[1]}},
                     {}, "broadcast_bias");
  }

  // A vertex over a rows x cols tensor (`x`'s placement; `rowFields` all
  // laid out so) reading per-column vectors (`channelFields`, values of cols
  // elements): each tile gets the columns its rows touch of every such
  // vector (one Copy), then its vertices take whole rows, split over its
  // workers, or parts of a row, in chunks. Params rows, cols and `params`.
  void lowerChannelwise(const std::string& codelet, Id x, const std::vector<std::pair<std::string, Id>>& rowFields,
                        const std::vector<std::pair<std::string, std::size_t>>& channelFields,
                        const std::map<std::string, double>& params, const std::string& copyName) {
    const Placement p = b_.placementOf(x);
    const std::uint64_t cols = g_.values[channelFields.at(0).second].numElements();
    // Per tile, the column intervals it needs (merged), and where each lies in its buffer.
    struct Need { std::uint32_t tile; std::vector<std::pair<std::uint64_t, std::uint64_t>> cols; };
    std::vector<Need> needs;
    for (const PlacedRange& r : p) {
      if (needs.empty() || needs.back().tile != r.tile) needs.push_back({r.tile, {}});
      for (const RowRun& run : rowRuns(r.begin, r.end, cols)) needs.back().cols.push_back({run.col, run.col + run.len});
    }
    std::vector<std::uint32_t> tiles;
    std::vector<std::uint64_t> sizes;
    for (Need& n : needs) {
      std::sort(n.cols.begin(), n.cols.end());
      std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
      for (auto c : n.cols)
        if (!merged.empty() && c.first <= merged.back().second) merged.back().second = std::max(merged.back().second, c.second);
        else merged.push_back(c);
      n.cols = merged;
      std::uint64_t size = 0;
      for (auto [c0, c1] : merged) size += c1 - c0;
      tiles.push_back(n.tile);
      sizes.push_back(size);
    }
    // One broadcast buffer per vector, every tile's blocks at the same offsets (bufAt).
    std::vector<Id> buffers;
    std::vector<std::uint64_t> bufAt;
    std::vector<ir::CopyRegion> regions;
    for (const auto& [field, value] : channelFields) {
      const Id src = tensorOf(value);
      const auto [buf, at0] = b_.addBlocks(g_.values[value].name + "/broadcast", dtypeOf(value), tiles, sizes);
      buffers.push_back(buf);
      bufAt = at0;
      for (std::size_t t = 0; t < needs.size(); ++t) {
        std::uint64_t at = bufAt[t];
        for (auto [c0, c1] : needs[t].cols) regions.push_back({{src, c0, c1}, {buf, at, at + (c1 - c0)}}), at += c1 - c0;
      }
    }
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), copyName, estimate);
    auto columnAt = [&](std::size_t t, std::uint64_t col) {  // buffer element holding column `col` on needs[t]
      std::uint64_t at = bufAt[t];
      for (auto [c0, c1] : needs[t].cols) {
        if (col >= c0 && col < c1) return at + (col - c0);
        at += c1 - c0;
      }
      return at;
    };
    std::vector<ir::Vertex> v;
    const std::uint32_t workers = target_.tile.workerContexts;
    auto vertex = [&](std::uint32_t tile, std::uint64_t begin, std::uint64_t end, std::uint64_t colAt, std::uint64_t rows,
                      std::uint64_t len) {
      std::vector<ir::VertexField> fields;
      for (const auto& [field, tensor] : rowFields) fields.push_back({field, {tensor, begin, end}});
      for (std::size_t c = 0; c < buffers.size(); ++c) fields.push_back({channelFields[c].first, {buffers[c], colAt, colAt + len}});
      ir::Vertex vx{codelet, tile, std::move(fields), {{"rows", double(rows)}, {"cols", double(len)}}};
      for (const auto& [k, val] : params) vx.params[k] = val;
      v.push_back(std::move(vx));
    };
    std::size_t t = 0;
    for (const PlacedRange& r : p) {
      while (needs[t].tile != r.tile) ++t;
      for (const RowRun& run : rowRuns(r.begin, r.end, cols)) {
        if (run.rows > 1 || run.len == cols) {  // whole rows, split over the workers
          for (auto [rb, re] : chunks(0, run.rows, workers, 1))
            vertex(r.tile, run.begin + rb * cols, run.begin + re * cols, columnAt(t, 0), re - rb, cols);
        } else {  // part of a row, in chunks
          const std::uint64_t partChunk = std::max<std::uint64_t>(2, ceilDiv(r.end - r.begin, workers));
          for (std::uint64_t c = 0; c < run.len; c += partChunk) {
            const std::uint64_t len = std::min(partChunk, run.len - c);
            vertex(r.tile, run.begin + c, run.begin + c + len, columnAt(t, run.col + c), 1, len);
          }
        }
      }
    }
    b_.execute(std::move(v), "");
  }

  // A loss works on whole rows: rows spread over tiles (the logits' own
  // mapping when it keeps rows whole), each tile's rows over its workers.
  Placement rowPlacement(std::size_t logitsValue) {
    const Value& v = g_.values[logitsValue];
    const std::uint64_t rows = v.shape[0], classes = v.shape[1];
    const Placement current = b_.placementOf(tensorOf(logitsValue));
    bool whole = true;
    for (const PlacedRange& r : current) whole = whole && r.begin % classes == 0 && r.end % classes == 0;
    if (whole) return current;
    Placement p = mapLinearly(rows, tiles_, 1, std::max<std::uint64_t>(1, kMinBytesPerTile / 4 / classes));
    for (PlacedRange& r : p) r.begin *= classes, r.end *= classes;
    return p;
  }
  static Placement perRow(const Placement& p, std::uint64_t classes) {
    Placement q = p;
    for (PlacedRange& r : q) r.begin /= classes, r.end /= classes;
    return q;
  }

  void lowerSoftmaxCrossEntropy(const Op& op) {
    const Value& logits = g_.values[op.inputs[0]];
    const std::uint64_t classes = logits.shape[1];
    const Placement p = rowPlacement(op.inputs[0]);
    const Placement rows = perRow(p, classes);
    const Id x = realize(op.inputs[0], p);
    const Id labels = realize(op.inputs[1], rows);
    const Id probs = produce(op.outputs[0], p);
    const Id loss = produce(op.outputs[1], rows);
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{typed("SoftmaxCrossEntropy", {dtypeOf(op.inputs[0])}), tile,
                        {{"logits", {x, b * classes, e * classes}}, {"labels", {labels, b, e}},
                         {"probs", {probs, b * classes, e * classes}}, {"loss", {loss, b, e}}},
                        {{"rows", double(e - b)}, {"classes", double(classes)}}};
    });
  }

  // Rows of the gate mapped linearly (whole rows on a tile), each tile's ids beside them.
  void lowerIdMask(const Op& op) {
    if (op.index == 2) return lowerIdMaskMean(op);
    if (op.index == 3) return lowerIdMaskScores(op);
    if (op.index == 4) return lowerIdMaskLossWeights(op);
    if (op.index == 5) return lowerIdMaskFromValues(op);
    const std::uint64_t cols = g_.values[op.outputs[0]].shape.at(1);
    const std::uint64_t rows = g_.values[op.outputs[0]].shape.at(0);
    Placement p = mapLinearly(rows, tiles_, 1, std::max<std::uint64_t>(1, kMinBytesPerTile / 4 / cols));
    for (PlacedRange& r : p) r.begin *= cols, r.end *= cols;
    const Placement perRowIds = perRow(p, cols);
    const Id ids = realize(op.inputs[0], perRowIds);
    const Id out = produce(op.outputs[0], p);
    executePerWorker(perRowIds, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{typed("IdMask", {dtypeOf(op.outputs[0])}), tile,
                        {{"ids", {ids, b, e}}, {"out", {out, b * cols, e * cols}}},
                        {{"rows", double(e - b)}, {"cols", double(cols)}, {"padding", double(op.index)}}};
    });
  }

  // Whole examples on a tile, each example's ids beside its weights.
  void lowerIdMaskMean(const Op& op) {
    const Value& ids = g_.values[op.inputs[0]];
    const std::uint64_t examples = ids.shape.at(0), steps = ids.numElements() / examples;
    const std::uint64_t cols = g_.values[op.outputs[0]].numElements() / (examples * steps);
    const std::uint64_t perExample = steps * cols;
    Placement p = mapLinearly(examples, tiles_, 1, std::max<std::uint64_t>(1, kMinBytesPerTile / 4 / perExample));
    for (PlacedRange& r : p) r.begin *= perExample, r.end *= perExample;
    const Placement exampleIds = perRow(p, cols);
    const Id in = realize(op.inputs[0], exampleIds);
    const Id out = produce(op.outputs[0], p);
    executePerWorker(perRow(p, perExample), 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{typed("IdMaskMean", {dtypeOf(op.outputs[0])}), tile,
                        {{"ids", {in, b * steps, e * steps}}, {"out", {out, b * perExample, e * perExample}}},
                        {{"examples", double(e - b)}, {"steps", double(steps)}, {"cols", double(cols)}}};
    });
  }

  // Keras's Masking: whole rows of values per tile, each row's mask beside it.
  void lowerIdMaskFromValues(const Op& op) {
    const std::uint64_t cols = g_.values[op.inputs[0]].shape.at(1);
    const Placement p = rowPlacement(op.inputs[0]);
    const Placement rows = perRow(p, cols);
    const Id in = realize(op.inputs[0], p);
    const Id out = produce(op.outputs[0], rows);
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{typed("IdMaskFromValues", {dtypeOf(op.inputs[0])}), tile,
                        {{"in", {in, b * cols, e * cols}}, {"out", {out, b, e}}},
                        {{"rows", double(e - b)}, {"cols", double(cols)}, {"maskValue", op.scale}}};
    });
  }

  // A masked loss's row weights: one vertex on one tile, as the weight of
  // every row needs the count of the whole mini-batch's kept rows (a few
  // thousand ids: a sequence's steps over the batch).
  void lowerIdMaskLossWeights(const Op& op) {
    const std::uint64_t rows = g_.values[op.outputs[0]].numElements();
    const Placement one = {{0, rows, 0}};
    const Id ids = realize(op.inputs[0], one);
    const Id out = produce(op.outputs[0], one);
    b_.execute({ir::Vertex{"IdMaskLossWeights", 0, {{"ids", {ids, 0, rows}}, {"out", {out, 0, rows}}}, {{"rows", double(rows)}}}},
               "");
  }

  // Attention scores under Keras's attention mask: whole rows of scores per
  // tile (their own mapping when it keeps rows whole), each tile given the
  // ids of the examples its rows span (one Copy into per-tile blocks, as
  // lowerChannelwise brings a bias), each tile's rows over its workers.
  void lowerIdMaskScores(const Op& op) {
    const Value& scores = g_.values[op.inputs[0]];
    const Value& ids = g_.values[op.inputs[1]];
    const std::uint64_t rows = scores.shape.at(0), Tv = scores.shape.at(1);
    const std::uint64_t examples = ids.shape.at(0), steps = ids.numElements() / examples;
    const std::uint64_t heads = op.blocks.at(0), rowsPerExample = rows / examples, Tq = rowsPerExample / heads;
    Placement p = b_.placementOf(tensorOf(op.inputs[0]));
    bool whole = true;
    for (const PlacedRange& r : p) whole = whole && r.begin % Tv == 0 && r.end % Tv == 0;
    if (!whole) {
      p = mapLinearly(rows, tiles_, 1, std::max<std::uint64_t>(1, kMinBytesPerTile / 4 / Tv));
      for (PlacedRange& r : p) r.begin *= Tv, r.end *= Tv;
    }
    const Placement perScoreRow = perRow(p, Tv);
    const Id in = realize(op.inputs[0], p);
    const Id idsTensor = tensorOf(op.inputs[1]);
    // Per tile, the examples its rows span: [first, last].
    std::vector<std::uint32_t> tiles;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> span;
    for (const PlacedRange& r : perScoreRow) {
      const std::uint64_t first = r.begin / rowsPerExample, last = (r.end - 1) / rowsPerExample;
      if (!tiles.empty() && tiles.back() == r.tile) span.back().second = last;
      else tiles.push_back(r.tile), span.push_back({first, last});
    }
    std::vector<std::uint64_t> sizes;
    for (auto [first, last] : span) sizes.push_back((last - first + 1) * steps);
    Id buffer;
    std::vector<std::uint64_t> at;
    std::tie(buffer, at) = b_.addBlocks(ids.name + "/per_tile", ir::DType::Int, tiles, sizes);
    std::vector<ir::CopyRegion> regions;
    for (std::size_t t = 0; t < tiles.size(); ++t)
      regions.push_back({{idsTensor, span[t].first * steps, (span[t].second + 1) * steps}, {buffer, at[t], at[t] + sizes[t]}});
    const ir::Cycles estimate = estimateCopy(b_, regions);
    b_.copy(std::move(regions), "attention_mask_ids", estimate);
    const Id out = produce(op.outputs[0], p);
    std::size_t t = 0;
    executePerWorker(perScoreRow, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      while (tiles[t] != tile) ++t;
      const std::uint64_t first = b / rowsPerExample, last = (e - 1) / rowsPerExample;
      const std::uint64_t idsAt = at[t] + (first - span[t].first) * steps;
      return ir::Vertex{typed("IdMaskScores", {dtypeOf(op.outputs[0])}), tile,
                        {{"ids", {buffer, idsAt, idsAt + (last - first + 1) * steps}},
                         {"in", {in, b * Tv, e * Tv}},
                         {"out", {out, b * Tv, e * Tv}}},
                        {{"firstRow", double(b)}, {"rows", double(e - b)}, {"heads", double(heads)},
                         {"querySteps", double(Tq)}, {"valueSteps", double(Tv)}, {"steps", double(steps)},
                         {"query", double(op.blocks.at(1))}, {"value", double(op.blocks.at(2))},
                         {"causal", double(op.blocks.at(3))}, {"hidden", op.scale}}};
    });
  }

  void lowerSoftmaxCrossEntropyGrad(const Op& op) {
    const std::uint64_t classes = g_.values[op.inputs[0]].shape[1];
    const Placement p = b_.placementOf(tensorOf(op.inputs[0]));
    const Placement rows = perRow(p, classes);
    const Id probs = tensorOf(op.inputs[0]);
    const Id labels = realize(op.inputs[1], rows);
    // A masked loss's row weights (IdMask index 4): the weighted gradient.
    const bool weighted = op.inputs.size() > 2;
    const Id weights = weighted ? realize(op.inputs[2], rows) : ir::kNoId;
    const Id grad = produce(op.outputs[0], p);
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      std::vector<ir::VertexField> fields = {{"probs", {probs, b * classes, e * classes}}, {"labels", {labels, b, e}}};
      if (weighted) fields.push_back({"weights", {weights, b, e}});
      fields.push_back({"grad", {grad, b * classes, e * classes}});
      return ir::Vertex{typed(weighted ? "SoftmaxCrossEntropyGradWeighted" : "SoftmaxCrossEntropyGrad",
                              {dtypeOf(op.outputs[0])}),
                        tile, std::move(fields),
                        {{"rows", double(e - b)}, {"classes", double(classes)}, {"scale", op.scale}}};
    });
  }

  void lowerMeanLoss(const Op& op) {
    const Id in = tensorOf(op.inputs[0]);
    const std::uint64_t n = g_.values[op.inputs[0]].numElements();
    if (op.index == 0) {  // defines the loss tensor (loss and metrics), on one tile
      const std::size_t v = op.outputs[0];
      const Id out = produce(v, onTile(g_.values[v].numElements(), b_.placementOf(in).at(0).tile));
      reduceAll(b_, in, n, out, op.scale, 0);
    } else {  // a metric written into it
      reduceAll(b_, in, n, tensorOf(op.inputs[1]), op.scale, op.index);
    }
  }

  // A loss or accuracy over dense targets (target_losses codelets): whole
  // rows per vertex, the rows where the logits' loss placement puts them.
  void lowerRowLoss(const Op& op) {
    const std::uint64_t cols = g_.values[op.inputs[0]].shape[1];
    const Placement p = rowPlacement(op.inputs[0]);
    const Placement rows = perRow(p, cols);
    const Id x = realize(op.inputs[0], p);
    const Id targets = realize(op.inputs[1], p);
    const bool withProbs = op.outputs.size() == 2;
    const Id probs = withProbs ? produce(op.outputs[0], p) : ir::kNoId;
    const Id perRowOut = produce(op.outputs.back(), rows);
    const bool accuracy = op.codelet == "CategoricalAccuracy" || op.codelet == "BinaryAccuracy";
    const bool regression = op.codelet == "SquaredError" || op.codelet == "AbsoluteError" || op.codelet == "HuberError" ||
                            op.codelet == "KlDivergence";
    const char* inField = accuracy ? "probs" : regression ? "pred" : "logits";
    const std::string codelet = accuracy ? op.codelet : typed(op.codelet, {dtypeOf(op.inputs[0])});
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      std::vector<ir::VertexField> fields{{inField, {x, b * cols, e * cols}}, {"targets", {targets, b * cols, e * cols}}};
      if (withProbs) fields.push_back({"probs", {probs, b * cols, e * cols}});
      fields.push_back({accuracy ? "correct" : "loss", {perRowOut, b, e}});
      ir::Vertex v{codelet, tile, std::move(fields), {{"rows", double(e - b)}, {"cols", double(cols)}}};
      if (op.codelet == "HuberError") v.params["delta"] = op.delta;
      return v;
    });
  }

  // grad = scale * (pred - targets) (or its sign, or clipped: op.codelet),
  // rows where the prediction's rows are.
  void lowerTargetDifference(const Op& op) {
    const std::uint64_t cols = g_.values[op.inputs[0]].shape[1];
    const Placement p = rowPlacement(op.inputs[0]);
    const Id pred = realize(op.inputs[0], p);
    const Id targets = realize(op.inputs[1], p);
    const Id grad = produce(op.outputs[0], p);
    const ir::DType in = dtypeOf(op.inputs[0]), out = dtypeOf(op.outputs[0]);
    const std::string name = op.codelet.empty() ? "TargetDifference" : op.codelet;
    const std::string codelet = in == out ? typed(name, {in}) : typed(name, {in, out});
    executePerWorker(perRow(p, cols), 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      ir::Vertex v{codelet, tile,
                   {{"pred", {pred, b * cols, e * cols}}, {"targets", {targets, b * cols, e * cols}},
                    {"grad", {grad, b * cols, e * cols}}},
                   {{"rows", double(e - b)}, {"cols", double(cols)}, {"scale", op.scale}}};
      if (name == "TargetClip") v.params["delta"] = op.delta;
      return v;
    });
  }

  void lowerAccuracy(const Op& op) {
    const std::uint64_t classes = g_.values[op.inputs[0]].shape[1];
    const Placement p = b_.placementOf(tensorOf(op.inputs[0]));
    const Placement rows = perRow(p, classes);
    const Id probs = tensorOf(op.inputs[0]);
    const Id labels = realize(op.inputs[1], rows);
    const Id correct = produce(op.outputs[0], rows);
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{"Accuracy", tile,
                        {{"probs", {probs, b * classes, e * classes}}, {"labels", {labels, b, e}}, {"correct", {correct, b, e}}},
                        {{"rows", double(e - b)}, {"classes", double(classes)}}};
    });
  }

  // Column sums (a bias gradient, batch normalization's statistics and
  // deltas) times op.scale; a weight's gradient owned as its weight is (a
  // local update): "<w>_grad" of weight "<w>", else the layer's weight of its shape.
  void lowerReduceRows(const Op& op) {
    const Value& gv = g_.values[op.inputs[0]];
    const std::string& outName = g_.values[op.outputs[0]].name;
    std::size_t bias = ~std::size_t(0);
    for (std::size_t w : g_.weights)
      if (g_.values[w].name + "_grad" == outName) bias = w;
    if (bias == ~std::size_t(0)) bias = weightOf(op, g_.values[op.outputs[0]].shape);
    const Id in = tensorOf(op.inputs[0]);
    const Placement p = bias != ~std::size_t(0) ? b_.placementOf(tensorOf(bias))
                                                : mapTensor(g_.values[op.outputs[0]].shape, dtypeOf(op.outputs[0]), target_, tiles_);
    const Id out = produce(op.outputs[0], p);
    // An NHWC gradient (its channels summed over batch and positions), or
    // rows so many that an owner of the output would gather more than an
    // eighth of its tile's memory (a sequence's bias gradient: batch x steps
    // rows), is summed where it is held first, as popops reduces in place
    // before it exchanges partials; a few rows are gathered to their owners.
    const std::uint64_t cols = gv.shape.back(), rows = gv.numElements() / cols;
    const std::uint64_t owners = std::max<std::size_t>(1, p.size());
    const std::uint64_t gatheredBytes = rows * ceilDiv(cols, owners) * ir::sizeOf(gv.dtype);
    if (gv.shape.size() > 2 || gatheredBytes > target_.tile.memoryBytes / 8) {
      reduceColumnsWhereHeld(b_, in, cols, out, op.scale);
      return;
    }
    reduceColumns(b_, in, rows, cols, out, op.scale);
  }

  // Batch normalization's whole-tensor vertices (model/codelets/batch_norm.cpp):
  // where the input (gradient) lies, the per-channel vectors broadcast to
  // the tiles as a bias is.
  void lowerBatchNormalise(const Op& op) {
    const Id in = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(in);
    const Id whitened = produce(op.outputs[0], p);
    const Id out = produce(op.outputs[1], p);
    lowerChannelwise(typed("BatchNormalise", {dtypeOf(op.inputs[0])}), in, {{"in", in}, {"whitened", whitened}, {"out", out}},
                     {{"mean", op.inputs[1]}, {"invStdDev", op.inputs[2]}, {"gamma", op.inputs[3]}, {"beta", op.inputs[4]}},
                     {}, "broadcast_statistics");
  }
  void lowerBatchNormInputGrad(const Op& op) {
    const Id grad = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(grad);
    const Id whitened = realize(op.inputs[1], p);
    const Id out = produce(op.outputs[0], p);
    lowerChannelwise(typed("BatchNormInputGrad", {dtypeOf(op.inputs[0])}), grad,
                     {{"gradIn", grad}, {"whitened", whitened}, {"gradOut", out}},
                     {{"gammaDelta", op.inputs[2]}, {"betaDelta", op.inputs[3]}, {"gamma", op.inputs[4]},
                      {"invStdDev", op.inputs[5]}},
                     {{"scale", op.scale}}, "broadcast_deltas");
  }

  void lowerSgdUpdate(const Op& op) {
    const Id w = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(w);
    const Id grad = realize(op.inputs[1], p);
    executeMap(p, typed("ScaledAdd", {dtypeOf(op.inputs[0])}),
               [&](const std::string& name, std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
                 return ir::Vertex{name, tile, {{"data", {w, b, e}}, {"deltas", {grad, b, e}}}, {{"scale", op.scale}}};
               });
  }

  // Softmax(Grad) over blocks of n x inner elements (op.blocks): whole
  // blocks per tile (the input's mapping when it keeps them whole), each
  // tile's blocks over its workers.
  void lowerSoftmax(const Op& op) {
    const std::uint64_t n = op.blocks.at(0), inner = op.blocks.at(1), block = n * inner;
    const Value& v = g_.values[op.inputs[0]];
    Placement p = b_.placementOf(tensorOf(op.inputs[0]));
    bool whole = true;
    for (const PlacedRange& r : p) whole = whole && r.begin % block == 0 && r.end % block == 0;
    if (!whole) {
      p = mapLinearly(v.numElements() / block, tiles_, 1, std::max<std::uint64_t>(1, kMinBytesPerTile / 4 / block));
      for (PlacedRange& r : p) r.begin *= block, r.end *= block;
    }
    std::vector<Id> ins;
    for (std::size_t in : op.inputs) ins.push_back(realize(in, p));
    const Id out = produce(op.outputs[0], p);
    const bool grad = op.kind == OpKind::SoftmaxGrad;
    const std::string codelet = typed(grad ? "SoftmaxGrad" : "Softmax", {dtypeOf(op.outputs[0])});
    executePerWorker(perRow(p, block), 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      std::vector<ir::VertexField> fields;
      const std::vector<std::string> names = grad ? std::vector<std::string>{"activation", "gradIn"} : std::vector<std::string>{"in"};
      for (std::size_t f = 0; f < ins.size(); ++f) fields.push_back({names[f], {ins[f], b * block, e * block}});
      fields.push_back({grad ? "gradOut" : "out", {out, b * block, e * block}});
      return ir::Vertex{codelet, tile, std::move(fields),
                        {{"groups", double(e - b)}, {"n", double(n)}, {"inner", double(inner)}}};
    });
  }

  // Layer normalization over [rows, n] values (model/codelets/layer_norm.cpp):
  // whole rows per tile (the input's mapping when it keeps them whole), each
  // tile's rows over its workers; a row's invStdDev (one float) on its tile.
  void lowerLayerNorm(const Op& op) {
    const std::uint64_t n = g_.values[op.inputs[0]].shape[1];
    const Placement p = rowPlacement(op.inputs[0]);
    const Placement rows = perRow(p, n);
    const bool forward = op.kind == OpKind::LayerNormalise;
    std::vector<std::pair<std::string, Id>> rowFields;  // n values per row
    Id invStdDev;
    if (forward) {
      rowFields = {{"in", realize(op.inputs[0], p)}, {"whitened", produce(op.outputs[0], p)}};
      invStdDev = produce(op.outputs[1], rows);
    } else {
      rowFields = {{"whitenedGrad", realize(op.inputs[0], p)}, {"whitened", realize(op.inputs[1], p)}};
      invStdDev = realize(op.inputs[2], rows);
      rowFields.push_back({"inputGrad", produce(op.outputs[0], p)});
    }
    const std::string codelet = typed(forward ? "LayerNormalise" : "LayerNormInputGrad", {dtypeOf(op.inputs[0])});
    executePerWorker(rows, 1, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      std::vector<ir::VertexField> fields;
      for (const auto& [name, tensor] : rowFields) fields.push_back({name, {tensor, b * n, e * n}});
      fields.push_back({"invStdDev", {invStdDev, b, e}});
      ir::Vertex v{codelet, tile, std::move(fields), {{"rows", double(e - b)}, {"n", double(n)}}};
      if (forward) v.params["epsilon"] = op.epsilon;
      return v;
    });
  }

  // The values a lookup's table is read through: its cast (under a mixed
  // policy), then the weight itself, last.
  std::vector<std::size_t> embeddingTableChain(const Op& lookup) const {
    std::vector<std::size_t> chain{lookup.inputs[1]};
    for (std::size_t p = g_.producerOf[chain.back()]; p != ~std::size_t(0) && g_.ops[p].kind == OpKind::Cast;
         p = g_.producerOf[chain.back()])
      chain.push_back(g_.ops[p].inputs[0]);
    return chain;
  }
  // The embedding's plan for lookup or gradient `op` (both read the ids
  // first): one grid for both, planned for the table weight's type, so the
  // table, its cast, its gradient and its update lie alike.
  EmbeddingPlan embeddingPlan(const Op& op) const {
    const std::size_t table = op.kind == OpKind::EmbeddingLookup ? embeddingTableChain(op).back() : op.outputs[0];
    const std::vector<std::uint64_t>& shape = g_.values[table].shape;
    return planEmbedding(shape.at(1), shape.at(0) * shape.at(2), g_.values[op.inputs[0]].numElements(), dtypeOf(table),
                         target_, tiles_, budget_);
  }
  // Each embedding table (its weight, and the weight's cast under a mixed
  // policy) placed by its plan before any op reads it, so that the cast, the
  // lookup, the gradient and the update all work where it lies.
  void placeEmbeddingTables(const std::map<std::string, std::uint32_t>& tileBaseOfLayer) {
    for (const Op& op : g_.ops) {
      if (op.kind != OpKind::EmbeddingLookup) continue;
      const auto base = tileBaseOfLayer.find(op.layer);
      b_.setTileBase(base != tileBaseOfLayer.end() ? base->second : 0);
      const Placement p = embeddingPlan(op).tablePlacement();
      for (std::size_t table : embeddingTableChain(op))
        if (tensorOf_[table] == ir::kNoId) define(table, p);
    }
    b_.setTileBase(0);
  }
  void lowerEmbedding(const Op& op) {
    const EmbeddingPlan plan = embeddingPlan(op);
    const std::string name = g_.values[op.outputs[0]].name;
    if (op.kind == OpKind::EmbeddingLookup) {
      const std::size_t out = op.outputs[0];
      const Id o = produce(out, mapTensor(g_.values[out].shape, dtypeOf(out), target_, tiles_));
      lowerEmbeddingLookup(b_, plan, tensorOf(op.inputs[0]), realize(op.inputs[1], plan.tablePlacement()), o,
                           dtypeOf(op.inputs[1]), name);
    } else {
      const Id grad = produce(op.outputs[0], plan.tablePlacement());
      lowerEmbeddingUpdate(b_, plan, tensorOf(op.inputs[0]), tensorOf(op.inputs[1]), grad, dtypeOf(op.outputs[0]), name);
    }
  }

  // A per-column vertex (model/codelets/column_broadcast.cpp) where the
  // first input lies: the other row inputs brought there, the column
  // vectors (the op's last inputs) broadcast to the tiles as a bias is.
  void lowerColumns(const Op& op, const std::string& codelet, const std::vector<std::string>& rowNames,
                    const std::vector<std::string>& columnNames, const std::string& outName) {
    const Id x = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(x);
    std::vector<std::pair<std::string, Id>> rows;
    for (std::size_t i = 0; i < rowNames.size(); ++i) rows.push_back({rowNames[i], realize(op.inputs[i], p)});
    std::vector<std::pair<std::string, std::size_t>> columns;
    for (std::size_t i = 0; i < columnNames.size(); ++i) columns.push_back({columnNames[i], op.inputs[rowNames.size() + i]});
    rows.push_back({outName, produce(op.outputs[0], p)});
    lowerChannelwise(typed(codelet, {dtypeOf(op.outputs[0])}), x, rows, columns, {}, "broadcast_" + columnNames[0]);
  }

  // The step counter: +1 on every tile's copy, one vertex per tile.
  void lowerIncrementStep(const Op& op) {
    const Id counter = tensorOf(op.inputs[0]);
    std::vector<ir::Vertex> v;
    for (const PlacedRange& r : b_.placementOf(counter)) v.push_back({"Increment", r.tile, {{"data", {counter, r.begin, r.end}}}, {}});
    b_.execute(std::move(v), "");
  }

  // Dropout and its gradient, and Gaussian noise (its rate param the stddev):
  // elementwise where the data lies; each vertex
  // reads its tile's copy of the step count and is told the global index of
  // its first element, so the mask of element i is the same function of
  // (seed, step, i) on every tile, in the forward and the backward pass.
  void lowerDropout(const Op& op, const std::string& codelet, const char* inField, const char* outField,
                    const char* rateParam = "rate") {
    const Id in = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(in);
    tensorOf(op.inputs[1]);  // the step count's copies (defined before the output)
    const Id out = produce(op.outputs[0], p);
    const std::string name = typed(codelet, {dtypeOf(op.outputs[0])});
    executePerWorker(p, vectorElements(dtypeOf(op.outputs[0]), target_), [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return ir::Vertex{name, tile, {{inField, {in, b, e}}, {"step", copyOf(op.inputs[1], tile)}, {outField, {out, b, e}}},
                        {{rateParam, op.rate}, {"seed", double(op.seed & ((1ull << 53) - 1))}, {"offset", double(b)}}};
    });
  }

  // The fused updates (every rule but plain SGD's ScaledAdd): in place where
  // the weight lies, its gradient brought there, its slots mapped as the
  // weight; the step count, Nadam's momentum product and a schedule's
  // learning rate read from the tile's own copies. A slot in Streaming Memory
  // (Value::inStreamingMemory) is loaded onto its tiles just before the
  // update and stored after it: its tile bytes live only between the two.
  void lowerOptimizerUpdate(const Op& op) {
    const Id w = tensorOf(op.inputs[0]);
    const Placement p = b_.placementOf(w);
    const Id grad = realize(op.inputs[1], p);
    const OptimizerSpec& o = op.optimizer;
    const ir::DType dtype = dtypeOf(op.inputs[0]);
    std::string codelet;
    std::vector<std::string> slotFields, tileFields;  // tileFields: PerTile / step inputs after the slots
    std::vector<std::pair<std::string, double>> params;
    switch (op.kind) {
      case OpKind::MomentumUpdate:
        codelet = "MomentumUpdate";
        slotFields = {"velocity"};
        params = {{"momentum", o.momentum}, {"nesterov", o.nesterov ? 1.0 : 0.0}};
        break;
      case OpKind::AdamUpdate:
        codelet = "AdamUpdate";
        slotFields = {"m", "v"};
        tileFields = {"step"};
        params = {{"beta1", o.beta1}, {"beta2", o.beta2}, {"epsilon", o.epsilon}};
        break;
      case OpKind::RmspropUpdate:
        codelet = std::string("RmspropUpdate") + (o.centered ? "Centered" : "") + (o.momentum > 0 ? "Momentum" : "");
        slotFields = {"velocity"};
        if (o.centered) slotFields.push_back("average");
        if (o.momentum > 0) slotFields.push_back("moment");
        params = {{"rho", o.rho}, {"epsilon", o.epsilon}};
        if (o.momentum > 0) params.push_back({"momentum", o.momentum});
        break;
      case OpKind::GradientDescentUpdate:
        codelet = "GradientDescentUpdate";
        break;
      case OpKind::AdagradUpdate:
        codelet = "AdagradUpdate";
        slotFields = {"accumulator"};
        params = {{"epsilon", o.epsilon}};
        break;
      case OpKind::AdamaxUpdate:
        codelet = "AdamaxUpdate";
        slotFields = {"m", "u"};
        tileFields = {"step"};
        params = {{"beta1", o.beta1}, {"beta2", o.beta2}, {"epsilon", o.epsilon}};
        break;
      default:  // NadamUpdate
        codelet = "NadamUpdate";
        slotFields = {"m", "v"};
        tileFields = {"step", "uProduct"};
        params = {{"beta1", o.beta1}, {"beta2", o.beta2}, {"epsilon", o.epsilon}};
        break;
    }
    if (o.schedule.enabled()) {
      codelet += "Scheduled";
      tileFields.push_back("learningRate");
    } else {
      params.insert(params.begin(), {"learningRate", o.learningRate});
    }
    if (o.weightDecay != 0) params.push_back({"weightDecay", o.weightDecay});
    FusedUpdate u{op, typed(codelet, {dtype}), w, grad, slotFields, tileFields, params, {}};
    if (g_.optimizerStateShards > 1) {
      lowerShardedUpdate(u);
      return;
    }
    std::vector<std::pair<Id, Id>> offloaded;  // (tile tensor, remote buffer)
    for (std::size_t s = 0; s < slotFields.size(); ++s) {
      u.slots.push_back(realize(op.inputs[2 + s], p));
      if (!g_.values[op.inputs[2 + s]].inStreamingMemory) continue;
      // The initial value is the buffer's: the load overwrites the tile tensor.
      std::vector<double> initial = std::exchange(b_.exe().tensors[u.slots.back()].initialValue, {});
      offloaded.push_back({u.slots.back(), b_.addRemoteBuffer(u.slots.back(), std::move(initial))});
      b_.remoteCopy(u.slots.back(), offloaded.back().second, false);
    }
    executePerWorker(p, vectorElements(dtype, target_), [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      return fusedUpdateVertex(u, tile, b, e, b);
    });
    for (const auto& [tensor, buffer] : offloaded) b_.remoteCopy(tensor, buffer, true);
  }

  // A fused update op as lowered: its codelet (typed), weight and gradient
  // tensors, slot tensors and fields, per-tile fields and params.
  struct FusedUpdate {
    const Op& op;
    std::string codelet;
    Id w, grad;
    std::vector<std::string> slotFields, tileFields;
    std::vector<std::pair<std::string, double>> params;
    std::vector<Id> slots;
  };
  // Its vertex on `tile` over elements [b, e) of the weight and gradient, the
  // slots' from `slotBegin` (b, unless sharded), the per-tile fields the tile's copies.
  ir::Vertex fusedUpdateVertex(const FusedUpdate& u, std::uint32_t tile, std::uint64_t b, std::uint64_t e,
                               std::uint64_t slotBegin) {
    std::vector<ir::VertexField> fields{{"data", {u.w, b, e}}, {"grad", {u.grad, b, e}}};
    for (std::size_t s = 0; s < u.slots.size(); ++s)
      fields.push_back({u.slotFields[s], {u.slots[s], slotBegin, slotBegin + (e - b)}});
    const std::size_t firstTileField = 2 + u.slotFields.size();
    for (std::size_t s = 0; s < u.tileFields.size(); ++s)
      fields.push_back({u.tileFields[s], copyOf(u.op.inputs[firstTileField + s], tile)});
    ir::Vertex vx{u.codelet, tile, std::move(fields), {}};
    for (const auto& [k, val] : u.params) vx.params[k] = val;
    return vx;
  }

  // A fused update sharded over R replicas (OpGraph::optimizerStateShards;
  // replication.hpp): every interval of the weight's mapping is cut into R
  // pieces (collectives.hpp perIntervalChunks, as the reduce-scatter cuts
  // the gradient), replica r updating the pieces of the chunk it owns. A
  // slot holds one piece per interval, the largest (ceil(n / R) elements),
  // on the interval's tile: each tile keeps 1/R of its state. The compute
  // set holds every chunk's vertices (shardOfVertex_ gives each one's chunk;
  // replicate() keeps each replica's); its estimate counts one chunk's.
  void lowerShardedUpdate(FusedUpdate& u) {
    const std::uint32_t shards = g_.optimizerStateShards;
    const std::vector<ir::TileInterval> mapping = b_.tensor(u.w).mapping;
    const Chunks parts = perIntervalChunks(mapping, shards);
    Placement shardPlacement;
    std::vector<std::uint64_t> at;  // each interval's first slot element
    std::uint64_t n = 0;
    for (const ir::TileInterval& iv : mapping) {
      at.push_back(n);
      const std::uint64_t pieces = ceilDiv(iv.end - iv.begin, shards);
      shardPlacement.push_back({n, n + pieces, iv.tile - b_.tileBase()});
      n += pieces;
    }
    for (std::size_t s = 0; s < u.slotFields.size(); ++s) {
      const std::size_t value = u.op.inputs[2 + s];
      const Value& v = g_.values[value];
      if (!v.initialValues.empty() || v.drawnInit)
        throw std::logic_error("lowering: slot '" + v.name + "' starts from per-element values, which a shard cannot split");
      u.slots.push_back(b_.addTensor(v.name, {n}, v.dtype, categoryOf(v), true, shardPlacement));
      if (v.initialFill != 0) b_.exe().tensors[u.slots.back()].initialValue.assign(n, v.initialFill);
      tensorOf_[value] = u.slots.back();
    }
    const std::uint64_t grain = vectorElements(dtypeOf(u.op.inputs[0]), target_);
    std::vector<ir::Vertex> vertices;
    std::vector<std::uint32_t> shardOf;
    std::size_t firstChunkVertices = 0;
    for (std::uint32_t c = 0; c < shards; ++c) {
      for (std::size_t j = 0; j < mapping.size(); ++j) {
        const ElementRange piece = parts[c][j];
        const std::uint32_t tile = mapping[j].tile - b_.tileBase();
        for (auto [b, e] : chunks(piece.begin, piece.end, target_.tile.workerContexts, grain)) {
          vertices.push_back(fusedUpdateVertex(u, tile, b, e, at[j] + (b - piece.begin)));
          shardOf.push_back(c);
        }
      }
      if (c == 0) firstChunkVertices = vertices.size();
    }
    const Id computeSet = Id(b_.exe().computeSets.size());
    b_.execute(std::move(vertices), "", firstChunkVertices);
    shardOfVertex_[computeSet] = std::move(shardOf);
  }

  // The step's learning rate (a schedule) and Nadam's momentum product: one
  // vertex per tile, on its own copies (each PerTile value's copy on tile t
  // is its [t n, (t + 1) n)).
  void lowerOptimizerScalar(const Op& op) {
    const Id step = tensorOf(op.inputs[0]);
    std::vector<ir::Vertex> v;
    if (op.kind == OpKind::NadamMomentumProduct) {
      for (const PlacedRange& r : b_.placementOf(step))
        v.push_back({"NadamMomentumProduct", r.tile, {{"step", copyOf(op.inputs[0], r.tile)}, {"product", copyOf(op.inputs[1], r.tile)}},
                     {{"beta1", op.optimizer.beta1}}});
      b_.execute(std::move(v), "");
      return;
    }
    produce(op.outputs[0], {});  // PerTile: its copies
    const LearningRateSchedule& s = op.optimizer.schedule;
    const bool piecewise = s.type == "piecewise_constant_decay";
    ir::VertexParams params;
    if (!piecewise) {
      const double kind = s.type == "exponential_decay" ? 0 : s.type == "cosine_decay" ? 1 : s.type == "polynomial_decay" ? 2 : 3;
      params = {{"schedule", kind}, {"initialLearningRate", s.initialLearningRate}, {"decaySteps", s.decaySteps},
                {"decayRate", s.decayRate}, {"staircase", s.staircase ? 1.0 : 0.0}, {"alpha", s.alpha},
                {"warmup", s.warmup ? 1.0 : 0.0}, {"warmupTarget", s.warmupTarget}, {"warmupSteps", s.warmupSteps},
                {"endLearningRate", s.endLearningRate}, {"power", s.power}, {"cycle", s.cycle ? 1.0 : 0.0}};
    }
    for (const PlacedRange& r : b_.placementOf(step)) {
      std::vector<ir::VertexField> fields{{"step", copyOf(op.inputs[0], r.tile)}};
      if (piecewise) {
        fields.push_back({"boundaries", copyOf(op.inputs[1], r.tile)});
        fields.push_back({"values", copyOf(op.inputs[2], r.tile)});
      }
      fields.push_back({"learningRate", copyOf(op.outputs[0], r.tile)});
      v.push_back({piecewise ? "PiecewiseConstantLearningRate" : "LearningRate", r.tile, std::move(fields), params});
    }
    b_.execute(std::move(v), "");
  }

  // Conv2D and its gradients (and a Conv2DTranspose's forward, an input
  // gradient): the convolution the vertex computes (conv_plan.hpp), planned
  // and lowered; a kernel gradient in its kernel's mapping.
  void lowerConvOp(const Op& op) {
    const Window& w = op.window;
    const Value& first = g_.values[op.inputs[0]];
    const Value& second = g_.values[op.inputs[1]];
    const std::size_t out = op.outputs[0];
    const Value& result = g_.values[out];
    ConvShape s;
    s.groups = op.groups;
    s.kernelH = w.kernelH, s.kernelW = w.kernelW;
    s.kernelDilationH = w.dilationH, s.kernelDilationW = w.dilationW;
    if (op.kind == OpKind::Conv2DInputGrad) {  // dy (dilated by the stride) with the flipped kernel
      s.pass = ConvPass::InputGrad;
      s.batch = first.shape[0], s.inH = first.shape[1], s.inW = first.shape[2], s.inChans = first.shape[3] / s.groups;
      s.outH = result.shape[1], s.outW = result.shape[2], s.outChans = result.shape[3] / s.groups;
      s.dilationH = w.strideH, s.dilationW = w.strideW;
      s.padTop = std::int64_t(w.effectiveH() - 1) - std::int64_t(w.padTop(result.shape[1]));
      s.padLeft = std::int64_t(w.effectiveW() - 1) - std::int64_t(w.padLeft(result.shape[2]));
      s.flipped = true;
    } else {
      const Value& dyOrOut = op.kind == OpKind::Conv2D ? result : second;
      s.pass = op.kind == OpKind::Conv2D ? ConvPass::Forward : ConvPass::WeightUpdate;
      s.batch = first.shape[0], s.inH = first.shape[1], s.inW = first.shape[2], s.inChans = first.shape[3] / s.groups;
      s.outH = dyOrOut.shape[1], s.outW = dyOrOut.shape[2], s.outChans = dyOrOut.shape[3] / s.groups;
      s.strideH = w.strideH, s.strideW = w.strideW;
      s.padTop = std::int64_t(w.padTop(s.inH)), s.padLeft = std::int64_t(w.padLeft(s.inW));
    }
    s.inputType = first.dtype, s.outputType = result.dtype;
    ConvTensors t;
    t.in = tensorOf(op.inputs[0]);
    t.weights = tensorOf(op.inputs[1]);
    const std::size_t weight = weightOf(op, result.shape);
    const bool isWeightGradient = op.kind == OpKind::Conv2DWeightGrad && weight != ~std::size_t(0);
    t.out = produce(out, isWeightGradient ? b_.placementOf(tensorOf(weight)) : mapTensor(result.shape, dtypeOf(out), target_, tiles_));
    s.inTiles = b_.tensor(t.in).mapping.size();
    s.weightTiles = b_.tensor(t.weights).mapping.size();
    s.outTiles = b_.tensor(t.out).mapping.size();
    const ConvPlan plan = planConv(s, target_, tiles_, budget_);
    convPlans_.push_back({op.layer + "/" + op.name, s, plan});
    lowerConv(b_, s, plan, t, result.name);
  }

  void lowerPoolOp(const Op& op, PoolCodelet codelet) {
    const bool grad = codelet == PoolCodelet::MaxPoolGrad || codelet == PoolCodelet::AvgPoolGrad;
    const Value& result = g_.values[op.outputs[0]];
    const Value& x = grad ? result : g_.values[op.inputs[0]];  // the forward input's shape
    const Window& w = op.window;
    PoolGeometry geometry{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.outH(x.shape[1]), w.outW(x.shape[2]),
                          w.kernelH, w.kernelW, w.strideH, w.strideW, w.padTop(x.shape[1]), w.padLeft(x.shape[2]),
                          result.dtype};
    PoolTensors t;
    if (codelet != PoolCodelet::AvgPoolGrad) t.in = tensorOf(op.inputs[0]);
    if (grad) t.gradOut = tensorOf(op.inputs.back());
    t.out = produce(op.outputs[0], mapTensor(result.shape, dtypeOf(op.outputs[0]), target_, tiles_));
    lowerPool(b_, codelet, geometry, t, tiles_, result.name);
  }

  OpGraph& g_;
  const model::Target& target_;
  std::uint32_t tiles_;
  std::uint64_t budget_;
  IrBuilder b_;
  std::vector<Id> tensorOf_;
  std::map<Id, std::vector<std::uint32_t>> shardOfVertex_;  // LoweredStep::shardOfVertex
  std::map<std::pair<std::size_t, std::uint32_t>, Id> onIpu_;  // (value, IPU's first tile) -> its copy there
 public:
  std::vector<PlannedMatMul> plans_;
  std::vector<PlannedConv> convPlans_;
};

}  // namespace

LoweredStep lowerStep(OpGraph& g, const Schedule& schedule, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t memoryBudget, const std::map<std::string, std::uint32_t>& tileBaseOfLayer,
                      std::uint64_t maxVertices) {
  Lowerer lowerer(g, target, tiles, memoryBudget);
  LoweredStep step = lowerer.run(schedule, tileBaseOfLayer, maxVertices);
  step.matMulPlans = std::move(lowerer.plans_);
  step.convPlans = std::move(lowerer.convPlans_);
  return step;
}

}  // namespace ipusim::scheduler
