// layer_normalization (Keras's LayerNormalization, Ba et al. 2016): each
// example's values over the normalized axes (`axis`: the trailing axes, -1
// by default) whitened by their own mean and variance, then scaled by gamma
// and shifted by beta, one of each per position of those axes (Keras's
// build: shape = input_shape[axis]). As keras/src/layers/normalization/
// layer_normalization.py computes it: mean and variance by ops.moments
// (biased), rsqrt(variance + epsilon), out = x * inv + (beta - mean * inv),
// inv = rsqrt(...) * gamma, which is (x - mean) * rsqrt(...) * gamma + beta.
//
// Decomposed as popnn decomposes its layer norm (graphcore/poplibs
// lib/popnn/LayerNorm.cpp: a group norm of one group over the row;
// row_norm.hpp): the input as rows of the n values normalized together,
//   forward   LayerNormalise: per row, the mean and invStdDev = 1 /
//             sqrt(variance + epsilon) (float), whitened = (x - mean)
//             invStdDev; then out = whitened gamma + beta (a ScaleShift
//             reading gamma and beta per column);
//   backward  betaDelta = sum_rows(dy), gammaDelta = sum_rows(dy whitened)
//             (ReduceRows, Mul); dWhitened = dy gamma (a ScaleShift);
//             LayerNormInputGrad: dx = invStdDev (dWhitened - mean(dWhitened)
//             - whitened mean(dWhitened whitened)) per row.
// gamma and beta are weights when `scale` / `center` (ones and zeros, or the
// file's initializers), else absent. Under mixed_float16 Keras computes the
// whole layer in float32 (its variables' type); here the statistics are float
// and the whitened values and output half, as the rest of the model.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/row_norm.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

// Keras's axis: an integer or a list of them (counted with the batch: 1 the
// first axis after it, -1 the last).
template <class Fail>
std::vector<std::int64_t> normalizedAxesOf(const nlohmann::json& v, Fail fail) {
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  std::vector<std::int64_t> axes;
  for (const auto& a : list) {
    if (!a.is_number_integer()) fail("expected an integer or a list of integers (Keras's count: 1 the first axis after the batch, -1 the last), got " + v.dump());
    axes.push_back(a.get<std::int64_t>());
  }
  if (axes.empty()) fail("expected at least one axis, got []");
  return axes;
}

// The number of values normalized together (the trailing axes' product).
std::uint64_t normalizedSize(const LayerSpec& l) {
  std::uint64_t n = 1;
  for (std::int64_t a : l.axes) n *= l.inputShape[std::size_t(a - 1)];
  return n;
}

class LayerNormalizationLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kLayerNormalization}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Carries; }  // Keras: supports_masking
  std::vector<std::string> kerasClasses() const override { return {"LayerNormalization"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"axis", "epsilon", "center", "scale"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.axes = l.has("axis") ? normalizedAxesOf(l.raw().at("axis"), [&](const std::string& w) { l.fail(l.key("axis"), w); })
                              : std::vector<std::int64_t>{-1};
    readNormalizationKeys(l, spec);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kLayerNormalization;
    c.ignore({"axis"});
    // None: Keras's LayerNormalization raises a TypeError (an int or a list of ints).
    if (c.isNull("axis")) c.refuseNull("axis", "an integer or a list of integers, -1 the last axis");
    spec.axes = c.has("axis") ? normalizedAxesOf(c.at("axis"), [&](const std::string& w) { c.fail("axis", w); })
                              : std::vector<std::int64_t>{-1};
    readNormalizationKeys(c, spec);
    c.requireValue("rms_scaling", false, "RMS scaling (a variance without the mean's subtraction)");
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    // The axes resolved to 1..rank-1 (with the batch), sorted; they must be
    // the trailing ones, so that each example's rows of n are contiguous.
    const std::int64_t rank = std::int64_t(in[0].size()) + 1;
    std::vector<std::int64_t> axes;
    for (std::int64_t a : l.axes) {
      const std::int64_t resolved = a < 0 ? a + rank : a;
      if (resolved < 1 || resolved >= rank)
        fail("axis", std::to_string(a) + " is not an axis of the rank-" + std::to_string(rank) + " input but the batch's (1 to " +
                         std::to_string(rank - 1) + ", or -1 to " + std::to_string(1 - rank) + ")");
      axes.push_back(resolved);
    }
    std::sort(axes.begin(), axes.end());
    // [-1, -1] or [2, -1] (rank 3): one axis twice, as tf.keras refuses it
    // ("Duplicate axis"); it was read as [-1].
    if (const auto twice = std::adjacent_find(axes.begin(), axes.end()); twice != axes.end())
      fail("axis", nlohmann::json(l.axes).dump() + " names the axis " + std::to_string(*twice) +
                       " twice (expected each axis once; Keras: Duplicate axis)");
    for (std::size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != rank - std::int64_t(axes.size()) + std::int64_t(i))
        fail("axis", "normalizing over axes that are not the last ones is not modelled (the axes of a rank-" +
                         std::to_string(rank) + " input from " + std::to_string(rank - std::int64_t(axes.size())) + " to " +
                         std::to_string(rank - 1) + " are)");
    l.axes = axes;
    return in[0];
  }

  bool hasWeights(const LayerSpec& l) const override { return l.center || l.scale; }
  Footprint footprint(const LayerSpec& l) const override {
    // gamma and beta; the input gradient reads the whitened input (and a
    // float invStdDev per row, counted with it).
    const long double n = normalizedSize(l), elements = elementsOf(l.inputShape);
    Footprint f{{}, 0, "whitened", elements + elements / n};
    if (l.scale) f.weights.push_back({"gamma", n});
    if (l.center) f.weights.push_back({"beta", n});
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::uint64_t n = normalizedSize(l);
    const std::uint64_t rows = b.batch() * elementsOf(l.inputShape) / n;
    const std::size_t x = b.reshape(inputs[0], {rows, n}, l.name, "rows");
    const RowNormalized f = addRowNormalise(b, x, l.epsilon, l.name);
    const ColumnAffine affine = addColumnAffine(b, l, f.whitened);
    b.record({x}, affine.output, hasWeights(l) && l.trainable, [&b, l, x, f, affine](const Backward& bw) {
      const std::size_t whitenedGrad = addColumnAffineGrad(b, bw, l, affine, f.whitened, bw.grad, bw.wants(x));
      if (bw.wants(x)) bw.deliver(x, addRowNormaliseGrad(b, f, whitenedGrad, l.name));
    });
    return b.shaped(affine.output, l.outputShape, l.name, "unrows");
  }
};

}  // namespace

std::unique_ptr<Layer> makeLayerNormalizationLayer() { return std::make_unique<LayerNormalizationLayer>(); }

}  // namespace ipusim::scheduler
