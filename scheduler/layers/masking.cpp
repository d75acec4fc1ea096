// masking (Keras's Masking) over a [steps, features] input: a step whose
// every feature equals mask_value is masked (Keras: any(inputs !=
// mask_value, axis=-1)) and its features zeroed (inputs x mask); the output
// carries the mask to the layers that take it (Layer::maskUse), as an
// Embedding's mask_zero does: the mask is an int [batch, steps] of 1 (kept)
// and 0 (masked), read as token ids are (ids != 0). Ops: IdMask index 5
// (the mask from the values), IdMask index 0 (its gate over the features)
// and a Mul, whose gradient passes the kept steps' gradients.
#include "model/numeric/half.hpp"
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

class MaskingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kMasking}; }
  std::vector<std::string> kerasClasses() const override { return {"Masking"}; }
  // Keras's Masking makes its own mask (compute_mask), whatever its input carries.
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Consumes; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"mask_value"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.maskValue = l.number("mask_value", 0.0);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kMasking;
    spec.maskValue = c.number("mask_value", 0.0);
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    if (in[0].size() != 2)
      fail("", "an input of " + std::to_string(in[0].size()) +
                   " dimensions per example: inputs of [steps, features] (rank 3 with the batch) are modelled");
    if (!std::isfinite(l.maskValue)) fail("mask_value", "expected a finite number");
    return in[0];
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    CellOps ops(b, l.name);
    const std::uint64_t steps = l.inputShape.at(0), features = l.inputShape.at(1), rows = b.batch() * steps;
    const std::size_t x = b.reshape(inputs[0], {rows, features}, l.name, "rows");
    // Keras compares in the input's type: mask_value rounded to it.
    const bool half = g.values[x].dtype == ir::DType::Half;
    // A finite mask_value beyond the compute type's range (float32's
    // 3.4028235e+38, float16's 65504) rounds to an infinity, which no vertex
    // parameter may hold: refused here, naming the key (the run failed on the
    // vertex's parameter, naming no file, layer or key).
    const bool fitsFloat = std::fabs(l.maskValue) <= double(std::numeric_limits<float>::max());
    const double maskValue = !fitsFloat ? HUGE_VAL
                             : half     ? model::numeric::halfToFloat(model::numeric::floatToHalf(float(l.maskValue)))
                                        : float(l.maskValue);
    if (!std::isfinite(maskValue)) {
      throw std::invalid_argument("layer '" + l.name + "' (masking): mask_value: " + nlohmann::json(l.maskValue).dump() +
                                  " is not finite once rounded to the model's compute type (" +
                                  (half ? "float16: expected |mask_value| < 65520, which rounds to float16's largest, 65504"
                                        : "float32: expected |mask_value| <= 3.4028235e+38, float32's largest") + ")");
    }
    const std::size_t ids = b.value(l.name + "/mask", {rows}, ir::DType::Int, ValueKind::Activation, l.name);
    Op fromValues{OpKind::IdMask, "mask", l.name, {x}, {ids}};
    fromValues.index = 5;
    fromValues.scale = maskValue;
    g.addOp(fromValues);
    const std::size_t gate = b.value(l.name + "/mask_gate", {rows, features}, b.compute(), ValueKind::Activation, l.name);
    Op keep{OpKind::IdMask, "mask_gate", l.name, {ids}, {gate}};
    g.addOp(keep);
    const std::size_t out = b.shaped(ops.multiply(x, gate, "masked"), l.outputShape, l.name, "unrows");
    b.setMask(out, b.reshape(ids, {b.batch(), steps}, l.name, "mask_ids"));
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makeMaskingLayer() { return std::make_unique<MaskingLayer>(); }

}  // namespace ipusim::scheduler
