// dropout (Keras's Dropout, in training): out = in * mask / (1 - rate), the
// mask drawn on the device from (seed, step, element) (model/numeric/
// dropout_mask.hpp), new each step, the same in the backward pass; the seed
// is the layer's, else the workload's mixed with the layer's position
// (dropoutSeed). A rate of 0 builds nothing.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

class DropoutLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kDropout}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Carries; }  // Keras: supports_masking
  std::vector<std::string> kerasClasses() const override { return {"Dropout"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"rate", "seed"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("rate")) l.fail(l.key("rate"), "missing (expected a number in [0, 1))");
    spec.rate = l.numberIn("rate", 0, 0, 1, true);
    spec.seeded = l.has("seed");
    spec.seed = l.count("seed", 0, false);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kDropout;
    spec.rate = c.number("rate", 0);
    if (!(spec.rate >= 0 && spec.rate < 1)) c.fail("rate", "expected a number in [0, 1), got " + nlohmann::json(spec.rate).dump());
    // seed None: a mask Keras draws from no fixed seed (ipusim: the workload's).
    spec.seeded = c.has("seed");
    c.ignore({"seed"});
    const std::int64_t seed = spec.seeded ? c.integer("seed", 0) : 0;
    if (seed < 0) c.fail("seed", "expected a non-negative integer, got " + c.at("seed").dump());
    spec.seed = std::uint64_t(seed);
    c.requireNull("noise_shape", "a mask shared over dimensions");
  }

  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t index, const std::vector<std::size_t>& inputs) const override {
    const std::size_t x = inputs[0];
    if (l.rate == 0) return x;
    return CellOps(b, l.name).dropout(x, l.rate, dropoutSeed(b.workload(), index), "dropout");
  }
};

}  // namespace

std::unique_ptr<Layer> makeDropoutLayer() { return std::make_unique<DropoutLayer>(); }

}  // namespace ipusim::scheduler
