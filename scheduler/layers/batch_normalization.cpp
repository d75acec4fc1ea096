// batch_normalization (Keras's BatchNormalization over the channels, the
// last axis, in training): the ops and their gradients are
// batch_norm_layer.hpp's, popnn's decomposition. gamma and beta are weights
// with scale / center (ones and zeros), else fixed values; the moving mean
// and variance are non-trainable device state.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/batch_norm_layer.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

class BatchNormalizationLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kBatchNormalization}; }
  std::vector<std::string> kerasClasses() const override { return {"BatchNormalization"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"momentum", "epsilon", "center", "scale"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.momentum = l.numberIn("momentum", spec.momentum, 0, 1, false);
    readNormalizationKeys(l, spec);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kBatchNormalization;
    c.ignore({"axis"});
    const nlohmann::json& axis = c.at("axis");
    // Checked against the input's rank in outputShape: only the last axis is modelled.
    if (axis.is_number_integer()) spec.axis = axis.get<std::int64_t>();
    else if (axis.is_array() && axis.size() == 1 && axis[0].is_number_integer()) spec.axis = axis[0].get<std::int64_t>();
    else if (c.isNull("axis")) c.refuseNull("axis", "the channels axis, -1");  // Keras: int(None), TF 2.x: TypeError
    else if (axis.is_null()) spec.axis = -1;  // absent: Keras's default
    else c.fail("axis", axis.dump() + " is not modelled (one axis, the channels)");
    spec.momentum = c.number("momentum", 0.99);
    if (!(spec.momentum >= 0 && spec.momentum <= 1))
      c.fail("momentum", "expected a number in [0, 1], got " + nlohmann::json(spec.momentum).dump());
    readNormalizationKeys(c, spec);
    c.requireInitializer("moving_mean_initializer", {"Zeros"});
    c.requireInitializer("moving_variance_initializer", {"Ones"});
    c.requireValue("synchronized", false, "cross-replica statistics");
    c.requireValue("renorm", false, "batch renormalization");
    c.ignore({"renorm_clipping", "renorm_momentum"});  // only meaningful with renorm
    c.requireNull("virtual_batch_size", "ghost batch normalization");
    c.requireNull("adjustment", "a custom adjustment");
    // An implementation choice of TF 2.x: the same training; its fused kernel
    // updates the moving variance with the unbiased batch variance
    // (tensorflow/tensorflow#55545), ipusim with the biased one, as Keras 3.
    c.ignore({"fused"});
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    // The channels axis, counted with the batch: the last (-1 or rank - 1).
    const std::int64_t rank = std::int64_t(in[0].size()) + 1;
    if (spec.axis != -1 && spec.axis != rank - 1)
      fail("axis", std::to_string(spec.axis) + " is not modelled (only the last axis, -1 or " + std::to_string(rank - 1) +
                       ", of a rank-" + std::to_string(rank) + " input)");
    return in[0];  // one mean and variance per channel (the last axis)
  }

  bool hasWeights(const LayerSpec& l) const override { return l.center || l.scale; }
  Footprint footprint(const LayerSpec& l) const override {
    // gamma and beta (weights, or fixed float values), the moving mean and
    // variance; the input gradient reads the whitened input.
    const long double c = l.outputShape.back();
    Footprint f{{}, 2 * c, "whitened", (long double)elementsOf(l.inputShape)};
    if (l.scale) f.weights.push_back({"gamma", c});
    else f.stateElements += c;
    if (l.center) f.weights.push_back({"beta", c});
    else f.stateElements += c;
    return f;
  }
  bool readsShapedInput(const LayerSpec& l) const override { return l.inputShape.size() > 1; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    // Its statistics are per channel: the channels must be the value's last axis.
    const std::size_t x = l.inputShape.size() > 1 ? b.shaped(inputs[0], l.inputShape, l.name, "reshape_input") : inputs[0];
    const BatchNormForward f = addBatchNorm(b, x, l);
    if (!b.training()) return f.output;
    if (!l.trainable) {  // frozen: normalized by constants, only the input takes a gradient
      b.record({x}, f.output, false, [&b, f, x, l](const Backward& bw) {
        if (bw.wants(x)) bw.deliver(x, addFrozenBatchNormInputGrad(b, f, bw.grad, l));
      });
      return f.output;
    }
    b.record({x}, f.output, hasWeights(l), [&b, f, x](const Backward& bw) {
      std::map<std::size_t, std::size_t> weightGrad;
      const std::size_t dx = addBatchNormGrad(b.graph(), f, bw.grad, bw.wants(x), weightGrad);
      for (const auto& [weight, grad] : weightGrad) bw.weightGradient(weight, grad);
      if (bw.wants(x)) bw.deliver(x, dx);
    });
    return f.output;
  }
};

}  // namespace

std::unique_ptr<Layer> makeBatchNormalizationLayer() { return std::make_unique<BatchNormalizationLayer>(); }

}  // namespace ipusim::scheduler
