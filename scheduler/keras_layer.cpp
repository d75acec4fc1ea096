#include "scheduler/keras_layer.hpp"

#include "scheduler/padding_layers.hpp"

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

// Keys every Keras layer may carry that do not change the training step:
// its name, whether it trains (ipusim trains every layer), and the
// input_shape / batch_input_shape kwargs of a first layer (read by the
// document reader when it needs them).
void ignoreCommon(KerasConfig& c) {
  c.ignore({"name", "trainable", "batch_input_shape", "batch_shape", "input_shape", "input_dim"});
}

void readActivation(KerasConfig& c, LayerSpec& spec) {
  const std::string name = c.activation("activation");
  if (!parseActivation(name, spec.activation))
    c.fail("activation", "'" + name + "' is not modelled (supported: " + activationNames() + ")");
}

// Regularizers, constraints and activity regularizers change the loss or the
// update: only null is modelled.
void requireNoPenalties(KerasConfig& c, std::initializer_list<const char*> weights) {
  for (const char* w : weights) {
    c.requireNull(std::string(w) + "_regularizer", "a regularizer adds to the loss");
    c.requireNull(std::string(w) + "_constraint", "a constraint changes the update");
  }
  c.requireNull("activity_regularizer", "a regularizer adds to the loss");
}

// Dense and Conv2D: the activation, the bias, and the keys about their
// weights, which must be Keras's defaults (ipusim draws Glorot-uniform
// kernels and zero biases itself; a to_json() file holds no weights).
void readKernelAndBias(KerasConfig& c, LayerSpec& spec) {
  readActivation(c, spec);
  spec.useBias = c.boolean("use_bias", true);
  c.requireInitializer("kernel_initializer", {"GlorotUniform"});
  c.requireInitializer("bias_initializer", {"Zeros"});
  requireNoPenalties(c, {"kernel", "bias"});
  c.requireNull("lora_rank", "LoRA adapters are extra weights");
  c.ignore({"lora_alpha"});  // only meaningful with a lora_rank
  c.requireNull("quantization_config", "quantized weights");
}

void requireChannelsLast(KerasConfig& c) {
  c.oneOf("data_format", "channels_last", {"channels_last"});
}

void readWindow(KerasConfig& c, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow) {
  if (!c.has(windowKey)) c.fail(windowKey, "missing");
  spec.window = c.pair(windowKey, spec.window);
  spec.strides = c.pair("strides", stridesDefaultToWindow ? spec.window : spec.strides);
  spec.padding = c.oneOf("padding", "valid", {"valid", "same"});
  requireChannelsLast(c);
}

}  // namespace

KerasLayer readKerasLayer(KerasConfig& c, const std::string& cls) {
  namespace k = layer_kind;
  KerasLayer out;
  LayerSpec& spec = out.spec;
  ignoreCommon(c);
  spec.name = c.string("name", "");
  out.dtype = c.dtypePolicy("dtype");
  if (cls == "Flatten") {
    spec.kind = k::kFlatten;
    requireChannelsLast(c);
  } else if (cls == "Reshape") {
    spec.kind = k::kReshape;
    c.ignore({"target_shape"});
    const json& t = c.at("target_shape");
    if (!t.is_array() || t.empty()) c.fail("target_shape", "expected a list of sizes, got " + t.dump());
    for (const json& e : t) {
      if (!e.is_number_integer()) c.fail("target_shape", "expected integers, got " + t.dump());
      spec.targetShape.push_back(e.get<std::int64_t>());
    }
  } else if (cls == "Dense") {
    spec.kind = k::kDense;
    const std::int64_t units = c.integer("units", 0);
    if (units <= 0 || units > 0xffffffffll) c.fail("units", "expected a positive integer, got " + c.at("units").dump());
    spec.units = std::uint32_t(units);
    readKernelAndBias(c, spec);
  } else if (cls == "Dropout") {
    spec.kind = k::kDropout;
    spec.rate = c.number("rate", 0);
    if (!(spec.rate >= 0 && spec.rate < 1)) c.fail("rate", "expected a number in [0, 1), got " + c.at("rate").dump());
    spec.seeded = c.has("seed");
    const std::int64_t seed = c.integer("seed", 0);
    if (seed < 0) c.fail("seed", "expected a non-negative integer, got " + c.at("seed").dump());
    spec.seed = std::uint64_t(seed);
    c.requireNull("noise_shape", "a mask shared over dimensions");
  } else if (cls == "BatchNormalization") {
    spec.kind = k::kBatchNormalization;
    c.ignore({"axis"});
    const json& axis = c.at("axis");
    if (axis.is_number_integer()) out.normalizationAxis = axis.get<std::int64_t>();
    else if (axis.is_array() && axis.size() == 1 && axis[0].is_number_integer()) out.normalizationAxis = axis[0].get<std::int64_t>();
    else if (axis.is_null()) out.normalizationAxis = -1;
    else c.fail("axis", axis.dump() + " is not modelled (one axis, the channels)");
    spec.momentum = c.number("momentum", 0.99);
    if (!(spec.momentum >= 0 && spec.momentum <= 1)) c.fail("momentum", "expected a number in [0, 1]");
    spec.epsilon = c.number("epsilon", 1e-3);
    if (!(spec.epsilon > 0)) c.fail("epsilon", "expected a positive number");
    spec.center = c.boolean("center", true);
    spec.scale = c.boolean("scale", true);
    c.requireInitializer("beta_initializer", {"Zeros"});
    c.requireInitializer("gamma_initializer", {"Ones"});
    c.requireInitializer("moving_mean_initializer", {"Zeros"});
    c.requireInitializer("moving_variance_initializer", {"Ones"});
    requireNoPenalties(c, {"beta", "gamma"});
    c.ignore({"activity_regularizer"});
    c.requireValue("synchronized", false, "cross-replica statistics");
    c.requireValue("renorm", false, "batch renormalization");
    c.ignore({"renorm_clipping", "renorm_momentum"});  // only meaningful with renorm
    c.requireNull("virtual_batch_size", "ghost batch normalization");
    c.requireNull("adjustment", "a custom adjustment");
    // An implementation choice of TF 2.x: the same training; its fused kernel
    // updates the moving variance with the unbiased batch variance
    // (tensorflow/tensorflow#55545), ipusim with the biased one, as Keras 3.
    c.ignore({"fused"});
  } else if (cls == "Activation") {
    spec.kind = k::kActivation;
    readActivation(c, spec);
  } else if (cls == "Conv2D") {
    spec.kind = k::kConv2D;
    const std::int64_t filters = c.integer("filters", 0);
    if (filters <= 0 || filters > 0xffffffffll)
      c.fail("filters", "expected a positive integer, got " + c.at("filters").dump());
    spec.units = std::uint32_t(filters);
    readWindow(c, spec, "kernel_size", false);
    c.requireValue("dilation_rate", 1, "dilated convolutions");
    c.requireValue("groups", 1, "grouped convolutions");
    readKernelAndBias(c, spec);
  } else if (cls == "GlobalAveragePooling2D" || cls == "GlobalMaxPooling2D") {
    spec.kind = cls == "GlobalAveragePooling2D" ? k::kGlobalAveragePooling2D : k::kGlobalMaxPooling2D;
    requireChannelsLast(c);
    spec.keepDims = c.boolean("keepdims", false);
  } else if (cls == "Add" || cls == "Subtract" || cls == "Multiply") {
    spec.kind = cls == "Add" ? k::kAdd : cls == "Subtract" ? k::kSubtract : k::kMultiply;
  } else if (cls == "ZeroPadding1D" || cls == "ZeroPadding2D" || cls == "Cropping1D" || cls == "Cropping2D") {
    const bool crop = cls[0] == 'C', two = cls.back() == 'D' && cls[cls.size() - 2] == '2';
    spec.kind = crop ? (two ? k::kCropping2D : k::kCropping1D) : (two ? k::kZeroPadding2D : k::kZeroPadding1D);
    const char* key = crop ? "cropping" : "padding";
    if (two) requireChannelsLast(c);
    c.ignore({key});
    if (!c.has(key)) c.fail(key, "missing");
    const auto pads = padsFromJson(c.at(key), two);
    if (!pads) c.fail(key, std::string("expected ") + padsForms(two) + ", got " + c.at(key).dump());
    spec.pads = *pads;
  } else if (cls == "Concatenate") {
    spec.kind = k::kConcatenate;
    spec.axis = c.integer("axis", -1);
  } else if (cls == "MaxPooling2D" || cls == "AveragePooling2D") {
    spec.kind = cls == "MaxPooling2D" ? k::kMaxPooling2D : k::kAveragePooling2D;
    readWindow(c, spec, "pool_size", true);
  } else {
    c.fail("class_name", "internal: no reader for " + cls);
  }
  c.check();
  return out;
}

}  // namespace ipusim::scheduler
