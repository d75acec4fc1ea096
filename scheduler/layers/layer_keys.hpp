#pragma once
// Keys several layer kinds share, read the same way for each: an
// activation, a window (kernel or pool size, strides, padding), a kernel and
// its bias, channels last. Workload keys (WorkloadReader) and Keras config
// keys (KerasConfig) side by side.
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// ipusim's workload.
void readActivation(const WorkloadReader& keys, LayerSpec& spec, bool required);
void readWindow(const WorkloadReader& keys, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow);
// The 1-D form over steps: spec.window and spec.strides become [1, n] (one row).
void readWindow1D(const WorkloadReader& keys, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow);

// A padding that is not 'valid', 'same' (or, with `causal`, 'causal'): one
// message for both formats.
std::string paddingRefusal(const std::string& padding, bool causal);
// A workload's padding (default `def`).
std::string readPadding(const WorkloadReader& keys, const std::string& def, bool causal);

// Keras configs.
void readActivation(KerasConfig& c, LayerSpec& spec);
// An activation key (a missing key is `def`: Keras's default for it; null is linear).
void readActivationKey(KerasConfig& c, const char* key, Activation def, Activation& activation, ActivationParams& params);
// padding, as Keras's standardize_padding reads it (any case; None fails).
std::string readPadding(KerasConfig& c, bool causal);
// The activation, use_bias, and the keys about the weights, which must be
// Keras's defaults (ipusim draws Glorot-uniform kernels and zero biases
// itself; a to_json() file holds no weights): Dense, Conv2D.
void readKernelAndBias(KerasConfig& c, LayerSpec& spec);
// Its keys about the weights alone (initializers, penalties, LoRA,
// quantization), for a layer with no use_bias key (EinsumDense: bias_axes).
void readKernelAndBiasWeights(KerasConfig& c);
// The weights' regularizers and the activity regularizer (read into
// KerasConfig::regularizers(): L1, L2, L1L2); constraints change the
// update: only null is modelled.
void readPenalties(KerasConfig& c, std::initializer_list<const char*> weights);
void requireChannelsLast(KerasConfig& c);
// Keras 1's and 2's input_length of a sequence layer (Embedding, the RNNs):
// the steps of its input, kept in spec.targetShape ({n}; empty when absent
// or null) for the layer's outputShape() to check.
void readInputLength(KerasConfig& c, LayerSpec& spec);
// The keys BatchNormalization, LayerNormalization and GroupNormalization
// share: epsilon (> 0, Keras's 1e-3), center and scale (true); from a Keras
// config also the gamma and beta initializers (Ones, Zeros, or any other
// modelled one) and their regularizers.
void readNormalizationKeys(const WorkloadReader& keys, LayerSpec& spec);
void readNormalizationKeys(KerasConfig& c, LayerSpec& spec);
// A required non-empty list of integers (Reshape's target_shape, Permute's dims).
std::vector<std::int64_t> readIntegers(KerasConfig& c, const char* key);
void readWindow(KerasConfig& c, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow);
void readWindow1D(KerasConfig& c, LayerSpec& spec, const char* windowKey, bool stridesDefaultToWindow);

// The 1-D form: over a steps x channels input, as the 2-D rule over one row.
std::vector<std::uint64_t> windowedShape1D(const LayerSpec& spec, const std::vector<std::uint64_t>& in,
                                           const char* windowKey, std::uint64_t channels,
                                           const std::function<void(const std::string&, const std::string&)>& fail);

// A convolution's or pooling's output (Keras's rule per spatial dimension,
// layer_shapes.hpp windowedSize) over a rows x columns x channels input,
// with `channels` out; fails on another rank or a window larger than a
// valid-padded input, naming `windowKey`.
std::vector<std::uint64_t> windowedShape(const LayerSpec& spec, const std::vector<std::uint64_t>& in,
                                         const char* windowKey, std::uint64_t channels,
                                         const std::function<void(const std::string&, const std::string&)>& fail);

}  // namespace ipusim::scheduler
