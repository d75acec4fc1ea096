// flatten, reshape (Keras's Flatten, Reshape): row-major, the same elements:
// no op. A layer that needs the new shape reads the same tensor in it
// (TrainingGraphBuilder::shaped: a Reshape op, no program).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

class ReshapeLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {k::kFlatten, k::kReshape}; }
  std::vector<std::string> kerasClasses() const override { return {"Flatten", "Reshape"}; }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    if (kind == k::kReshape) return {"target_shape"};
    return {};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (spec.kind == k::kReshape) spec.targetShape = l.integers("target_shape");
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    if (cls == "Flatten") {
      spec.kind = k::kFlatten;
      requireChannelsLast(c);
      return;
    }
    spec.kind = k::kReshape;
    spec.targetShape = readIntegers(c, "target_shape");
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const Shape& shape = in[0];
    if (l.kind == k::kFlatten) return {elementsOf(shape)};
    std::int64_t unknownAt = -1;
    std::uint64_t known = 1;
    Shape out;
    for (std::size_t d = 0; d < l.targetShape.size(); ++d) {
      const std::int64_t v = l.targetShape[d];
      if (v == -1 && unknownAt < 0) {
        unknownAt = std::int64_t(d);
        out.push_back(0);
      } else if (v <= 0) {
        fail("target_shape", "expected positive sizes and at most one -1, got " + std::to_string(v) + " at " + std::to_string(d));
      } else {
        out.push_back(std::uint64_t(v));
        known *= std::uint64_t(v);
      }
    }
    const std::uint64_t n = elementsOf(shape);
    if (unknownAt >= 0) {
      if (n % known)
        fail("target_shape", "cannot reshape " + shapeText(shape) + " (" + std::to_string(n) +
                                 " elements) with a -1 beside sizes whose product is " + std::to_string(known));
      out[std::size_t(unknownAt)] = n / known;
    } else if (known != n) {
      fail("target_shape", "cannot reshape " + shapeText(shape) + " (" + std::to_string(n) + " elements) to " +
                               shapeText(out) + " (" + std::to_string(known) + " elements)");
    }
    return out;
  }

  std::size_t build(TrainingGraphBuilder&, const LayerSpec&, std::size_t, const std::vector<std::size_t>& inputs) const override {
    return inputs[0];
  }
};

}  // namespace

std::unique_ptr<Layer> makeReshapeLayer() { return std::make_unique<ReshapeLayer>(); }

}  // namespace ipusim::scheduler
