// rescaling (Keras's Rescaling): out = in * scale + offset, scale and offset
// each a number or an array broadcast against the input as numpy broadcasts
// (a list of one value per channel, the last axis; Keras 3 writes arrays as
// {"class_name": "__numpy__", ...}). The constants live on the device in the
// compute type, expanded to one value per element of the trailing axes they
// cover (broadcast_constant.hpp), and a ScaleShift op reads them per column;
// its gradient is the incoming one times scale (a ScaleShift with no shift),
// built only when something before it trains. TF op nodes scaling a tensor
// by a number (x / 255, x * 2 - 1) are read as this layer too
// (models/keras_graph.hpp).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/broadcast_constant.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <algorithm>

namespace ipusim::scheduler {
namespace {

struct ScaleAndOffset {
  std::vector<double> scale, offset, zeros;  // per column
};

// The first axis the per-column vectors cover.
std::size_t rescalingFirstAxis(const LayerSpec& l) {
  const std::size_t rank = l.inputShape.size();
  return std::min(firstColumnAxis(l.scaleFactor, trailingAxes(l.scaleFactor, rank), rank),
                  firstColumnAxis(l.offset, trailingAxes(l.offset, rank), rank));
}

ScaleAndOffset rescalingColumns(const LayerSpec& l) {
  const std::size_t rank = l.inputShape.size();
  const std::vector<std::size_t> scaleAxes = trailingAxes(l.scaleFactor, rank), offsetAxes = trailingAxes(l.offset, rank);
  const std::size_t from = rescalingFirstAxis(l);
  ScaleAndOffset c;
  c.scale = expandBroadcast(l.scaleFactor, scaleAxes, l.inputShape, from);
  c.offset = expandBroadcast(l.offset, offsetAxes, l.inputShape, from);
  c.zeros.assign(c.scale.size(), 0.0);
  return c;
}

class RescalingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kRescaling}; }
  std::vector<std::string> kerasClasses() const override { return {"Rescaling"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"scale", "offset"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("scale")) l.fail(l.key("scale"), "missing (expected a number or a list, e.g. 0.00392156862745098 for 1/255)");
    read(l.raw().at("scale"), l.raw().value("offset", nlohmann::json(0.0)), spec,
         [&](const std::string& key, const std::string& what) { l.fail(l.key(key), what); });
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kRescaling;
    c.require("scale", "a number or a list");
    if (c.isNull("offset")) c.refuseNull("offset", "a number or a list");  // Keras casts it to a tensor
    c.ignore({"scale", "offset"});
    read(c.at("scale"), c.has("offset") ? c.at("offset") : nlohmann::json(0.0), spec,
         [&](const std::string& key, const std::string& what) { c.fail(key, what); });
  }
  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::size_t rank = in[0].size();
    for (const auto& item : {std::pair<const char*, const BroadcastConstant*>{"scale", &l.scaleFactor}, {"offset", &l.offset}}) {
      const char* key = item.first;  // not a structured binding: clang before 16 cannot capture one in a lambda
      const BroadcastConstant* c = item.second;
      std::size_t dims = 0;
      for (std::uint64_t d : c->shape) dims += dims || d != 1;  // leading ones broadcast over anything
      if (dims > rank) fail(key, "shape " + shapeText(c->shape) + " has more axes than the " + shapeText(in[0]) + " input");
      checkBroadcast(*c, trailingAxes(*c, rank), in[0], [&](const std::string& what) { fail(key, what); });
    }
    return in[0];
  }
  Footprint footprint(const LayerSpec& l) const override {
    return {{}, 2 * columnsFrom(l.inputShape, rescalingFirstAxis(l)), "", 0};  // scale and offset, one per column
  }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    const std::size_t x = inputs[0];
    const ScaleAndOffset c = rescalingColumns(l);
    const std::size_t scale = addLayerConstant(b, l, "scale", c.scale);
    const std::size_t offset = addLayerConstant(b, l, "offset", c.offset);
    const std::size_t out = b.value(l.name + "/rescaling", g.values[x].shape, b.compute(), ValueKind::Activation, l.name);
    g.addOp({OpKind::ScaleShift, "rescaling", l.name, {x, scale, offset}, {out}});
    b.record({x}, out, false, [&b, l, x, scale, zeros = c.zeros](const Backward& bw) {
      OpGraph& g = b.graph();
      const std::size_t noShift = addLayerConstant(b, l, "no_shift", zeros);
      const std::size_t dx = b.value(l.name + "/rescaling_grad", g.values[x].shape, b.compute(), ValueKind::Gradient, l.name);
      g.addOp({OpKind::ScaleShift, "rescaling_grad", l.name, {bw.grad, scale, noShift}, {dx}});
      bw.deliver(x, dx);
    });
    return out;
  }

 private:
  template <class Fail>
  static void read(const nlohmann::json& scale, const nlohmann::json& offset, LayerSpec& spec, Fail fail) {
    spec.scaleFactor = readBroadcastConstant(scale, [&](const std::string& w) { fail("scale", w); });
    spec.offset = readBroadcastConstant(offset, [&](const std::string& w) { fail("offset", w); });
  }
};

}  // namespace

std::unique_ptr<Layer> makeRescalingLayer() { return std::make_unique<RescalingLayer>(); }

}  // namespace ipusim::scheduler
