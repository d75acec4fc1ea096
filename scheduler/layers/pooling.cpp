// max_pooling2d, average_pooling2d (Keras's MaxPooling2D, AveragePooling2D:
// strides default to the pool size; padded positions ignored by the max, not
// counted by the average, as TF), their 1-D forms max_pooling1d,
// average_pooling1d over the steps of a steps x channels input (the 2-D
// pooling of one row), and global_average_pooling1d/2d,
// global_max_pooling1d/2d (one window over every step, or all rows and
// columns; [channels], or with keepdims [1, channels] / [1, 1, channels]).
// The ops and gradients: conv_layers.hpp (MaxPool2D, AvgPool2D and their
// gradients), lowered by lowering/pool_lowering.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

bool isGlobal(const std::string& kind) {
  return kind == k::kGlobalAveragePooling2D || kind == k::kGlobalMaxPooling2D || kind == k::kGlobalAveragePooling1D ||
         kind == k::kGlobalMaxPooling1D;
}
bool isOneDimensional(const std::string& kind) {
  return kind == k::kMaxPooling1D || kind == k::kAveragePooling1D || kind == k::kGlobalAveragePooling1D ||
         kind == k::kGlobalMaxPooling1D;
}
bool isMax(const std::string& kind) {
  return kind == k::kMaxPooling2D || kind == k::kGlobalMaxPooling2D || kind == k::kMaxPooling1D || kind == k::kGlobalMaxPooling1D;
}

// Keras's class <-> ipusim's kind.
const std::vector<std::pair<std::string, std::string>>& classes() {
  static const std::vector<std::pair<std::string, std::string>> c{
      {"MaxPooling2D", k::kMaxPooling2D},
      {"AveragePooling2D", k::kAveragePooling2D},
      {"GlobalAveragePooling2D", k::kGlobalAveragePooling2D},
      {"GlobalMaxPooling2D", k::kGlobalMaxPooling2D},
      {"MaxPooling1D", k::kMaxPooling1D},
      {"AveragePooling1D", k::kAveragePooling1D},
      {"GlobalAveragePooling1D", k::kGlobalAveragePooling1D},
      {"GlobalMaxPooling1D", k::kGlobalMaxPooling1D}};
  return c;
}

class PoolingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override {
    std::vector<std::string> out;
    for (const auto& [cls, kind] : classes()) out.push_back(kind);
    return out;
  }
  std::vector<std::string> kerasClasses() const override {
    std::vector<std::string> out;
    for (const auto& [cls, kind] : classes()) out.push_back(cls);
    return out;
  }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    if (isGlobal(kind)) return {"keepdims"};
    return {"pool_size", "strides", "padding"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (isGlobal(spec.kind)) spec.keepDims = l.boolean("keepdims", false);
    else if (isOneDimensional(spec.kind)) readWindow1D(l, spec, "pool_size", true);
    else readWindow(l, spec, "pool_size", true);  // strides default to pool_size, as Keras's
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    for (const auto& [name, kind] : classes())
      if (name == cls) spec.kind = kind;
    if (isGlobal(spec.kind)) {
      requireChannelsLast(c);
      spec.keepDims = c.boolean("keepdims", false);
    } else if (isOneDimensional(spec.kind)) {
      readWindow1D(c, spec, "pool_size", true);
    } else {
      readWindow(c, spec, "pool_size", true);
    }
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const Shape& shape = in[0];
    const std::uint64_t channels = shape.empty() ? 0 : shape.back();
    if (!isGlobal(spec.kind))
      return isOneDimensional(spec.kind) ? windowedShape1D(spec, shape, "pool_size", channels, fail)
                                         : windowedShape(spec, shape, "pool_size", channels, fail);
    if (isOneDimensional(spec.kind)) {
      if (shape.size() != 2) fail("", "expects a steps x channels input (channels last), got " + shapeText(shape));
      return spec.keepDims ? Shape{1, channels} : Shape{channels};
    }
    if (shape.size() != 3) fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(shape));
    return spec.keepDims ? Shape{1, 1, channels} : Shape{channels};
  }

  bool readsShapedInput(const LayerSpec&) const override { return true; }
  // A max pooling's gradient finds the maxima in its input.
  Footprint footprint(const LayerSpec& l) const override {
    return isMax(l.kind) ? Footprint{{}, 0, "input", (long double)elementsOf(l.inputShape)} : Footprint{};
  }

  // Keras's GlobalAveragePooling1D takes a mask (a masked mean; its output has none).
  MaskUse maskUse(const LayerSpec& l) const override {
    return l.kind == k::kGlobalAveragePooling1D ? MaskUse::Consumes : MaskUse::Refuses;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    // A 1-D pooling is the 2-D pooling of one row of steps.
    Shape image = l.inputShape;
    if (isOneDimensional(l.kind)) image.insert(image.begin(), 1);
    std::size_t x = b.shaped(inputs[0], image, l.name, "reshape_input");
    // Keras's GlobalAveragePooling1D under a mask (mask_zero): sum_t x m / sum_t m,
    // here the mean over the steps of x weighted by m x steps / sum_t m (IdMask
    // index 2), the weights' product differentiated as any (CellOps::multiply).
    if (b.maskOf(inputs[0]) != ~std::size_t(0)) {
      OpGraph& g = b.graph();
      if (g.values[b.maskOf(inputs[0])].numElements() != b.batch() * l.inputShape[0])
        throw std::invalid_argument("layer '" + l.name + "': the mask of its input has " +
                                    std::to_string(g.values[b.maskOf(inputs[0])].numElements() / b.batch()) +
                                    " steps per example, the input " + std::to_string(l.inputShape[0]) +
                                    ": the shapes do not fit");
      const std::size_t ids = b.reshape(b.maskOf(inputs[0]), {b.batch(), l.inputShape[0]}, l.name, "mask_ids");
      const std::size_t weights = b.value(l.name + "/mask_weights", g.values[x].shape, b.compute(), ValueKind::Activation, l.name);
      Op op{OpKind::IdMask, "mask_weights", l.name, {ids}, {weights}};
      op.index = 2;
      g.addOp(op);
      x = CellOps(b, l.name).multiply(x, weights, "masked");
    }
    // Global pooling: windowOf gives one window of every row and column (step).
    const std::size_t out = isMax(l.kind) ? addMaxPool2D(b.graph(), x, windowOf(l), l.name) : addAvgPool2D(b.graph(), x, windowOf(l), l.name);
    const std::size_t poolOp = b.graph().ops.size() - 1;
    b.record({x}, out, false, [&b, x, poolOp](const Backward& bw) { bw.deliver(x, addPool2DGrad(b.graph(), poolOp, bw.grad)); });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makePoolingLayer() { return std::make_unique<PoolingLayer>(); }

}  // namespace ipusim::scheduler
