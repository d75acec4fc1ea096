// group_normalization (Keras's GroupNormalization, Wu & He 2018): the
// channels (the last axis) split into `groups` groups of C / groups; each
// example's values of a group, over every position, whitened by their own
// mean and biased variance, then scaled by gamma and shifted by beta, one
// per channel. As keras/src/layers/normalization/group_normalization.py:
// the input reshaped to [..., groups, C / groups], ops.moments over every
// axis but the batch and the group, rsqrt(variance + epsilon); groups -1
// means one group per channel.
//
// Built from row_norm.hpp's ops, as popnn builds its group norm: the input
// [batch, positions, groups, C / groups] transposed to [batch, groups,
// positions, C / groups] (a CopyView, view_ops.hpp; not needed with one
// group or one position), rows of positions x C / groups normalized
// (LayerNormalise), transposed back, and gamma and beta applied per channel
// (ScaleShift); the gradient the same way backward. The transposes are
// exchange-only copies; popnn normalises the groups where the channels lie
// (an estimate of its cost: it reduces strided instead).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/row_norm.hpp"
#include "scheduler/layers/view_ops.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

// Keras's axis: only the channels, the last, are modelled.
template <class Fail>
void requireLastAxis(const nlohmann::json& v, Fail fail) {
  if (v.is_number_integer() && v.get<std::int64_t>() == -1) return;
  if (v.is_array() && v.size() == 1 && v[0].is_number_integer() && v[0].get<std::int64_t>() == -1) return;
  fail(v.dump() + " is not modelled (the channels, the last axis: -1)");
}

class GroupNormalizationLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kGroupNormalization}; }
  std::vector<std::string> kerasClasses() const override { return {"GroupNormalization"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"groups", "epsilon", "center", "scale"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    const double groups = l.number("groups", 32);
    if (!(groups == -1 || (groups >= 1 && groups <= 1e9 && groups == double(std::int64_t(groups)))))
      l.fail(l.key("groups"), "expected a positive integer, or -1 (one group per channel)");
    spec.channelGroups = std::int64_t(groups);
    readNormalizationKeys(l, spec);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kGroupNormalization;
    const std::int64_t groups = c.integer("groups", 32);
    if (!(groups == -1 || groups >= 1)) c.fail("groups", "expected a positive integer, or -1 (one group per channel)");
    spec.channelGroups = groups;
    c.ignore({"axis"});
    if (c.has("axis")) requireLastAxis(c.at("axis"), [&](const std::string& w) { c.fail("axis", w); });
    readNormalizationKeys(c, spec);
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::uint64_t channels = in[0].back();
    if (l.channelGroups == -1) l.channelGroups = std::int64_t(channels);
    if (std::uint64_t(l.channelGroups) > channels)
      fail("groups", std::to_string(l.channelGroups) + " groups cannot be more than the " + std::to_string(channels) + " channels");
    if (channels % std::uint64_t(l.channelGroups))
      fail("groups", std::to_string(l.channelGroups) + " does not divide the " + std::to_string(channels) + " channels");
    return in[0];
  }

  bool hasWeights(const LayerSpec& l) const override { return l.center || l.scale; }
  Footprint footprint(const LayerSpec& l) const override {
    // gamma and beta per channel; the input gradient reads the whitened
    // input (grouped) and a float invStdDev per example and group.
    const long double c = l.inputShape.back(), elements = elementsOf(l.inputShape);
    Footprint f{{}, 0, "whitened", elements + (long double)l.channelGroups};
    if (l.scale) f.weights.push_back({"gamma", c});
    if (l.center) f.weights.push_back({"beta", c});
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    const std::uint64_t batch = b.batch(), channels = l.inputShape.back(), groups = std::uint64_t(l.channelGroups);
    const std::uint64_t positions = elementsOf(l.inputShape) / channels, perGroup = channels / groups;
    const std::vector<std::uint64_t> grouped{batch, positions, groups, perGroup}, byGroup{batch, groups, positions, perGroup};
    const std::vector<std::size_t> swap{0, 2, 1, 3};  // positions <-> groups, its own inverse
    const bool transpose = positions > 1 && groups > 1;
    const std::size_t x = b.reshape(inputs[0], grouped, l.name, "grouped");
    // Rows of one example's group: [batch x groups, positions x C / groups].
    // (By value: the backward pass calls them after build returns.)
    const std::vector<std::uint64_t> rows{batch * groups, positions * perGroup}, byChannel{batch * positions, channels};
    auto toRows = [&g, grouped, swap, rows, transpose, layer = l.name](std::size_t v, const char* name, ValueKind kind) {
      const std::size_t t = transpose ? addTranspose(g, v, grouped, swap, layer, std::string(name) + "_by_group", kind) : v;
      return reshapedValue(g, t, rows, layer, std::string(name) + "_rows", kind);
    };
    auto fromRows = [&g, byGroup, swap, byChannel, transpose, layer = l.name](std::size_t v, const char* name, ValueKind kind) {
      const std::size_t t = transpose ? addTranspose(g, v, byGroup, swap, layer, std::string(name) + "_by_position", kind) : v;
      return reshapedValue(g, t, byChannel, layer, std::string(name) + "_channels", kind);
    };
    const RowNormalized f = addRowNormalise(b, toRows(x, "input", ValueKind::Activation), l.epsilon, l.name);
    const std::size_t whitened = fromRows(f.whitened, "whitened", ValueKind::Activation);
    const ColumnAffine affine = addColumnAffine(b, l, whitened);
    const bool trained = hasWeights(l) && l.trainable;
    b.record({x}, affine.output, trained, [&b, l, x, f, whitened, affine, toRows, fromRows](const Backward& bw) {
      const std::size_t grad = reshapedValue(b.graph(), bw.grad, b.graph().values[whitened].shape, l.name, "output_grad_channels",
                                             ValueKind::Gradient);
      const std::size_t whitenedGrad = addColumnAffineGrad(b, bw, l, affine, whitened, grad, bw.wants(x));
      if (!bw.wants(x)) return;
      const std::size_t dx = addRowNormaliseGrad(b, f, toRows(whitenedGrad, "whitened_grad", ValueKind::Gradient), l.name);
      bw.deliver(x, reshapedValue(b.graph(), fromRows(dx, "input_grad", ValueKind::Gradient), b.graph().values[x].shape, l.name,
                                  "input_grad_grouped", ValueKind::Gradient));
    });
    return b.shaped(affine.output, l.outputShape, l.name, "ungrouped");
  }
};

}  // namespace

std::unique_ptr<Layer> makeGroupNormalizationLayer() { return std::make_unique<GroupNormalizationLayer>(); }

}  // namespace ipusim::scheduler
