#pragma once
// LayerSpec: one layer of a model, as ipusim's own workload format and the
// Keras importer (keras_model.hpp) both describe it. Nothing downstream knows
// where a layer came from. Shapes are per example (no batch dimension),
// channels last (NHWC without the N), as Keras's default data_format.
#include "scheduler/models/initializer.hpp"
#include "scheduler/models/regularizer.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// Keras's activation names (keras.activations; the formulas, the gradients
// and the codelets: scheduler/layers/activation_functions.hpp). Gelu is the
// exact erf form (Keras's default, approximate=False), GeluApproximate the
// tanh form (approximate=True); Silu is also read as swish, HardSilu as
// hard_swish.
enum class Activation {
  Linear, Relu, Sigmoid, Tanh, Softmax, Gelu,
  GeluApproximate, Relu6, Elu, Selu, Silu, Softplus, Softsign, HardSigmoid, HardSilu, Exponential, LeakyRelu, Mish
};
const char* toString(Activation a);
// The activation named `name` (Keras's spelling or alias); false when unknown.
bool parseActivation(const std::string& name, Activation& out);
// "linear | relu | ... | mish", for error messages.
std::string activationNames();

// The constants of the relu family and of elu and hard_sigmoid: an
// activation name's defaults (defaultParams), or a layer's (ReLU, LeakyReLU,
// ELU). The relu family is one function, Keras's relu:
//   x > threshold ? min(x, maxValue) : negativeSlope (x - threshold).
struct ActivationParams {
  double negativeSlope = 0;         // leaky_relu: 0.2
  std::optional<double> maxValue;   // relu6: 6
  double threshold = 0;
  double alpha = 1;                 // elu; prelu: alpha's initial value (alpha_initializer)
  double hardSigmoidSlope = 1.0 / 6;  // Keras 3's hard_sigmoid, relu6(x + 3) / 6; Keras 2's is 0.2
};
ActivationParams defaultParams(Activation a);

// Layer kinds (ipusim's names; Keras class names map onto them).
namespace layer_kind {
inline constexpr const char* kFlatten = "flatten";
inline constexpr const char* kReshape = "reshape";
inline constexpr const char* kDense = "dense";
// Keras's EinsumDense: a Dense over several axes, as its equation says
// (LayerSpec::equation; layers/einsum_equation.hpp).
inline constexpr const char* kEinsumDense = "einsum_dense";
inline constexpr const char* kDropout = "dropout";
// TF's RecomputationCheckpoint: its input passes through; the layer whose
// output it reads is a recomputation checkpoint (TrainingSpec::recomputeCheckpoints).
inline constexpr const char* kRecomputationCheckpoint = "recomputation_checkpoint";
// Keras's Masking: a [steps, features] input's steps whose every feature is
// LayerSpec::maskValue are zeroed and masked for the layers after it.
inline constexpr const char* kMasking = "masking";
// A lookup of each token id of the model's (integer) input in a trainable
// table of LayerSpec::inputDim rows of `units` values (Keras's Embedding).
inline constexpr const char* kEmbedding = "embedding";
// Noise added (gaussian_noise: LayerSpec::rate is its stddev) or multiplied
// (gaussian_dropout: rate as Keras's) in training.
inline constexpr const char* kGaussianNoise = "gaussian_noise";
inline constexpr const char* kGaussianDropout = "gaussian_dropout";
inline constexpr const char* kBatchNormalization = "batch_normalization";
inline constexpr const char* kActivation = "activation";
inline constexpr const char* kConv2D = "conv2d";
// The convolution family (layers/conv_keys.hpp): 1-D forms over steps x
// channels, computed as 2-D convolutions over one row.
inline constexpr const char* kConv1D = "conv1d";
inline constexpr const char* kDepthwiseConv1D = "depthwise_conv1d";
inline constexpr const char* kDepthwiseConv2D = "depthwise_conv2d";
inline constexpr const char* kSeparableConv1D = "separable_conv1d";
inline constexpr const char* kSeparableConv2D = "separable_conv2d";
inline constexpr const char* kConv1DTranspose = "conv1d_transpose";
inline constexpr const char* kConv2DTranspose = "conv2d_transpose";
inline constexpr const char* kMaxPooling2D = "max_pooling2d";
inline constexpr const char* kAveragePooling2D = "average_pooling2d";
inline constexpr const char* kGlobalAveragePooling2D = "global_average_pooling2d";
inline constexpr const char* kGlobalMaxPooling2D = "global_max_pooling2d";
// Over the steps of a steps x channels input (the 2-D pooling of one row:
// LayerSpec::window and strides are [1, n]).
inline constexpr const char* kMaxPooling1D = "max_pooling1d";
inline constexpr const char* kAveragePooling1D = "average_pooling1d";
inline constexpr const char* kGlobalAveragePooling1D = "global_average_pooling1d";
inline constexpr const char* kGlobalMaxPooling1D = "global_max_pooling1d";
// Activation layers (one input, its shape): Keras's ReLU (max_value,
// negative_slope, threshold), LeakyReLU, ELU, PReLU (a trainable alpha),
// Softmax (any axis); preprocessing: Rescaling (x scale + offset),
// Normalization ((x - mean) / sqrt(variance)).
inline constexpr const char* kRelu = "relu";
inline constexpr const char* kLeakyRelu = "leaky_relu";
inline constexpr const char* kElu = "elu";
inline constexpr const char* kPRelu = "prelu";
inline constexpr const char* kSoftmax = "softmax";
inline constexpr const char* kRescaling = "rescaling";
inline constexpr const char* kNormalization = "normalization";
// Recurrent layers over a [steps, features] input, unrolled over the steps
// (Keras's SimpleRNN, LSTM and GRU): `units`, `activation`, recurrentActivation,
// returnSequences, goBackwards, unitForgetBias, resetAfter.
inline constexpr const char* kSimpleRnn = "simple_rnn";
inline constexpr const char* kLstm = "lstm";
// Keras's Bidirectional: a recurrent layer run forward and backward over the
// steps (LayerSpec::wrapped), the outputs merged (LayerSpec::mergeMode).
inline constexpr const char* kBidirectional = "bidirectional";
// Keras's GRU (LayerSpec::resetAfter: the reset gate after the recurrent
// product, Keras 2.3+'s and 3's default, with an input and a recurrent bias).
inline constexpr const char* kGru = "gru";
// Each example normalized over its trailing axes (LayerSpec::axes), with a
// gamma and beta per position of them.
inline constexpr const char* kLayerNormalization = "layer_normalization";
// Each example normalized per group of channels (LayerSpec::channelGroups), with a
// gamma and beta per channel.
inline constexpr const char* kGroupNormalization = "group_normalization";
// Keras's MultiHeadAttention over [steps, features] inputs: a query, a value
// and optionally a key (the value's when not given).
inline constexpr const char* kMultiHeadAttention = "multi_head_attention";
// KerasHub's PositionEmbedding: a trainable row per step of a [steps,
// features] input, broadcast over the batch (the input's shape only is read).
inline constexpr const char* kPositionEmbedding = "position_embedding";
// Merges: two or more inputs of one shape (concatenate: equal but for `axis`).
inline constexpr const char* kAdd = "add";
inline constexpr const char* kSubtract = "subtract";
inline constexpr const char* kMultiply = "multiply";
inline constexpr const char* kAverage = "average";
inline constexpr const char* kMaximum = "maximum";
inline constexpr const char* kMinimum = "minimum";
inline constexpr const char* kConcatenate = "concatenate";
// Zeros added around, or elements cut from, the rows and columns of an
// image (2d: rows x columns x channels) or the steps of a sequence (1d:
// steps x channels): LayerSpec::pads.
inline constexpr const char* kZeroPadding1D = "zero_padding1d";
inline constexpr const char* kZeroPadding2D = "zero_padding2d";
inline constexpr const char* kCropping1D = "cropping1d";
inline constexpr const char* kCropping2D = "cropping2d";
}  // namespace layer_kind

// Every kind, the Keras classes read, and whether a kind merges: the layer
// registry's (scheduler/layers/layer.hpp: layerKinds, kerasLayerClasses, isMerge).

// A constant a layer broadcasts against its input (Rescaling's scale,
// Normalization's mean): a scalar (shape {}) or values in `shape`, row-major,
// laid on the input's axes as the layer says (Rescaling: numpy's, on the last
// axes; Normalization: on its kept axes, from the right). No values: not given.
struct BroadcastConstant {
  std::vector<double> values;
  std::vector<std::uint64_t> shape;
  bool given() const { return !values.empty(); }
};

// LayerSpec::inputs: the model's input (the images), not a layer; a model
// with several inputs (Keras's input_layers) reads input k as modelInput(k).
inline constexpr std::size_t kModelInput = ~std::size_t(0);
inline constexpr std::size_t kMaxModelInputs = 1024;
constexpr std::size_t modelInput(std::size_t k) { return kModelInput - k; }
constexpr bool isModelInput(std::size_t j) { return j > kModelInput - kMaxModelInputs; }
constexpr std::size_t modelInputIndex(std::size_t j) { return kModelInput - j; }

// One of a model's inputs: its name and per-example shape (channels last).
struct ModelInput {
  std::string name;
  std::vector<std::uint64_t> shape;
};

struct LayerSpec {
  std::string kind;  // one of layerKinds()
  std::string name;  // "dense", "dense_1", ... (Keras naming when not given)
  // The layers whose outputs this layer reads (indices into the model's
  // layer list, which is in topological order: every input comes earlier),
  // or modelInput(k). One input but for merges. A chain reads the layer before.
  std::vector<std::size_t> inputs;
  // Another call of the layer named so (Keras's shared layer, called more
  // than once): this call uses that layer's weights and state, and their
  // gradients are summed over the calls. "" : the layer owns its weights.
  std::string weightsOf;
  // Initializers other than the layer's default (Keras's GlorotUniform for
  // kernels, Zeros for biases, ...), by weight name ("kernel", "bias",
  // "depthwise_kernel", "gamma", ...).
  std::map<std::string, InitializerSpec> initializers;
  // Regularizers (models/regularizer.hpp), by the weight they penalize
  // ("kernel", "bias", "depthwise_kernel", "gamma", ...), or "activity"
  // (kActivityRegularizer) for the layer's output.
  std::map<std::string, RegularizerSpec> regularizers;
  // Keras's `trainable: false` (a frozen layer, as transfer learning freezes
  // a base model): its weights are kept as non-trainable state, so they get
  // no gradient, no update, no optimizer slots and no regularizer penalty (as
  // Keras 3 counts only trainable weights' penalties); a frozen batch
  // normalization runs in inference mode (its moving statistics, not
  // updated), as Keras has since TF 2.0. Gradients still pass through it to
  // the layers before.
  bool trainable = true;
  // trainable = false, for the layers it wraps too (a frozen Bidirectional's two sides).
  void freeze() {
    trainable = false;
    for (LayerSpec& w : wrapped) w.freeze();
  }
  // The name its weights and state are stored under: weightsOf, else name.
  const std::string& weightsOwner() const { return weightsOf.empty() ? name : weightsOf; }
  // dense: output features; conv2d: filters (depthwise: input channels x
  // depth_multiplier, set by shape inference).
  std::uint32_t units = 0;
  Activation activation = Activation::Linear;  // dense, conv2d, activation; relu, leaky_relu, elu, softmax layers
  ActivationParams activationParams{};         // its constants (defaultParams, or the layer's)
  bool useBias = true;                          // dense, conv2d
  // simple_rnn, lstm: the gates' activation (Keras's recurrent_activation,
  // sigmoid), whether every step's output is returned (else the last), whether
  // the steps run last to first, and whether the forget gate's bias starts at 1.
  Activation recurrentActivation = Activation::Sigmoid;
  ActivationParams recurrentActivationParams = defaultParams(Activation::Sigmoid);
  bool returnSequences = false, goBackwards = false, unitForgetBias = true, resetAfter = true;
  // Under a mask (an Embedding's mask_zero): a masked step's output is zeros
  // (Keras's zero_output_for_mask; a Bidirectional's layers with
  // return_sequences), else the last kept step's.
  bool zeroOutputForMask = false;
  // embedding: Keras's mask_zero (id 0 is padding: the steps it marks are
  // masked in the layers that take a mask).
  bool maskZero = false;
  // masking: Keras's mask_value (a step is masked where every feature equals it).
  double maskValue = 0;
  // bidirectional: the forward layer, then the backward one (recurrent
  // kinds; shapes set by shape inference), and how their outputs merge:
  // concat (on the last axis), sum, mul or ave (Keras's merge_mode).
  std::vector<LayerSpec> wrapped;
  std::string mergeMode = "concat";
  // multi_head_attention (Keras's MultiHeadAttention): num_heads, key_dim,
  // value_dim (key_dim when not given) and use_causal_mask (a call
  // argument); `units` is the output's last axis (output_shape; 0 until
  // shape inference gives the query's), `rate` the attention dropout.
  std::uint32_t heads = 0, keyDim = 0, valueDim = 0;
  bool causalMask = false;
  // einsum_dense (Keras's EinsumDense): the equation ("abc,cde->abde"),
  // Keras's output_shape (per example, without the batch and the axes '...'
  // elides; -1 for None) and bias_axes (useBias false: None).
  std::string equation, biasAxes;
  std::vector<std::int64_t> einsumOutputShape;
  // embedding: the vocabulary (Keras's input_dim: the table's rows; token
  // ids lie in [0, inputDim)); `units` is its output_dim.
  std::uint64_t inputDim = 0;
  // reshape: the per-example target shape (a -1 is resolved by shape inference);
  // embedding and the recurrent layers: {Keras's input_length}, checked against
  // the input; position_embedding: {sequence_length}, likewise.
  std::vector<std::int64_t> targetShape;
  // dropout: the fraction of inputs zeroed in training; masks are drawn on
  // the device from `seed` (the workload seed when the layer gives none), the
  // layer's position and the step.
  double rate = 0;
  std::uint64_t seed = 0;
  bool seeded = false;  // `seed` was given
  // batch_normalization (Keras defaults): moving = moving * momentum + batch * (1 - momentum).
  double momentum = 0.99, epsilon = 1e-3;  // batch_normalization; epsilon also layer_normalization's
  bool center = true, scale = true;
  // conv2d: kernel_size; pooling: pool_size. Rows, columns.
  std::array<std::uint32_t, 2> window{1, 1};
  std::array<std::uint32_t, 2> strides{1, 1};
  std::string padding = "valid";  // conv2d, pooling: valid | same; conv1d family: causal too
  // Convolutions (1-D ones in [1]): the kernel's dilation (Keras's
  // dilation_rate); conv groups; depthwise and separable: channels out per
  // channel in (depth_multiplier); transposed: output_padding, when given.
  std::array<std::uint32_t, 2> dilation{1, 1};
  std::uint32_t groups = 1;
  std::uint32_t depthMultiplier = 1;
  // group_normalization: the groups of channels (Keras's groups; -1, one per
  // channel, until shape inference resolves it).
  std::int64_t channelGroups = 32;
  std::optional<std::array<std::uint32_t, 2>> outputPadding;
  // global pooling: keep the pooled rows and columns as 1x1 (Keras's keepdims).
  bool keepDims = false;
  // zero_padding*, cropping*: rows before and after, columns (1d: steps)
  // before and after.
  std::array<std::uint32_t, 4> pads{0, 0, 0, 0};
  // concatenate: the axis, counted as Keras counts it (with the batch axis
  // 0; -1 the last).
  std::int64_t axis = -1;  // also softmax's axis
  // prelu: the axes sharing one alpha (Keras's shared_axes: 1 the first
  // after the batch); normalization: the axes kept (a mean and variance per
  // position along them; empty: one over everything); layer_normalization:
  // the axes normalized over (the trailing ones). Resolved to 1..rank by
  // shape inference.
  std::vector<std::int64_t> axes{};
  // rescaling: out = in scaleFactor + offset (Keras's scale, offset); normalization: its mean and variance
  // (not given: 0 and 1, and the compile warns), invert: mean + in sqrt(variance).
  BroadcastConstant scaleFactor{}, offset{}, mean{}, variance{};
  bool invert = false;
  // model.layers[i].shard (as Keras's ipu_shard): the IPU of a replica it runs on.
  std::uint32_t shard = 0;
  // model.layers[i].stage (as a Keras layer's pipeline stage): the pipeline
  // stage it belongs to; only with the workload's `pipeline` key, which maps
  // stages to IPUs (pipeline_spec.hpp) and sets `shard` from it.
  std::optional<std::uint32_t> stage;
  // Filled by inferLayerShapes(): the per-example shapes in (the first
  // input's; every input's in inputShapes) and out.
  std::vector<std::uint64_t> inputShape, outputShape;
  std::vector<std::vector<std::uint64_t>> inputShapes;
};

std::uint64_t elementsOf(const std::vector<std::uint64_t>& shape);
std::string shapeText(const std::vector<std::uint64_t>& shape);  // "28x28x1"

}  // namespace ipusim::scheduler
