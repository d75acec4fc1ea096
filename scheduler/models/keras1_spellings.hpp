#pragma once
// Keras 1's spellings of a layer in Keras 2's words, converted as Keras
// 2.0-2.2 converted them when it loaded a Keras 1 file (keras/legacy/
// interfaces.py, and the class aliases of keras/layers/convolutional.py):
// one-to-one renames only. Class names: Convolution1D, Convolution2D,
// SeparableConvolution2D, Deconvolution2D -> Conv1D, Conv2D,
// SeparableConv2D, Conv2DTranspose. Keys: nb_filter -> filters, nb_row and
// nb_col -> kernel_size, filter_length -> kernel_size, subsample(_length) ->
// strides, border_mode -> padding, init -> kernel_initializer (a separable
// convolution's: both its initializers; PReLU's: alpha_initializer),
// output_dim -> units, W_/b_regularizer and W_/b_constraint -> kernel_/bias_,
// bias -> use_bias, p -> rate, pool_length -> pool_size, stride -> strides,
// length -> size, beta_init / gamma_init -> beta_ / gamma_initializer,
// BatchNormalization's mode 0 dropped (1 and 2 refused, as Keras 2 refused
// them), ZeroPadding2D's {top_pad, ...} padding, and dim_ordering 'tf' /
// 'default' -> data_format channels_last ('th', channels first, refused).
// A config with both spellings of a key is refused, as Keras 2 refused it.
// Internal to scheduler/.
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace ipusim::scheduler {

struct Keras2Spelling {
  std::string cls;         // the Keras 2 class
  nlohmann::json config;   // the config in Keras 2's keys
  // Keras 2 key -> the key the file wrote ("filters" -> "nb_filter"), for errors.
  std::map<std::string, std::string> fileKeys;
};

// nullopt when the layer has no Keras 1 spelling. Throws
// std::invalid_argument "<file>: <where>: <key>: <what>".
std::optional<Keras2Spelling> keras2Spelling(const std::string& cls, const nlohmann::json& config,
                                             const std::string& file, const std::string& where);

}  // namespace ipusim::scheduler
