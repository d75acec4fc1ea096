// gaussian_noise and gaussian_dropout (Keras's GaussianNoise and
// GaussianDropout, in training; keras/src/layers/regularization/):
//   gaussian_noise:   out = in + N(0, stddev)            (gradient: passed through)
//   gaussian_dropout: out = in * N(1, sqrt(rate / (1 - rate)))  (gradient: times the same noise)
// The noise drawn on the device per element from (seed, step, element)
// (model/numeric/gaussian_noise.hpp), new each step, as dropout's mask is;
// the seed the layer's, else the workload's mixed with the layer's position.
// A stddev or rate of 0 builds nothing (Keras adds no noise then).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <cmath>

namespace ipusim::scheduler {
namespace {

bool multiplicative(const LayerSpec& l) { return l.kind == layer_kind::kGaussianDropout; }

// The noise's standard deviation: GaussianNoise's stddev, or GaussianDropout's from its rate.
double noiseStddev(const LayerSpec& l) { return multiplicative(l) ? std::sqrt(l.rate / (1.0 - l.rate)) : l.rate; }

class GaussianNoiseLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kGaussianNoise, layer_kind::kGaussianDropout}; }
  std::vector<std::string> kerasClasses() const override { return {"GaussianNoise", "GaussianDropout"}; }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    return {kind == layer_kind::kGaussianNoise ? "stddev" : "rate", "seed"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    const bool noise = spec.kind == layer_kind::kGaussianNoise;
    const char* key = noise ? "stddev" : "rate";
    if (!l.has(key)) l.fail(l.key(key), noise ? "missing (expected a number >= 0)" : "missing (expected a number in [0, 1))");
    spec.rate = noise ? l.number(key, 0) : l.numberIn(key, 0, 0, 1, true);
    if (noise && !(spec.rate >= 0 && std::isfinite(spec.rate))) l.fail(l.key(key), "expected a finite number >= 0");
    spec.seeded = l.has("seed");
    spec.seed = l.count("seed", 0, false);
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    const bool noise = cls == "GaussianNoise";
    spec.kind = noise ? layer_kind::kGaussianNoise : layer_kind::kGaussianDropout;
    const char* key = noise ? "stddev" : "rate";
    if (!c.has(key)) c.fail(key, "missing (Keras requires it)");
    spec.rate = c.number(key, 0);
    if (noise && !(spec.rate >= 0 && std::isfinite(spec.rate))) c.fail(key, "expected a finite number >= 0, got " + c.at(key).dump());
    if (!noise && !(spec.rate >= 0 && spec.rate < 1)) c.fail(key, "expected a number in [0, 1), got " + c.at(key).dump());
    spec.seeded = c.has("seed");
    const std::int64_t seed = c.integer("seed", 0);
    if (seed < 0) c.fail("seed", "expected a non-negative integer, got " + c.at("seed").dump());
    spec.seed = std::uint64_t(seed);
  }

  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t index, const std::vector<std::size_t>& inputs) const override {
    const std::size_t x = inputs[0];
    if (l.rate == 0 || !b.training()) return x;  // Keras adds noise only with training=True
    OpGraph& g = b.graph();
    const std::string codelet = multiplicative(l) ? "GaussianNoiseScale" : "GaussianNoise";
    const std::size_t out = b.value(l.name + "/" + l.kind, g.values[x].shape, b.compute(), ValueKind::Activation, l.name);
    Op op{OpKind::GaussianNoise, l.kind, l.name, {x, b.stepCounter()}, {out}};
    op.rate = noiseStddev(l);
    op.seed = dropoutSeed(b.workload(), index);
    op.codelet = codelet;
    g.addOp(op);
    b.record({x}, out, false, [&b, x, op](const Backward& bw) {
      if (op.codelet == "GaussianNoise") return bw.deliver(x, bw.grad);  // an added constant: the gradient passes
      OpGraph& g = b.graph();
      const std::size_t dx = b.value(op.layer + "/" + op.name + "_grad", g.values[x].shape, b.compute(), ValueKind::Gradient, op.layer);
      Op grad = op;
      grad.name += "_grad";
      grad.inputs = {bw.grad, b.stepCounter()};
      grad.outputs = {dx};
      g.addOp(grad);
      bw.deliver(x, dx);
    });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makeGaussianNoiseLayer() { return std::make_unique<GaussianNoiseLayer>(); }

}  // namespace ipusim::scheduler
