#include "scheduler/models/keras1_spellings.hpp"

#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;
using Renames = std::vector<std::pair<std::string, std::string>>;

// keras/legacy/interfaces.py's conversions, by Keras 2 class.
const Renames kWeights{{"W_regularizer", "kernel_regularizer"}, {"b_regularizer", "bias_regularizer"},
                       {"W_constraint", "kernel_constraint"},   {"b_constraint", "bias_constraint"},
                       {"bias", "use_bias"}};

const Renames kRecurrent{{"output_dim", "units"},           {"init", "kernel_initializer"},
                         {"inner_init", "recurrent_initializer"}, {"inner_activation", "recurrent_activation"},
                         {"W_regularizer", "kernel_regularizer"}, {"U_regularizer", "recurrent_regularizer"},
                         {"b_regularizer", "bias_regularizer"},   {"dropout_W", "dropout"},
                         {"dropout_U", "recurrent_dropout"},      {"consume_less", "implementation"}};

Renames withWeightKeys(Renames base, const Renames& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

const Renames& renamesOf(const std::string& cls) {
  static const Renames none;
  static const std::map<std::string, Renames> table{
      {"Dense", withWeightKeys({{"output_dim", "units"}, {"init", "kernel_initializer"}}, kWeights)},
      {"Dropout", {{"p", "rate"}}},
      // recurrent_args_preprocessor and legacy_recurrent_support (consume_less
      // became implementation: the same arithmetic, scheduled otherwise).
      {"SimpleRNN", kRecurrent},
      {"GRU", kRecurrent},
      {"LSTM", kRecurrent},
      {"Embedding", {{"init", "embeddings_initializer"}, {"W_regularizer", "embeddings_regularizer"},
                     {"W_constraint", "embeddings_constraint"}}},
      {"Conv1D", withWeightKeys({{"nb_filter", "filters"}, {"filter_length", "kernel_size"}, {"subsample_length", "strides"},
                       {"border_mode", "padding"}, {"init", "kernel_initializer"}},
                      kWeights)},
      {"Conv2D", withWeightKeys({{"nb_filter", "filters"}, {"subsample", "strides"}, {"border_mode", "padding"},
                       {"dim_ordering", "data_format"}, {"init", "kernel_initializer"}},
                      kWeights)},
      {"Conv2DTranspose", withWeightKeys({{"nb_filter", "filters"}, {"subsample", "strides"}, {"border_mode", "padding"},
                                {"dim_ordering", "data_format"}, {"init", "kernel_initializer"}},
                               kWeights)},
      // (init: both initializers, below.)
      {"SeparableConv2D", {{"nb_filter", "filters"}, {"subsample", "strides"}, {"border_mode", "padding"},
                           {"dim_ordering", "data_format"}, {"b_regularizer", "bias_regularizer"},
                           {"b_constraint", "bias_constraint"}, {"bias", "use_bias"}}},
      {"MaxPooling1D", {{"pool_length", "pool_size"}, {"stride", "strides"}, {"border_mode", "padding"}}},
      {"AveragePooling1D", {{"pool_length", "pool_size"}, {"stride", "strides"}, {"border_mode", "padding"}}},
      {"MaxPooling2D", {{"border_mode", "padding"}, {"dim_ordering", "data_format"}}},
      {"AveragePooling2D", {{"border_mode", "padding"}, {"dim_ordering", "data_format"}}},
      {"GlobalMaxPooling2D", {{"dim_ordering", "data_format"}}},
      {"GlobalAveragePooling2D", {{"dim_ordering", "data_format"}}},
      {"UpSampling1D", {{"length", "size"}}},
      {"UpSampling2D", {{"dim_ordering", "data_format"}}},
      {"ZeroPadding2D", {{"dim_ordering", "data_format"}}},
      {"Cropping2D", {{"dim_ordering", "data_format"}}},
      {"PReLU", {{"init", "alpha_initializer"}}},
      {"BatchNormalization", {{"beta_init", "beta_initializer"}, {"gamma_init", "gamma_initializer"}}}};
  const auto it = table.find(cls);
  return it == table.end() ? none : it->second;
}

// Keras 1 class names Keras 2 kept as aliases.
std::string keras2Class(const std::string& cls) {
  static const std::map<std::string, std::string> aliases{{"Convolution1D", "Conv1D"},
                                                          {"Convolution2D", "Conv2D"},
                                                          {"SeparableConvolution2D", "SeparableConv2D"},
                                                          {"Deconvolution2D", "Conv2DTranspose"},
                                                          {"Deconv2D", "Conv2DTranspose"}};
  const auto it = aliases.find(cls);
  return it == aliases.end() ? cls : it->second;
}

}  // namespace

std::optional<Keras2Spelling> keras2Spelling(const std::string& fileClass, const json& config, const std::string& file,
                                             const std::string& where) {
  if (!config.is_object()) return std::nullopt;
  auto fail = [&](const std::string& key, const std::string& what) {
    throw std::invalid_argument(file + ": " + where + ": " + key + ": " + what);
  };
  Keras2Spelling s{keras2Class(fileClass), config, {}};
  auto rename = [&](const std::string& from, const std::string& to) {
    if (!s.config.contains(from)) return;
    // As Keras 2's raise_duplicate_arg_error.
    if (s.config.contains(to))
      fail(from, "given with its Keras 2 spelling " + to + " too (Keras 2 refuses both; keep " + to + ")");
    s.config[to] = s.config.at(from);
    s.config.erase(from);
    s.fileKeys[to] = from;
  };
  for (const auto& [from, to] : renamesOf(s.cls)) rename(from, to);
  const bool conv2d = s.cls == "Conv2D" || s.cls == "Conv2DTranspose" || s.cls == "SeparableConv2D";
  if (conv2d && s.config.contains("nb_row") && s.config.contains("nb_col")) {  // conv2d_args_preprocessor
    if (s.config.contains("kernel_size")) fail("nb_row", "given with kernel_size too (Keras 2 refuses both)");
    s.config["kernel_size"] = json::array({s.config.at("nb_row"), s.config.at("nb_col")});
    s.config.erase("nb_row");
    s.config.erase("nb_col");
    s.fileKeys["kernel_size"] = "nb_row/nb_col";
  }
  if (s.cls == "SeparableConv2D" && s.config.contains("init")) {  // separable_conv2d_args_preprocessor
    for (const char* to : {"depthwise_initializer", "pointwise_initializer"}) {
      if (s.config.contains(to)) fail("init", std::string("given with ") + to + " too (Keras 2 refuses both)");
      s.config[to] = s.config.at("init");
      s.fileKeys[to] = "init";
    }
    s.config.erase("init");
  }
  if (s.cls == "LSTM" && s.config.contains("forget_bias_init")) {  // recurrent_args_preprocessor
    const json v = s.config.at("forget_bias_init");
    if (v != "one" && v != "zero") fail("forget_bias_init", v.dump() + " is not 'one' or 'zero' (Keras 2 converts only those)");
    s.config["unit_forget_bias"] = v == "one";
    s.config.erase("forget_bias_init");
    s.fileKeys["unit_forget_bias"] = "forget_bias_init";
  }
  if (s.cls == "Conv2DTranspose" && s.config.contains("output_shape")) {  // deconv2d_args_preprocessor drops it
    s.config.erase("output_shape");
  }
  if (s.cls == "BatchNormalization" && s.config.contains("mode")) {  // batchnorm_args_preprocessor
    if (s.config.at("mode") != json(0))
      fail("mode", s.config.at("mode").dump() + " is refused (Keras 2 refused BatchNormalization's mode 1 and 2: "
                                                 "only mode 0, feature-wise, has a Keras 2 meaning)");
    s.config.erase("mode");
  }
  if (s.cls == "ZeroPadding2D" && s.config.contains("padding") && s.config.at("padding").is_object()) {
    // zeropadding2d_args_preprocessor: {top_pad, bottom_pad, left_pad, right_pad} -> ((top, bottom), (left, right)).
    const json pads = s.config.at("padding");
    static const std::set<std::string> sides{"top_pad", "bottom_pad", "left_pad", "right_pad"};
    for (auto it = pads.begin(); it != pads.end(); ++it)
      if (!sides.count(it.key())) fail("padding", "'" + it.key() + "' is not one of top_pad, bottom_pad, left_pad, right_pad");
    auto side = [&](const char* k) { return pads.value(k, json(0)); };
    s.config["padding"] = json::array({json::array({side("top_pad"), side("bottom_pad")}),
                                       json::array({side("left_pad"), side("right_pad")})});
  }
  if (s.fileKeys.count("data_format")) {  // dim_ordering's values
    const json& v = s.config.at("data_format");
    if (v == "th")
      fail("dim_ordering", "'th' (Theano's order, channels first) is not modelled (channels last: 'tf')");
    if (v == "tf" || v == "default") s.config["data_format"] = v == "tf" ? json("channels_last") : json();
    else fail("dim_ordering", v.dump() + " is not one of 'tf', 'th', 'default'");
  }
  // Keras 1's Convolution1D wrote its input's length beside input_dim (conv1d_args_preprocessor: the input shape).
  if (s.cls == "Conv1D" && s.config.contains("input_length")) {
    s.config.erase("input_length");
  }
  if (s.cls == fileClass && s.fileKeys.empty() && s.config == config) return std::nullopt;
  return s;
}

}  // namespace ipusim::scheduler
