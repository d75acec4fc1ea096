// max_pooling2d, average_pooling2d (Keras's MaxPooling2D, AveragePooling2D:
// strides default to the pool size; padded positions ignored by the max, not
// counted by the average, as TF) and global_average_pooling2d,
// global_max_pooling2d (one window over all rows and columns; [channels], or
// [1, 1, channels] with keepdims). The ops and gradients: conv_layers.hpp
// (MaxPool2D, AvgPool2D and their gradients), lowered by
// lowering/pool_lowering.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

bool isGlobal(const std::string& kind) { return kind == k::kGlobalAveragePooling2D || kind == k::kGlobalMaxPooling2D; }

class PoolingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override {
    return {k::kMaxPooling2D, k::kAveragePooling2D, k::kGlobalAveragePooling2D, k::kGlobalMaxPooling2D};
  }
  std::vector<std::string> kerasClasses() const override {
    return {"MaxPooling2D", "AveragePooling2D", "GlobalAveragePooling2D", "GlobalMaxPooling2D"};
  }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    if (isGlobal(kind)) return {"keepdims"};
    return {"pool_size", "strides", "padding"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (isGlobal(spec.kind)) spec.keepDims = l.boolean("keepdims", false);
    else readWindow(l, spec, "pool_size", true);  // strides default to pool_size, as Keras's
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    if (cls == "GlobalAveragePooling2D" || cls == "GlobalMaxPooling2D") {
      spec.kind = cls == "GlobalAveragePooling2D" ? k::kGlobalAveragePooling2D : k::kGlobalMaxPooling2D;
      requireChannelsLast(c);
      spec.keepDims = c.boolean("keepdims", false);
    } else {
      spec.kind = cls == "MaxPooling2D" ? k::kMaxPooling2D : k::kAveragePooling2D;
      readWindow(c, spec, "pool_size", true);
    }
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const Shape& shape = in[0];
    if (!isGlobal(spec.kind)) return windowedShape(spec, shape, "pool_size", shape.empty() ? 0 : shape.back(), fail);
    if (shape.size() != 3) fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(shape));
    return spec.keepDims ? Shape{1, 1, shape[2]} : Shape{shape[2]};
  }

  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    const bool max = l.kind == k::kMaxPooling2D || l.kind == k::kGlobalMaxPooling2D;
    // Global pooling: windowOf gives one window of all rows and columns.
    const std::size_t out = max ? addMaxPool2D(b.graph(), x, windowOf(l), l.name) : addAvgPool2D(b.graph(), x, windowOf(l), l.name);
    const std::size_t poolOp = b.graph().ops.size() - 1;
    b.record({x}, out, false, [&b, x, poolOp](const Backward& bw) { bw.deliver(x, addPool2DGrad(b.graph(), poolOp, bw.grad)); });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makePoolingLayer() { return std::make_unique<PoolingLayer>(); }

}  // namespace ipusim::scheduler
