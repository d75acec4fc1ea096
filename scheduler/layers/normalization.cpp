// normalization (Keras's Normalization): out = (in - mean) / max(sqrt(variance),
// epsilon), epsilon 1e-7 (backend.epsilon()), as keras/src/layers/
// preprocessing/normalization.py computes it; invert: mean + in * max(sqrt(variance),
// epsilon). `axis` (-1 by default; an integer, a list, or null for one mean
// over everything) names the axes kept: a mean and variance per position along
// them, laid on the kept axes from the right (Keras reshapes them so),
// broadcast over the others.
//
// The mean and variance are non-trainable state, constant during training:
// from the config (Keras's `mean` and `variance`) or the workload when given.
// A model file does not hold what adapt() computed (its weights), so when
// they are not given the layer keeps Keras's initial state, mean 0 and
// variance 1 (it passes its input through) and the compile warns
// (OpGraph::warnings, CompileReport::warnings).
//
// The device holds the mean and the divisor max(sqrt(variance), epsilon),
// computed as Keras does in float, one per element of the trailing axes they
// cover (broadcast_constant.hpp); a Normalize op (invert: ScaleShift) reads
// them per column. The gradient (only when something before it trains) is
// the incoming one divided by the divisor (times it, inverted): a ScaleShift
// by its reciprocal.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/broadcast_constant.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::scheduler {
namespace {

constexpr float kNormalizationEpsilon = 1e-7f;  // keras backend.epsilon()

// Keras's axis: null (no axis kept), an integer or a list of them.
template <class Fail>
std::vector<std::int64_t> keptAxesOf(const nlohmann::json& v, bool given, Fail fail) {
  if (!given) return {-1};
  std::vector<std::int64_t> axes;
  if (v.is_null()) return axes;
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  for (const auto& a : list) {
    if (!a.is_number_integer()) fail("expected null, an integer or a list of integers, got " + v.dump());
    axes.push_back(a.get<std::int64_t>());
  }
  return axes;
}

// The per-example axes (0-based) the mean's dims lie on: the kept axes, from the right.
std::vector<std::size_t> statisticsAxes(const LayerSpec& l) {
  std::vector<std::size_t> axes;
  const std::size_t dims = l.mean.shape.size();
  for (std::size_t d = 0; d < dims; ++d) axes.push_back(std::size_t(l.axes[l.axes.size() - dims + d] - 1));
  return axes;
}

struct NormalizationColumns {
  std::vector<double> mean, divisor, gradientScale, zeros;
};

// The first axis the per-column vectors cover.
std::size_t normalizationFirstAxis(const LayerSpec& l) {
  return firstColumnAxis(l.mean, l.mean.shape.empty() ? std::vector<std::size_t>{} : statisticsAxes(l), l.inputShape.size());
}

NormalizationColumns normalizationColumns(const LayerSpec& l) {
  BroadcastConstant mean = l.mean, variance = l.variance;
  if (!mean.given()) mean.values = {0.0}, variance.values = {1.0};  // Keras's initial adapt state
  const std::vector<std::size_t> axes = mean.shape.empty() ? std::vector<std::size_t>{} : statisticsAxes(l);
  const std::size_t from = normalizationFirstAxis(l);
  NormalizationColumns c;
  c.mean = expandBroadcast(mean, axes, l.inputShape, from);
  const std::vector<double> var = expandBroadcast(variance, axes, l.inputShape, from);
  for (double v : var) {
    const float divisor = std::max(std::sqrt(float(v)), kNormalizationEpsilon);  // as Keras, in float32
    c.divisor.push_back(divisor);
    c.gradientScale.push_back(l.invert ? double(divisor) : 1.0 / double(divisor));
  }
  for (double& m : c.mean) m = double(float(m));
  c.zeros.assign(c.mean.size(), 0.0);
  return c;
}

class NormalizationLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kNormalization}; }
  std::vector<std::string> kerasClasses() const override { return {"Normalization"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"axis", "mean", "variance", "invert"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    const nlohmann::json& j = l.raw();
    spec.invert = l.boolean("invert", false);
    read(j.value("axis", nlohmann::json()), j.contains("axis"), j.value("mean", nlohmann::json()),
         j.value("variance", nlohmann::json()), spec, [&](const std::string& key, const std::string& w) { l.fail(l.key(key), w); });
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kNormalization;
    spec.invert = c.boolean("invert", false);
    c.ignore({"axis", "mean", "variance"});
    read(c.at("axis"), c.has("axis"), c.at("mean"), c.at("variance"), spec,
         [&](const std::string& key, const std::string& w) { c.fail(key, w); });
  }
  // The kept axes resolved to 1..rank (sorted), the mean and variance checked against them.
  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::int64_t ndim = std::int64_t(in[0].size()) + 1;  // Keras counts the batch
    std::vector<std::int64_t> axes;
    for (std::int64_t a : l.axes) {
      const std::int64_t resolved = a < 0 ? a + ndim : a;
      if (resolved < 1 || resolved >= ndim)
        fail("axis", std::to_string(a) + " is not an axis of the rank-" + std::to_string(ndim) + " input but the batch's (1 to " +
                         std::to_string(ndim - 1) + ", or -1 to " + std::to_string(1 - ndim) + ")");
      axes.push_back(resolved);
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    l.axes = axes;
    if (l.mean.shape.size() > l.axes.size())
      fail("mean", "shape " + shapeText(l.mean.shape) + " has more axes than the " + std::to_string(l.axes.size()) +
                       " kept (axis): Keras requires rank(mean) <= len(axis)");
    if (l.mean.given()) {
      const std::vector<std::size_t> statAxes = statisticsAxes(l);
      checkBroadcast(l.mean, statAxes, in[0], [&](const std::string& w) { fail("mean", w); });
    }
    return in[0];
  }
  Footprint footprint(const LayerSpec& l) const override {
    return {{}, 2 * columnsFrom(l.inputShape, normalizationFirstAxis(l)), "", 0};  // the mean and the divisor, one per column
  }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    if (!l.mean.given())
      g.warnings.push_back("layer '" + l.name + "' (normalization): no mean and variance given (a model file does not hold "
                           "what adapt() computed): it keeps Keras's initial mean 0 and variance 1 and passes its input "
                           "through unchanged");
    const std::size_t x = inputs[0];
    const NormalizationColumns c = normalizationColumns(l);
    const std::size_t mean = addLayerConstant(b, l, "mean", c.mean);
    const std::size_t divisor = addLayerConstant(b, l, "divisor", c.divisor);
    const std::size_t out = b.value(l.name + "/normalization", g.values[x].shape, b.compute(), ValueKind::Activation, l.name);
    if (l.invert) g.addOp({OpKind::ScaleShift, "normalization", l.name, {x, divisor, mean}, {out}});
    else g.addOp({OpKind::Normalize, "normalization", l.name, {x, mean, divisor}, {out}});
    b.record({x}, out, false, [&b, l, x, scales = c.gradientScale, zeros = c.zeros](const Backward& bw) {
      OpGraph& g = b.graph();
      const std::size_t scale = addLayerConstant(b, l, "gradient_scale", scales);
      const std::size_t noShift = addLayerConstant(b, l, "no_shift", zeros);
      const std::size_t dx = b.value(l.name + "/normalization_grad", g.values[x].shape, b.compute(), ValueKind::Gradient, l.name);
      g.addOp({OpKind::ScaleShift, "normalization_grad", l.name, {bw.grad, scale, noShift}, {dx}});
      bw.deliver(x, dx);
    });
    return out;
  }

 private:
  template <class Fail>
  static void read(const nlohmann::json& axis, bool axisGiven, const nlohmann::json& mean, const nlohmann::json& variance,
                   LayerSpec& spec, Fail fail) {
    spec.axes = keptAxesOf(axis, axisGiven, [&](const std::string& w) { fail("axis", w); });
    if (mean.is_null() != variance.is_null())
      fail(mean.is_null() ? "mean" : "variance", "Keras needs both mean and variance, or neither");
    if (mean.is_null()) return;
    spec.mean = readBroadcastConstant(mean, [&](const std::string& w) { fail("mean", w); });
    spec.variance = readBroadcastConstant(variance, [&](const std::string& w) { fail("variance", w); });
    if (spec.mean.shape != spec.variance.shape)
      fail("variance", "shape " + shapeText(spec.variance.shape) + " differs from mean's " + shapeText(spec.mean.shape));
    for (double v : spec.variance.values)
      if (!(v >= 0)) fail("variance", "has a negative value, " + nlohmann::json(v).dump());
  }
};

}  // namespace

std::unique_ptr<Layer> makeNormalizationLayer() { return std::make_unique<NormalizationLayer>(); }

}  // namespace ipusim::scheduler
