// zero_padding1d/2d, cropping1d/2d (Keras's ZeroPadding1D/2D,
// Cropping1D/2D): zeros around, or elements cut from, the rows and columns
// of an image or the steps of a sequence. The ops and their gradients (each
// the other's): padding_layers.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/padding_layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

bool crops(const std::string& kind) { return kind == k::kCropping1D || kind == k::kCropping2D; }
bool twoD(const std::string& kind) { return kind == k::kZeroPadding2D || kind == k::kCropping2D; }

class PaddingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override {
    return {k::kZeroPadding1D, k::kZeroPadding2D, k::kCropping1D, k::kCropping2D};
  }
  std::vector<std::string> kerasClasses() const override {
    return {"ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D"};
  }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    return {crops(kind) ? "cropping" : "padding"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    const bool crop = crops(spec.kind), two = twoD(spec.kind);
    const char* key = crop ? "cropping" : "padding";
    // Keras's defaults: padding 1 on each side; no cropping.
    const auto pads = l.has(key) ? padsFromJson(l.raw().at(key), two)
                                 : std::optional(crop ? std::array<std::uint32_t, 4>{0, 0, 0, 0}
                                                      : std::array<std::uint32_t, 4>{two, two, 1, 1});
    if (!pads) l.fail(l.key(key), std::string("expected ") + padsForms(two) + ", got " + l.raw().at(key).dump());
    spec.pads = *pads;
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    const bool crop = cls[0] == 'C', two = cls.back() == 'D' && cls[cls.size() - 2] == '2';
    spec.kind = crop ? (two ? k::kCropping2D : k::kCropping1D) : (two ? k::kZeroPadding2D : k::kZeroPadding1D);
    const char* key = crop ? "cropping" : "padding";
    if (two) requireChannelsLast(c);
    c.ignore({key});
    c.require(key, padsForms(two));
    const auto pads = padsFromJson(c.at(key), two);
    if (!pads) c.fail(key, std::string("expected ") + padsForms(two) + ", got " + c.at(key).dump());
    spec.pads = *pads;
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const bool two = twoD(l.kind), crop = crops(l.kind);
    Shape shape = in[0];
    if (shape.size() != (two ? 3u : 2u))
      fail("", std::string("expects a ") + (two ? "rows x columns x channels" : "steps x channels") +
                   " input (channels last), got " + shapeText(shape));
    // 2d: rows then columns; 1d: the steps (pads[2], pads[3]).
    for (std::size_t d = two ? 0 : 1; d < 2; ++d) {
      const std::uint64_t extra = std::uint64_t(l.pads[2 * d]) + l.pads[2 * d + 1];
      std::uint64_t& size = shape[two ? d : 0];
      if (crop && extra >= size)
        fail(crop ? "cropping" : "padding", "cuts " + std::to_string(extra) + " of the " + std::to_string(size) + " " +
                                                (two && d == 0 ? "rows" : two ? "columns" : "steps") + " of its " +
                                                shapeText(in[0]) + " input");
      size = crop ? size - extra : size + extra;
    }
    return shape;
  }

  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    const std::size_t out = addPaddingOrCropping(b.graph(), l, x, b.batch());
    const std::size_t op = b.graph().ops.size() - 1;
    b.record({x}, out, false, [&b, x, op](const Backward& bw) { bw.deliver(x, addPaddingOrCroppingGrad(b.graph(), op, bw.grad)); });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makePaddingLayer() { return std::make_unique<PaddingLayer>(); }

}  // namespace ipusim::scheduler
