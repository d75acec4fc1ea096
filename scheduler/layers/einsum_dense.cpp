// einsum_dense (Keras's EinsumDense): out = activation(einsum(equation, in,
// kernel) + bias). The equations ipusim computes (layers/einsum_equation.hpp)
// are one matrix product: the input reshaped to [batch x free axes,
// contracted axes] rows, the kernel stored row-major in Keras's shape (which
// is [contracted, new] flattened), the result reshaped to the output's
// shape: the same ops as a Dense (layers/dense_product.hpp). The kernel's
// Glorot fans are Keras's compute_fans of its stored shape (a rank-3 kernel's
// first axis is its "receptive field"); the bias, over every new axis, is
// stored in Keras's shape. Keras's EinsumDense does not support masking
// (the default: refused).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/dense_product.hpp"
#include "scheduler/layers/einsum_equation.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"

#include <functional>

namespace ipusim::scheduler {
namespace {

// output_shape: a size, or a list of sizes and nulls (None: from the input).
std::vector<std::int64_t> einsumOutputSizes(const nlohmann::json& v,
                                            const std::function<void(const std::string&)>& fail) {
  const std::string expected = "expected a positive integer or a list of positive integers and nulls, got ";
  // A size, checked before it is read as a signed integer (2^63 and above would wrap).
  auto size = [&](const nlohmann::json& e) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<std::uint64_t>() > 0x7fffffffffffffffull) ||
        e.get<std::int64_t>() <= 0)
      fail(expected + v.dump());
    return e.get<std::int64_t>();
  };
  if (!v.is_array()) return {size(v)};
  std::vector<std::int64_t> sizes;
  for (const auto& e : v) sizes.push_back(e.is_null() ? -1 : size(e));
  return sizes;
}

EinsumDensePlan planOf(const LayerSpec& l, const Shape& input, const LayerFail& fail) {
  return planEinsumDense(l.equation, l.useBias, l.biasAxes, input, l.einsumOutputShape, fail);
}

[[noreturn]] void afterShapeInference(const std::string& key, const std::string& what) {
  throw std::logic_error("einsum_dense: shape inference let through " + key + ": " + what);
}

class EinsumDenseLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kEinsumDense}; }
  std::vector<std::string> kerasClasses() const override { return {"EinsumDense"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"equation", "output_shape", "bias_axes", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("equation")) l.fail(l.key("equation"), "missing (expected an einsum equation such as \"abc,cd->abd\")");
    spec.equation = l.string("equation", "");
    if (!l.has("output_shape")) l.fail(l.key("output_shape"), "missing (expected the output's sizes without the batch)");
    spec.einsumOutputShape = einsumOutputSizes(l.raw().at("output_shape"), [&](const std::string& what) {
      l.fail(l.key("output_shape"), what);
    });
    spec.useBias = l.has("bias_axes") && !l.raw().at("bias_axes").is_null();
    if (spec.useBias) spec.biasAxes = l.string("bias_axes", "");
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kEinsumDense;
    c.require("equation", "an einsum equation");
    spec.equation = c.string("equation", "");
    c.require("output_shape", "the output's sizes without the batch");
    spec.einsumOutputShape = einsumOutputSizes(c.at("output_shape"), [&](const std::string& what) {
      c.fail("output_shape", what);
    });
    c.ignore({"output_shape"});  // read above
    spec.useBias = c.has("bias_axes");
    if (spec.useBias) spec.biasAxes = c.string("bias_axes", "");
    else c.ignore({"bias_axes"});  // None: no bias
    readActivation(c, spec);
    readKernelAndBiasWeights(c);
    c.requireNull("gptq_unpacked_column_size", "GPTQ-quantized weights");
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    return planOf(spec, in[0], fail).outputShape;
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    constexpr std::uint64_t kFloat = 4;
    const EinsumDensePlan p = planOf(l, l.inputShape, afterShapeInference);
    const WideCount weights = WideCount(p.contracted) * p.produced * kFloat;
    if (weights > kMaxTensorBytes)
      fail("output_shape", "a kernel of " + shapeText(p.kernelShape) + " needs " + wideText(weights) +
                               " bytes of float weights; " + tensorLimitText());
    const WideCount activations = WideCount(batch) * p.rows * p.produced * kFloat;
    if (activations > kMaxTensorBytes)
      fail("output_shape", shapeText(p.outputShape) + " needs " + wideText(activations) +
                               " bytes of float activations (batch " + std::to_string(batch) + "); " + tensorLimitText());
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const EinsumDensePlan p = planOf(l, l.inputShape, afterShapeInference);
    Footprint f{{{"kernel", (long double)p.contracted * p.produced}}, 0, "input", (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", (long double)p.produced});
    return f;  // the kernel gradient reads the input
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const EinsumDensePlan p = planOf(l, l.inputShape, afterShapeInference);
    const std::uint64_t rows = b.batch() * p.rows;
    const std::size_t x = b.reshape(inputs[0], {rows, p.contracted}, l.name, "rows");
    const std::size_t y = addDenseProduct(b, l, x, {rows, p.contracted, p.produced, p.fanIn, p.fanOut, p.kernelShape, p.biasShape});
    return b.activation(l, l.activation, b.shaped(y, l.outputShape, l.name, "unrows"));
  }
};

}  // namespace

std::unique_ptr<Layer> makeEinsumDenseLayer() { return std::make_unique<EinsumDenseLayer>(); }

}  // namespace ipusim::scheduler
