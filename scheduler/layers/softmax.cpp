// softmax (Keras's Softmax layer): exp(x - max) / sum exp(x - max) along
// `axis` (Keras's count: 0 the batch, -1 the last), standalone with its own
// gradient y (g - sum(g y)) (activation_functions.hpp addSoftmax: Softmax
// and SoftmaxGrad ops over blocks of the axis). On the model's output under a
// categorical cross-entropy it is the loss's softmax, as the activation is.
// A list of several axes (a softmax over their product) is not modelled.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

template <class Fail>
std::int64_t softmaxAxisOf(const nlohmann::json& v, Fail fail) {
  if (v.is_null()) return -1;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_array() && v.size() == 1 && v[0].is_number_integer()) return v[0].get<std::int64_t>();
  if (v.is_array() && v.size() > 1) fail(v.dump() + ": a softmax over several axes is not modelled (one axis)");
  fail("expected an integer (Keras's count: 1 the first axis after the batch, -1 the last), got " + v.dump());
  return -1;
}

class SoftmaxLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kSoftmax}; }
  std::vector<std::string> kerasClasses() const override { return {"Softmax"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"axis"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.activation = Activation::Softmax;
    spec.axis = softmaxAxisOf(l.raw().value("axis", nlohmann::json()), [&](const std::string& w) { l.fail(l.key("axis"), w); });
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kSoftmax;
    spec.activation = Activation::Softmax;
    c.ignore({"axis"});
    // TF 2.x's backend.softmax hands None to tf.nn.softmax, which takes the
    // last axis; Keras 3's ops.softmax normalizes over every element of the
    // batch at once (its backends reshape to one axis).
    if (c.isNull("axis") && c.format() == "keras3")
      c.fail("axis", "null (Keras 3: one softmax over every element of the batch) is not modelled; give an axis");
    spec.axis = softmaxAxisOf(c.at("axis"), [&](const std::string& w) { c.fail("axis", w); });
  }
  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::int64_t rank = std::int64_t(in[0].size()) + 1;  // with the batch
    const std::int64_t axis = l.axis < 0 ? l.axis + rank : l.axis;
    if (axis < 1 || axis >= rank)
      fail("axis", std::to_string(l.axis) + " is not an axis of the rank-" + std::to_string(rank) + " input but the batch's (1 to " +
                       std::to_string(rank - 1) + ", or -1 to " + std::to_string(1 - rank) + ")");
    l.axis = axis;
    return in[0];
  }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    // The last axis: as the softmax activation (the loss's on the model's output).
    if (std::size_t(l.axis) == l.inputShape.size()) return b.activation(l, Activation::Softmax, inputs[0]);
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    return addSoftmax(b, l.name, x, std::size_t(l.axis));
  }
};

}  // namespace

std::unique_ptr<Layer> makeSoftmaxLayer() { return std::make_unique<SoftmaxLayer>(); }

}  // namespace ipusim::scheduler
