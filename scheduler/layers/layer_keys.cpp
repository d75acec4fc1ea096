#include "scheduler/layers/layer_keys.hpp"

#include "scheduler/models/layer_shapes.hpp"

#include <cctype>

namespace ipusim::scheduler {

std::string paddingRefusal(const std::string& padding, bool causal) {
  return "'" + padding + "' is not modelled (expected " + (causal ? "'valid', 'same' or 'causal'" : "'valid' or 'same'") + ")";
}

std::string readPadding(const WorkloadReader& l, const std::string& def, bool causal) {
  const std::string padding = l.string("padding", def);
  if (padding != "valid" && padding != "same" && !(causal && padding == "causal"))
    l.fail(l.key("padding"), paddingRefusal(padding, causal));
  return padding;
}

std::string readPadding(KerasConfig& c, bool causal) {
  c.ignore({"padding"});
  if (c.isNull("padding"))  // standardize_padding lowers it: None fails
    c.refuseNull("padding", causal ? "'valid', 'same' or 'causal'" : "'valid' or 'same'");
  if (c.has("padding") && !c.at("padding").is_string()) c.fail("padding", "expected a string, got " + c.at("padding").dump());
  // Keras accepts any case ("SAME"): standardize_padding lowers it.
  std::string padding = c.has("padding") ? c.at("padding").get<std::string>() : "valid";
  for (char& ch : padding) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (padding != "valid" && padding != "same" && !(causal && padding == "causal")) c.fail("padding", paddingRefusal(padding, causal));
  return padding;
}

void readActivation(const WorkloadReader& l, LayerSpec& spec, bool required) {
  if (required && !l.has("activation")) l.fail(l.key("activation"), "missing (expected " + activationNames() + ")");
  const std::string name = l.string("activation", "linear");
  if (!parseActivation(name, spec.activation))
    l.fail(l.key("activation"), "'" + name + "' is not one of " + activationNames());
  spec.activationParams = defaultParams(spec.activation);
}

void readWindow(const WorkloadReader& l, LayerSpec& spec, const char* key, bool stridesDefaultToWindow) {
  if (!l.has(key)) l.fail(l.key(key), "missing (expected a positive integer or [rows, columns])");
  spec.window = l.pair(key, spec.window);
  spec.strides = l.pair("strides", stridesDefaultToWindow ? spec.window : spec.strides);
  spec.padding = readPadding(l, spec.padding, false);
}

void readWindow1D(const WorkloadReader& l, LayerSpec& spec, const char* key, bool stridesDefaultToWindow) {
  if (!l.has(key)) l.fail(l.key(key), "missing (expected a positive integer)");
  spec.window = {1, l.single(key, 1)};
  spec.strides = {1, l.single("strides", stridesDefaultToWindow ? spec.window[1] : 1)};
  spec.padding = readPadding(l, spec.padding, false);
}

void readActivation(KerasConfig& c, LayerSpec& spec) {
  readActivationKey(c, "activation", Activation::Linear, spec.activation, spec.activationParams);
}

void readActivationKey(KerasConfig& c, const char* key, Activation def, Activation& activation, ActivationParams& params) {
  if (!c.has(key) && !c.isNull(key)) {  // absent: the layer's default (null is None: linear)
    activation = def;
    params = defaultParams(def);
    if (def == Activation::HardSigmoid && c.format() == "tf2") params.hardSigmoidSlope = 0.2;
    return;
  }
  std::string name = c.activation(key);
  // gelu(x, approximate=True) has no Keras name: a model writes the
  // function registered by KerasHub (keras_utils.gelu_approximate, under
  // both its packages) or by TF Model Garden (official/modeling/activations/gelu.py);
  // TF 2.x may write tf.nn.softmax as softmax_v2.
  if (name == "keras_hub>gelu_approximate" || name == "keras_nlp>gelu_approximate" || name == "Text>gelu")
    name = "gelu_approximate";
  if (name == "softmax_v2") name = "softmax";
  if (!parseActivation(name, activation))
    c.fail(key, "'" + name + "' is not modelled (supported: " + activationNames() + ")");
  params = defaultParams(activation);
  // Keras 2 (and 1) computed hard_sigmoid as clip(0.2 x + 0.5, 0, 1); Keras 3
  // as relu6(x + 3) / 6: a file computes what the Keras that wrote it did.
  if (activation == Activation::HardSigmoid && c.format() == "tf2") params.hardSigmoidSlope = 0.2;
}

void readPenalties(KerasConfig& c, std::initializer_list<const char*> weights) {
  for (const char* w : weights) {
    c.regularizer(std::string(w) + "_regularizer");
    c.requireNull(std::string(w) + "_constraint", "a constraint changes the update");
  }
  c.regularizer("activity_regularizer");
}

void readInputLength(KerasConfig& c, LayerSpec& spec) {
  if (!c.has("input_length")) {
    c.ignore({"input_length"});  // absent, or null: any length
    return;
  }
  const std::int64_t n = c.integer("input_length", 0);
  if (n <= 0) c.fail("input_length", "expected a positive integer or null, got " + c.at("input_length").dump());
  spec.targetShape = {n};
}

void readKernelAndBias(KerasConfig& c, LayerSpec& spec) {
  readActivation(c, spec);
  spec.useBias = c.boolean("use_bias", true);
  readKernelAndBiasWeights(c);
}

void readKernelAndBiasWeights(KerasConfig& c) {
  c.requireInitializer("kernel_initializer", {"GlorotUniform"});
  c.requireInitializer("bias_initializer", {"Zeros"});
  readPenalties(c, {"kernel", "bias"});
  c.requireNull("lora_rank", "LoRA adapters are extra weights");
  c.ignore({"lora_alpha"});  // only meaningful with a lora_rank
  c.requireNull("quantization_config", "quantized weights");
}

void readNormalizationKeys(const WorkloadReader& l, LayerSpec& spec) {
  spec.epsilon = l.number("epsilon", 1e-3);
  if (!(spec.epsilon > 0)) l.fail(l.key("epsilon"), "expected a positive number");
  spec.center = l.boolean("center", true);
  spec.scale = l.boolean("scale", true);
}

void readNormalizationKeys(KerasConfig& c, LayerSpec& spec) {
  spec.epsilon = c.number("epsilon", 1e-3);
  if (!(spec.epsilon > 0)) c.fail("epsilon", "expected a positive number");
  spec.center = c.boolean("center", true);
  spec.scale = c.boolean("scale", true);
  c.requireInitializer("beta_initializer", {"Zeros"});
  c.requireInitializer("gamma_initializer", {"Ones"});
  readPenalties(c, {"beta", "gamma"});
}

void requireChannelsLast(KerasConfig& c) {
  // None is keras.config.image_data_format(), channels_last unless configured otherwise.
  if (c.isNull("data_format")) return c.ignore({"data_format"});
  c.oneOf("data_format", "channels_last", {"channels_last"});
}

std::vector<std::int64_t> readIntegers(KerasConfig& c, const char* key) {
  c.ignore({key});
  c.require(key, "a list of integers");
  const nlohmann::json& v = c.at(key);
  if (!v.is_array() || v.empty()) c.fail(key, "expected a list of integers, got " + v.dump());
  std::vector<std::int64_t> out;
  for (const nlohmann::json& e : v) {
    // (2^64 - 1 would read as -1.)
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<std::uint64_t>() > 0x7fffffffffffffffull))
      c.fail(key, "expected integers, got " + v.dump());
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

// A pooling's strides: None is its pool_size (Keras: `strides = pool_size if strides is None`).
static bool stridesAreWindow(KerasConfig& c, bool stridesDefaultToWindow) {
  if (!stridesDefaultToWindow || !c.isNull("strides")) return false;
  c.ignore({"strides"});
  return true;
}

void readWindow(KerasConfig& c, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow) {
  c.require(windowKey, "a positive integer or two of them");
  spec.window = c.pair(windowKey, spec.window);
  spec.strides = stridesAreWindow(c, stridesDefaultToWindow)
                     ? spec.window
                     : c.pair("strides", stridesDefaultToWindow ? spec.window : spec.strides);
  spec.padding = readPadding(c, false);
  requireChannelsLast(c);
}

void readWindow1D(KerasConfig& c, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow) {
  c.require(windowKey, "a positive integer (or a list of one)");
  spec.window = {1, c.single(windowKey, 1)};
  spec.strides = {1, stridesAreWindow(c, stridesDefaultToWindow)
                         ? spec.window[1]
                         : c.single("strides", stridesDefaultToWindow ? spec.window[1] : 1)};
  spec.padding = readPadding(c, false);
  requireChannelsLast(c);
}

std::vector<std::uint64_t> windowedShape1D(const LayerSpec& l, const std::vector<std::uint64_t>& shape,
                                           const char* windowKey, std::uint64_t channels,
                                           const std::function<void(const std::string&, const std::string&)>& fail) {
  if (shape.size() != 2)
    fail("", "expects a steps x channels input (channels last), got " + shapeText(shape));
  const std::uint64_t steps = windowedSize(shape[0], l.window[1], l.strides[1], l.padding);
  if (steps == 0)
    fail(windowKey, std::to_string(l.window[1]) + " with padding 'valid' is larger than its " + shapeText(shape) + " input");
  return {steps, channels};
}

std::vector<std::uint64_t> windowedShape(const LayerSpec& l, const std::vector<std::uint64_t>& shape,
                                         const char* windowKey, std::uint64_t channels,
                                         const std::function<void(const std::string&, const std::string&)>& fail) {
  if (shape.size() != 3)
    fail("", "expects a rows x columns x channels input (channels last), got " + shapeText(shape) +
                 (shape.size() == 1 ? " (add a reshape to rows x columns x channels before it)" : ""));
  std::vector<std::uint64_t> out = shape;
  for (int d = 0; d < 2; ++d) {
    out[d] = windowedSize(shape[d], l.window[d], l.strides[d], l.padding);
    if (out[d] == 0)
      fail(windowKey, std::to_string(l.window[0]) + "x" + std::to_string(l.window[1]) +
                          " with padding 'valid' is larger than its " + shapeText(shape) + " input");
  }
  out[2] = channels;
  return out;
}

}  // namespace ipusim::scheduler
