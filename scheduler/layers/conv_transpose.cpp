// conv2d_transpose, conv1d_transpose (Keras's Conv2DTranspose,
// Conv1DTranspose): the kernel [kh, kw, filters, channels] as Keras stores
// it ([k, filters, channels] for 1-D; Glorot uniform with Keras's fans: kh kw
// filters in, kh kw channels out), a bias per filter, strides, padding valid
// or same, output_padding, dilation_rate. The output length per dimension
// is Keras's (compute_conv_transpose_output_length):
//   output_padding absent: valid in s + max(K - s, 0), same in s;
//   given (< s):           (in - 1) s + K - 2 pad + output_padding, pad = K / 2 (same) or 0,
// K = (k - 1) d + 1, and the values are TF's conv_transpose: the input
// gradient of the convolution from the output back to the input (that
// convolution's padding by TF's arithmetic over the output). So the forward
// op is a Conv2DInputGrad, and the backward the forward convolution (input
// gradient) and a weight update with the roles swapped (conv_layers.hpp
// addConv2DTranspose, addConv2DTransposeGrad).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_keys.hpp"
#include "scheduler/layers/conv_layer_build.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

#include <optional>

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

// output_padding: a non-negative integer or `rank` of them ([1] of the pair for 1-D).
std::optional<std::array<std::uint32_t, 2>> outputPaddingOf(const nlohmann::json& v, int rank) {
  auto ok = [](const nlohmann::json& e) {
    return e.is_number_integer() && e.get<std::int64_t>() >= 0 && e.get<std::int64_t>() <= 0xffffffffll;
  };
  if (ok(v)) return rank == 1 ? std::array<std::uint32_t, 2>{0, v.get<std::uint32_t>()}
                              : std::array<std::uint32_t, 2>{v.get<std::uint32_t>(), v.get<std::uint32_t>()};
  if (!v.is_array() || v.size() != std::size_t(rank)) return std::nullopt;
  for (const auto& e : v)
    if (!ok(e)) return std::nullopt;
  if (rank == 1) return std::array<std::uint32_t, 2>{0, v[0].get<std::uint32_t>()};
  return std::array<std::uint32_t, 2>{v[0].get<std::uint32_t>(), v[1].get<std::uint32_t>()};
}

const char* paddingForms(int rank) {
  return rank == 1 ? "a non-negative integer or [steps]" : "a non-negative integer or [rows, columns]";
}

// Keras's output length of one dimension.
std::uint64_t transposedLength(std::uint64_t in, std::uint64_t k, std::uint64_t s, std::uint64_t d, bool same,
                               std::optional<std::uint32_t> outputPadding) {
  const std::uint64_t keff = (k - 1) * d + 1;
  if (!outputPadding) return same ? in * s : in * s + (keff > s ? keff - s : 0);
  const std::uint64_t pad = same ? keff / 2 : 0;
  const std::int64_t length = std::int64_t((in - 1) * s + keff) - std::int64_t(2 * pad) + *outputPadding;
  return length > 0 ? std::uint64_t(length) : 0;
}

class ConvTransposeLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {k::kConv2DTranspose, k::kConv1DTranspose}; }
  std::vector<std::string> kerasClasses() const override { return {"Conv2DTranspose", "Conv1DTranspose"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"filters", "kernel_size", "strides", "padding", "output_padding", "dilation_rate", "use_bias", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    const int rank = convRank(spec.kind);
    readConvWindow(l, spec, rank, false);
    if (l.has("output_padding") && !l.raw().at("output_padding").is_null()) {
      spec.outputPadding = outputPaddingOf(l.raw().at("output_padding"), rank);
      if (!spec.outputPadding)
        l.fail(l.key("output_padding"), std::string("expected ") + paddingForms(rank) + ", got " + l.raw().at("output_padding").dump());
      checkOutputPadding(spec, rank, [&](const std::string& what) { l.fail(l.key("output_padding"), what); });
    }
    spec.useBias = l.boolean("use_bias", true);
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "Conv1DTranspose" ? k::kConv1DTranspose : k::kConv2DTranspose;
    spec.units = readPositive(c, "filters", 0);
    const int rank = convRank(spec.kind);
    readConvWindow(c, spec, rank, false);
    c.ignore({"output_padding"});
    if (c.has("output_padding")) {
      spec.outputPadding = outputPaddingOf(c.at("output_padding"), rank);
      if (!spec.outputPadding)
        c.fail("output_padding", std::string("expected ") + paddingForms(rank) + ", got " + c.at("output_padding").dump());
      checkOutputPadding(spec, rank, [&](const std::string& what) { c.fail("output_padding", what); });
    }
    c.requireValue("groups", 1, "grouped transposed convolutions");  // TF 2.x Keras's Conv base key
    readKernelAndBias(c, spec);
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const int rank = convRank(spec.kind);
    const Shape image = convImage(spec, in[0], rank, fail);
    const bool same = spec.padding == "same";
    auto op = [&](int d) { return spec.outputPadding ? std::optional((*spec.outputPadding)[d]) : std::nullopt; };
    const std::uint64_t rows = rank == 1 ? 1 : transposedLength(image[0], spec.window[0], spec.strides[0], spec.dilation[0], same, op(0));
    const std::uint64_t cols = transposedLength(image[1], spec.window[1], spec.strides[1], spec.dilation[1], same, op(1));
    // TF computes it as the input gradient of the convolution over the
    // output, which must give back the input's size.
    const Window w = windowOf(spec);
    if (rows == 0 || cols == 0 || w.outH(rows) != image[0] || w.outW(cols) != image[1])
      fail(spec.outputPadding ? "output_padding" : "kernel_size",
           "an output of " + std::to_string(rows) + "x" + std::to_string(cols) + " does not convolve back to the " +
               shapeText(in[0]) + " input with padding '" + spec.padding + "' (TF's conv_transpose refuses it)");
    if (rank == 1) return {cols, spec.units};
    return {rows, cols, spec.units};
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    checkConvLimits(l, std::uint64_t(l.window[0]) * l.window[1] * l.units * l.inputShape.back(), "filters", batch, fail);
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    // The kernel [taps, filters, channels]; its gradient reads the input.
    Footprint f{{{"kernel", (long double)l.window[0] * l.window[1] * l.units * l.inputShape.back()}}, 0, "input",
                (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;
  }
  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const ConvInput x = convInput(b, l, inputs[0]);
    const std::uint64_t channels = x.image.back();
    const bool oneD = convRank(l.kind) == 1;
    const Shape kshape = oneD ? Shape{l.window[1], l.units, channels} : Shape{l.window[0], l.window[1], l.units, channels};
    const ConvKernel kernel = convKernels(b, l, {{"kernel", kshape}})[0];
    const Shape out = oneD ? Shape{1, l.outputShape[0], l.units} : l.outputShape;
    const std::size_t y = addConv2DTranspose(b.graph(), x.value, kernel.used, windowOf(l), out[0], out[1], l.name);
    recordConvOp(b, x.value, y, kernel, true);
    return convLayerOutput(b, l, y);
  }

 private:
  // Keras: output_padding must be < strides.
  template <class Fail>
  static void checkOutputPadding(const LayerSpec& spec, int rank, const Fail& fail) {
    for (int d = rank == 1 ? 1 : 0; d < 2; ++d)
      if ((*spec.outputPadding)[d] >= spec.strides[d])
        fail(std::to_string((*spec.outputPadding)[d]) + " is not less than the stride " +
             std::to_string(spec.strides[d]) + " (Keras requires output_padding < strides)");
  }
};

}  // namespace

std::unique_ptr<Layer> makeConvTransposeLayer() { return std::make_unique<ConvTransposeLayer>(); }

}  // namespace ipusim::scheduler
