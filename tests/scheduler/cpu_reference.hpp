#pragma once
// A straightforward CPU trainer for the acceptance tests: plain loops over
// the same model (flatten/reshape, dense with or without bias, conv2d with or
// without bias, the convolution family: grouped, dilated, causal, depthwise,
// separable and transposed convolutions (cpu_reference_conv.hpp), max and
// average pooling (cpu_reference_spatial.hpp),
// every Keras activation (cpu_reference_activations.hpp) and the activation
// layers (relu, leaky_relu, elu, prelu, softmax on any axis), rescaling and
// normalization, up-sampling (1-D, 2-D), permute, dropout with the device's
// masks, merges (add, subtract, multiply, concatenate), global pooling, batch normalization in training (Keras's arithmetic: two-pass batch
// statistics, the full gradient through them, moving averages), softmax cross-entropy from logits or fused with a last softmax)
// and the same optimizer (cpu_reference_optimizer.hpp: every Keras optimizer,
// schedule, clipping rule and weight decay),
// starting from the initial weights the compiled executable holds, fed the
// same batches. Float arithmetic, double accumulators.
#include "cpu_reference_attention.hpp"
#include "cpu_reference_conv.hpp"
#include "cpu_reference_optimizer.hpp"
#include "cpu_reference_recurrent.hpp"
#include "cpu_reference_spatial.hpp"
#include "scheduler/models/workload.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <map>
#include <vector>

namespace ipusim::testing {

class CpuReference {
 public:
  // `weights`: per dense (conv2d) layer its kernel (in x out; HWIO) and, with a bias, the bias (out)
  // (a separable convolution: its depthwise kernel, its pointwise kernel, its bias); per
  // batch normalization layer its gamma (with scale) and beta (with center); in layer order.
  CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights);
  // One training step on a batch; returns the batch mean cross-entropy before the update.
  float step(const std::vector<float>& images, const std::vector<std::int32_t>& labels);
  // Keras's evaluate on a batch: the forward pass as layers run with
  // training=False (dropout and noise pass their input, batch normalization
  // reads its moving statistics and leaves them), the loss and metrics; no
  // gradient, no update. Returns the loss; lastAccuracy() and lastMetrics() are its.
  float evaluate(const std::vector<float>& images, const std::vector<std::int32_t>& labels);
  // The model's outputs on a batch as Keras's predict gives them (inference
  // as evaluate; a softmax the loss fuses applied): the first output's rows.
  std::vector<float> predict(const std::vector<float>& images);
  const std::vector<std::vector<float>>& weights() const { return weights_; }
  // The last step's accuracy: the share of rows whose first largest logit is the label's.
  float lastAccuracy() const { return lastAccuracy_; }
  // The last step's regularization term (the penalties the loss includes).
  float lastRegularization() const { return lastRegularization_; }
  // The last step's metrics (LossSpec::metrics), by name, for the first output.
  const std::map<std::string, float>& lastMetrics() const { return lastMetrics_; }
  // The learning rate of the last step (a schedule's at that step).
  double lastLearningRate() const { return optimizer_->learningRate(); }
  // Per batch normalization layer, in layer order: its moving mean, then its moving variance.
  const std::vector<std::vector<float>>& movingStatistics() const { return moving_; }

 private:
  struct Stage {
    enum Kind { Dense, Conv, Pool, Activation, Dropout, BatchNorm, Merge, Padding, Softmax, PRelu, Constant, ConvFamily, Slice, Gather, LayerNorm, Noise, Embedding, Recurrent, Attention, Positions, MaskOf, Masked } kind;
    std::uint64_t in = 0, out = 0;  // elements per example (Dense: per row)
    // The activations read: 0 the images, s + 1 stage s's output (Merge: every input).
    std::vector<std::size_t> from{};
    std::string merge{};                 // Merge: add | subtract | multiply | concatenate
    std::vector<std::uint64_t> blocks{}; // Merge, concatenate: each input's row length; Slice: {offset, length, row}
    std::uint64_t rows = 0;              // Merge, concatenate: rows of the output
    // Padding: the smaller image (rows, columns, channels), the larger one's
    // rows and columns, where the smaller starts in it, and whether the
    // layer pads (else it crops).
    std::uint64_t smallH = 0, smallW = 0, chans = 0, largeH = 0, largeW = 0, top = 0, left = 0;
    bool pads = false;
    // Gather (up_sampling1d/2d, permute): per output element of one example,
    // the input element it copies; the gradient adds each back to its source.
    std::vector<std::uint64_t> source{};
    std::uint64_t steps = 1;        // Dense: rows per example (Keras's Dense on the last axis of a sequence)
    std::size_t kernel = 0;         // Dense, Conv: index in weights_
    SpatialGeometry geometry{};     // Conv, Pool
    // ConvFamily (cpu_reference_conv.hpp): grouped, dilated, causal,
    // depthwise, either half of a separable, or transposed; its bias's index
    // in weights_ (npos: none).
    ConvGeometry conv{};
    bool transposed = false;
    std::size_t biasAt = ~std::size_t(0);
    bool max = false;               // Pool: max (else average)
    bool bias = false;
    scheduler::Activation activation = scheduler::Activation::Linear;
    scheduler::ActivationParams params{};  // Activation
    std::uint64_t axisLength = 0, inner = 1;  // Softmax: blocks of axisLength x inner normalised along the axis
    std::size_t alpha = 0;                 // PRelu: its weight (index in weights_), one value per `columns` elements
    std::uint64_t columns = 0;
    // Constant: y = x first + second (rescaling), (x - first) / second
    // (normalization), first + x second (inverted); per element of one example.
    enum Affine { ScaleAdd, SubtractDivide, AddScaled } affine = ScaleAdd;
    std::vector<float> first{}, second{};
    float rate = 0;  // Dropout: the rate; Noise: the noise's standard deviation
    std::uint64_t seed = 0;
    bool multiplicative = false;  // Noise: x (1 + rate n), else x + rate n
    bool frozen = false;          // BatchNorm: a frozen layer's (trainable: false), in inference mode in training too
    // BatchNorm: channels (the last axis), Keras's momentum and epsilon, its
    // weights' indices (npos without scale / center), its moving statistics' in moving_.
    // LayerNorm: channels the row length normalized over, epsilon, gamma and
    // beta; a group norm when `groups` (channels then the channels, the last axis).
    std::uint64_t groups = 0;
    std::uint64_t channels = 0;
    // Embedding: the ids (the images, as floats) looked up in weights_[kernel],
    // stored as the compiler stores it, [channels / grain, vocabulary, grain]
    // (Keras's table[v][c grain + j] at (c vocabulary + v) grain + j); channels is output_dim.
    std::uint64_t vocabulary = 0, grain = 0;
    // Recurrent (cpu_reference_recurrent.hpp): weights_[kernel], [kernel + 1]
    // (recurrent), [kernel + 2] (bias, when geometry says so).
    RecurrentGeometry recurrent{};
    std::size_t maskFrom = ~std::size_t(0);  // Recurrent, Pool (masked mean), Attention: the activation of the token ids of Keras's mask (mask_zero)
    // Positions: weights_[kernel] (out elements) is every example's output.
    // MaskOf (Keras's Masking): per row of `columns` values, 1 where one differs
    // from first[0], else 0; Masked: from = {values, mask}, the rows times their mask.
    // Attention (cpu_reference_attention.hpp): from = {query, value, key};
    // its weights from weights_[kernel] on, in AttentionWeights' order.
    AttentionGeometry attention{};
    double momentum = 0, epsilon = 0;
    std::size_t gamma = ~std::size_t(0), beta = ~std::size_t(0), moving = 0;
  };
  // The convolution family's layers (cpu_reference_conv.hpp) but a plain
  // Conv2D (the Conv stage's): their stages pushed, `weight` advanced past
  // their weights; returns the output's activation.
  static bool convFamily(const scheduler::LayerSpec& l);
  // A recurrent layer's stage over activation `act` (`in` elements per
  // example), its weights from `weight` on (advanced past them).
  Stage recurrentStage(const scheduler::LayerSpec& l, std::size_t act, std::uint64_t in, std::size_t& weight,
                       std::size_t maskFrom) const;
  std::size_t addConvFamily(const scheduler::LayerSpec& l, std::size_t act, std::uint64_t in, std::size_t& weight,
                            const std::function<std::size_t(Stage)>& push);
  // Batch normalization's per-channel batch mean and biased variance of `x` (two passes, double).
  void batchStatistics(const Stage& s, const std::vector<float>& x, std::vector<double>& mean,
                       std::vector<double>& variance) const;
  // Padding: the smaller image inside the larger (zeros around), or cut out of it.
  std::vector<float> pad(const Stage& s, const std::vector<float>& small) const;
  std::vector<float> crop(const Stage& s, const std::vector<float>& large) const;
  // Gather: each example's output elements copied from their sources, and the gradient summed back.
  std::vector<float> gather(const Stage& s, const std::vector<float>& x) const;
  std::vector<float> scatterAdd(const Stage& s, const std::vector<float>& grad) const;
  // The sources of a layer that only moves elements (up_sampling1d/2d as
  // Keras repeats them; permute as Keras transposes); false for another kind.
  static bool gatherSources(const scheduler::LayerSpec& l, std::vector<std::uint64_t>& source);
  std::vector<float> mergeForward(const Stage& s, const std::vector<std::vector<float>>& acts) const;
  // Hands each input of merge `s` its gradient.
  void mergeBackward(const Stage& s, const std::vector<std::vector<float>>& acts, const std::vector<float>& grad,
                     const std::function<void(std::size_t, std::vector<float>)>& deliver) const;

  scheduler::Workload w_;
  std::vector<Stage> stages_;
  std::map<std::size_t, RecurrentCache> recurrentCache_;  // per Recurrent stage, the last forward pass's
  std::map<std::size_t, AttentionCache> attentionCache_;  // per Attention stage, likewise
  AttentionWeights attentionWeights(const Stage& s) const;
  std::vector<std::size_t> outputs_;  // the activations holding the model's outputs
  std::vector<std::size_t> outputMasks_;  // per output: the activation of its mask's token ids, or ~0
  std::vector<std::vector<float>> weights_;
  std::optional<CpuOptimizer> optimizer_;
  std::vector<std::vector<float>> moving_;
  std::uint32_t batch_;
  std::uint64_t stepCount_ = 0;
  bool inference_ = false;  // evaluate / predict: layers as with training=False
  std::vector<bool> frozen_;  // per weight: a frozen layer's (no gradient applied, no penalty)
  std::vector<float> lastOutput_;  // the first output's values of the last forward pass
  float lastAccuracy_ = 0;
  // The regularizers: a weight's (its index in weights_) or an activation's
  // (its index in the forward pass's activations), with their factors (an
  // activity penalty's divided by the batch size).
  struct Penalty {
    std::size_t at;
    double l1, l2;
  };
  std::vector<Penalty> weightPenalties_, activityPenalties_;
  float lastRegularization_ = 0;
  std::map<std::string, float> lastMetrics_;
  // A layer's weights in the order the compiler creates them ("kernel", "bias", ...).
  static std::vector<std::string> weightNames(const scheduler::LayerSpec& l);
};

}  // namespace ipusim::testing
