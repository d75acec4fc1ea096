// Batch normalization's vertices (channels last: a rows x cols block of
// activations, cols channels; the per-channel vectors float), as
// scheduler/layers/batch_norm_layer.hpp decomposes a layer:
//   BatchNormStatistics (n channels): variance = max(meanSquare - mean^2, 0),
//     invStdDev = 1 / sqrt(variance + epsilon); movingMean and
//     movingVariance (in place) = moving * momentum + batch * (1 - momentum)
//     (Keras's BatchNormalization.call, the biased batch variance).
//   BatchNormInvStdDev (inference): invStdDev = 1 / sqrt(movingVariance + epsilon).
//   BatchNormalise: whitened = (in - mean) * invStdDev, out = whitened * gamma + beta.
//   BatchNormInputGrad: gradOut = (gradIn - scale * (whitened * gammaDelta
//     + betaDelta)) * gamma * invStdDev, scale = 1 / M (popnn batchNormGradients).
// The <half> variants take half activations (in, whitened, out, gradients),
// the per-channel vectors staying float (Keras normalises float16 inputs in
// float32).
// Timing (cycle_model.hpp, estimates: popnn has no such vertex, it chains
// popops ops): BatchNormStatistics as a BinaryOp2D region,
//   kBinaryOpVertexOverhead + ceil(n / 2) * kBatchNormStatisticsCyclesPerVector;
// the others as BroadcastVectorOuterByRow, one outer iteration per row:
//   kBroadcastVertexOverhead + rows * (kBroadcastRowOverhead + vectors(cols) * perVector)
//   (+ vectors(cols) * kAddSubMulCyclesPerVector for InputGrad's gamma x invStdDev).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipusim::model {
namespace {

constexpr ir::DType F = ir::DType::Float;

class BatchNormStatistics final : public FlatCodelet<BatchNormStatistics> {
 public:
  std::string name() const override { return "BatchNormStatistics"; }
  std::vector<FieldSpec> fields() const override {
    return {{"mean", F, FieldAccess::In},
            {"meanSquare", F, FieldAccess::In},
            {"movingMean", F, FieldAccess::InOut},
            {"movingVariance", F, FieldAccess::InOut},
            {"invStdDev", F, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"epsilon", "momentum"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    for (const char* f : {"meanSquare", "movingMean", "movingVariance", "invStdDev"}) check.expectSameSize(f, "mean");
    const double epsilon = check.param("epsilon"), momentum = check.param("momentum");
    if (!(epsilon > 0))
      throw std::invalid_argument("BatchNormStatistics: param 'epsilon' is " + std::to_string(epsilon) + ", expected > 0");
    if (!(momentum >= 0 && momentum <= 1))
      throw std::invalid_argument("BatchNormStatistics: param 'momentum' is " + std::to_string(momentum) +
                                  ", expected a number in [0, 1]");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kBinaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, F) * cycles::kBatchNormStatisticsCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const float* mean = f[0].as<const float>();
    const float* meanSquare = f[1].as<const float>();
    float* movingMean = f[2].as<float>();
    float* movingVariance = f[3].as<float>();
    float* invStdDev = f[4].as<float>();
    const float epsilon = float(params[0]), momentum = float(params[1]);
    for (std::uint64_t c = 0; c < f[0].size; ++c) {
      const float variance = std::max(meanSquare[c] - mean[c] * mean[c], 0.0f);
      invStdDev[c] = 1.0f / std::sqrt(variance + epsilon);
      movingMean[c] = movingMean[c] * momentum + mean[c] * (1.0f - momentum);
      movingVariance[c] = movingVariance[c] * momentum + variance * (1.0f - momentum);
    }
  }
};

// Inference (Keras's BatchNormalization.call with training=False): the
// moving variance's invStdDev, the moving statistics left as they are.
class BatchNormInvStdDev final : public FlatCodelet<BatchNormInvStdDev> {
 public:
  std::string name() const override { return "BatchNormInvStdDev"; }
  std::vector<FieldSpec> fields() const override {
    return {{"variance", F, FieldAccess::In}, {"invStdDev", F, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"epsilon"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("invStdDev", "variance");
    const double epsilon = check.param("epsilon");
    if (!(epsilon > 0))
      throw std::invalid_argument("BatchNormInvStdDev: param 'epsilon' is " + std::to_string(epsilon) + ", expected > 0");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kBinaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, F) * cycles::kBatchNormInvStdDevCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const float* variance = f[0].as<const float>();
    float* invStdDev = f[1].as<float>();
    const float epsilon = float(params[0]);
    for (std::uint64_t c = 0; c < f[0].size; ++c) invStdDev[c] = 1.0f / std::sqrt(variance[c] + epsilon);
  }
};

// The shared frame of the two row-wise vertices: params rows, cols; `rowFields`
// rows x cols, the others cols.
class RowwiseShape {
 public:
  static void check(const Codelet& c, const VertexShape& shape, std::initializer_list<const char*> rowFields,
                    std::initializer_list<const char*> channelFields) {
    ShapeCheck check(c, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const std::string matrix = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
    for (const char* f : rowFields) check.expectSize(f, rows * cols, matrix);
    for (const char* f : channelFields) check.expectSize(f, cols, "cols");
  }
  static ir::Cycles cycles(const VertexShape& shape, const Target& target, ir::DType vectorType, ir::Cycles perVector) {
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    return cycles::broadcastRowsCycles(rows, cols, target, vectorType, perVector);
  }
};

class BatchNormalise final : public FlatCodelet<BatchNormalise> {
 public:
  explicit BatchNormalise(ir::DType vectorType = F) : vectorType_(vectorType) {}
  std::string name() const override { return "BatchNormalise"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", F, FieldAccess::In},          {"mean", F, FieldAccess::In},     {"invStdDev", F, FieldAccess::In},
            {"gamma", F, FieldAccess::In},       {"beta", F, FieldAccess::In},     {"whitened", F, FieldAccess::Out},
            {"out", F, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "cols"}; }
  void validate(const VertexShape& shape) const override {
    RowwiseShape::check(*this, shape, {"in", "whitened", "out"}, {"mean", "invStdDev", "gamma", "beta"});
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return RowwiseShape::cycles(shape, target, vectorType_, cycles::kBatchNormaliseCyclesPerVector);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const float* in = f[0].as<const float>();
    const float *mean = f[1].as<const float>(), *invStdDev = f[2].as<const float>();
    const float *gamma = f[3].as<const float>(), *beta = f[4].as<const float>();
    float *whitened = f[5].as<float>(), *out = f[6].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r)
      for (std::uint64_t c = 0; c < cols; ++c) {
        const std::uint64_t i = r * cols + c;
        const float w = (in[i] - mean[c]) * invStdDev[c];
        whitened[i] = w;
        out[i] = w * gamma[c] + beta[c];
      }
  }

 private:
  ir::DType vectorType_;
};

class BatchNormInputGrad final : public FlatCodelet<BatchNormInputGrad> {
 public:
  explicit BatchNormInputGrad(ir::DType vectorType = F) : vectorType_(vectorType) {}
  std::string name() const override { return "BatchNormInputGrad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"gradIn", F, FieldAccess::In},     {"whitened", F, FieldAccess::In}, {"gammaDelta", F, FieldAccess::In},
            {"betaDelta", F, FieldAccess::In},  {"gamma", F, FieldAccess::In},    {"invStdDev", F, FieldAccess::In},
            {"gradOut", F, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "cols", "scale"}; }
  void validate(const VertexShape& shape) const override {
    RowwiseShape::check(*this, shape, {"gradIn", "whitened", "gradOut"}, {"gammaDelta", "betaDelta", "gamma", "invStdDev"});
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto cols = std::uint64_t(shape.params[1]);
    return RowwiseShape::cycles(shape, target, vectorType_, cycles::kBatchNormInputGradCyclesPerVector) +
           cycles::vectors(cols, target, F) * cycles::kAddSubMulCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const float scale = float(params[2]);
    const float *gradIn = f[0].as<const float>(), *whitened = f[1].as<const float>();
    const float *gammaDelta = f[2].as<const float>(), *betaDelta = f[3].as<const float>();
    const float *gamma = f[4].as<const float>(), *invStdDev = f[5].as<const float>();
    float* gradOut = f[6].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r)
      for (std::uint64_t c = 0; c < cols; ++c) {
        const std::uint64_t i = r * cols + c;
        gradOut[i] = (gradIn[i] - scale * (whitened[i] * gammaDelta[c] + betaDelta[c])) * (gamma[c] * invStdDev[c]);
      }
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addBatchNormCodelets(CodeletRegistry& registry) {
  registry.add(std::make_unique<BatchNormStatistics>());
  registry.add(std::make_unique<BatchNormInvStdDev>());
  addWithHalfActivations<BatchNormalise>(registry, {"in", "whitened", "out"});
  addWithHalfActivations<BatchNormInputGrad>(registry, {"gradIn", "whitened", "gradOut"});
}

}  // namespace ipusim::model
