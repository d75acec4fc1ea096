// Keras's TimeDistributed wrapper, of a Dense: the Dense applied to every
// step of a [steps, features] input, which is what ipusim's dense already
// computes on an input of rank > 1 (on its last axis, as Keras's Dense). So
// the wrapper reads as the Dense it wraps (its keys, weights and
// initializers; Keras 1 spellings too), under the wrapper's name. Another
// wrapped layer is refused by name (not modelled yet).
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras1_spellings.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/keras_layer.hpp"

#include <stdexcept>

namespace ipusim::scheduler {
namespace {

class TimeDistributedLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {}; }  // it reads as the dense it wraps
  std::vector<std::string> kerasClasses() const override { return {"TimeDistributed"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {}; }
  void readWorkload(const WorkloadReader&, LayerSpec&) const override { unused(); }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    c.require("layer", "the wrapped layer ({\"class_name\", \"config\"})");
    const nlohmann::json& wrapped = c.at("layer");
    c.ignore({"layer"});  // read below, as the Dense
    const std::string cls = kerasClassName(wrapped);
    if (cls != "Dense")
      c.fail("layer", "TimeDistributed(" + (cls.empty() ? wrapped.dump().substr(0, 80) : cls) +
                          ") is not modelled (TimeDistributed(Dense) is: Dense already works on the last axis)");
    if (!wrapped.contains("config") || !wrapped.at("config").is_object()) c.fail("layer", "config: missing (the Dense's config)");
    const std::string where = c.where() + ": layer (Dense)";
    std::optional<Keras2Spelling> keras2;
    if (c.format() == "tf2") keras2 = keras2Spelling(cls, wrapped.at("config"), c.file(), where);
    KerasConfig inner(keras2 ? keras2->config : wrapped.at("config"), c.file(), where);
    if (keras2) inner.setFileKeys(keras2->fileKeys);
    inner.setFormat(c.format());
    spec = readKerasLayer(inner, "Dense").spec;
  }

  Shape outputShape(LayerSpec&, const std::vector<Shape>&, const LayerFail&) const override { unused(); }
  std::size_t build(TrainingGraphBuilder&, const LayerSpec&, std::size_t, const std::vector<std::size_t>&) const override {
    unused();
  }

 private:
  [[noreturn]] static void unused() {
    throw std::logic_error("TimeDistributed reads as the Dense it wraps: it has no kind of its own");
  }
};

}  // namespace

std::unique_ptr<Layer> makeTimeDistributedLayer() { return std::make_unique<TimeDistributedLayer>(); }

}  // namespace ipusim::scheduler
