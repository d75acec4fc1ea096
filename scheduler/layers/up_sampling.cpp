// up_sampling1d, up_sampling2d (Keras's UpSampling1D, UpSampling2D): each
// step repeated `size` times (1-D: a steps x channels input), or each row
// size[0] and each column size[1] times (2-D: rows x columns x channels,
// data_format channels_last), Keras's ops.repeat along each axis, which is
// interpolation "nearest". The sizes are kept in LayerSpec::window (rows,
// columns; 1-D: [1, size]). Forward: one CopyView op (the input broadcast
// along the copies, view_ops.hpp), lowered to one Copy as Poplar copies a
// broadcast view; backward: the sum of each element's copies (the gradient
// rearranged by one CopyView to [copies, elements], then a ReduceRows).
// Keras's other interpolations (bilinear, bicubic, lanczos3/5, area) are
// refused: each output would be a weighted sum of several inputs.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/view_ops.hpp"
#include "scheduler/models/workload_limits.hpp"

namespace ipusim::scheduler {
namespace {

constexpr const char* kUpSampling1D = "up_sampling1d";
constexpr const char* kUpSampling2D = "up_sampling2d";

bool upSampling2D(const std::string& kind) { return kind == kUpSampling2D; }

void checkInterpolation(const std::string& value, const std::function<void(const std::string&)>& fail) {
  if (value != "nearest")
    fail("'" + value + "' is not modelled (only 'nearest': each output element a copy of one input element)");
}

class UpSamplingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {kUpSampling1D, kUpSampling2D}; }
  std::vector<std::string> kerasClasses() const override { return {"UpSampling1D", "UpSampling2D"}; }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    if (upSampling2D(kind)) return {"size", "interpolation"};
    return {"size"};
  }

  // Keras's defaults: size 2 (1-D), (2, 2) (2-D).
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!upSampling2D(spec.kind)) {
      spec.window = {1, l.single("size", 2)};
      return;
    }
    spec.window = l.pair("size", {2, 2});
    checkInterpolation(l.string("interpolation", "nearest"),
                       [&](const std::string& what) { l.fail(l.key("interpolation"), what); });
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "UpSampling2D" ? kUpSampling2D : kUpSampling1D;
    if (!upSampling2D(spec.kind)) {
      spec.window = {1, c.single("size", 2)};
      return;
    }
    spec.window = c.pair("size", {2, 2});
    requireChannelsLast(c);
    checkInterpolation(c.string("interpolation", "nearest"), [&](const std::string& what) { c.fail("interpolation", what); });
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const bool two = upSampling2D(l.kind);
    if (in[0].size() != (two ? 3u : 2u))
      fail("", std::string("expects a ") + (two ? "rows x columns x channels" : "steps x channels") +
                   " input (channels last), got " + shapeText(in[0]));
    Shape out = in[0];
    WideCount elements = 1;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const WideCount size = WideCount(out[d]) * (d + 1 == out.size() ? 1 : l.window[two ? d : 1]);
      elements *= size;
      if (size > 0xffffffffu || elements * 4 > kMaxTensorBytes)
        fail("size", "repeats the " + shapeText(in[0]) + " input into more than one tensor may hold per example; " +
                         tensorLimitText());
      out[d] = std::uint64_t(size);
    }
    return out;
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    const WideCount bytes = WideCount(batch) * elementsOf(l.outputShape) * 4;
    if (bytes > kMaxTensorBytes)
      fail("size", "needs " + wideText(bytes) + " bytes of float activations (batch " + std::to_string(batch) + "); " +
                       tensorLimitText());
  }

  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    if (l.outputShape == l.inputShape) return inputs[0];  // size 1: the input itself
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    const Shape shape = b.graph().values[x].shape;
    const std::vector<std::uint64_t> repeats = upSampling2D(l.kind) ? std::vector<std::uint64_t>{1, l.window[0], l.window[1], 1}
                                                                    : std::vector<std::uint64_t>{1, l.window[1], 1};
    const std::size_t out = addRepeat(b.graph(), x, shape, repeats, l.name, "up_sampling");
    const std::size_t op = b.graph().ops.size() - 1;
    b.record({x}, out, false, [&b, x, op](const Backward& bw) { bw.deliver(x, addRepeatGrad(b.graph(), op, bw.grad)); });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makeUpSamplingLayer() { return std::make_unique<UpSamplingLayer>(); }

}  // namespace ipusim::scheduler
