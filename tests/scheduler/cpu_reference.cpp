#include "cpu_reference.hpp"

#include "scheduler/models/embedding_layout.hpp"

#include "cpu_reference_activations.hpp"
#include "cpu_reference_layer_norm.hpp"

#include "model/numeric/dropout_mask.hpp"
#include "model/numeric/gaussian_noise.hpp"
#include "model/numeric/regression_target.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/layers/layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ipusim::testing {
namespace {

// Keras's GlobalAveragePooling1D under a mask (pooling1d.py: inputs *= mask;
// sum over the steps / the mask's sum), the mask ids != 0; and its gradient.
std::vector<float> maskedMeanForward(const std::vector<float>& ids, const std::vector<float>& x, std::uint64_t steps,
                                     std::uint64_t channels) {
  const std::uint64_t batch = ids.size() / steps;
  std::vector<float> y(batch * channels);
  for (std::uint64_t b = 0; b < batch; ++b) {
    double kept = 0;
    for (std::uint64_t t = 0; t < steps; ++t) kept += ids[b * steps + t] != 0.0f;
    for (std::uint64_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (std::uint64_t t = 0; t < steps; ++t)
        if (ids[b * steps + t] != 0.0f) sum += x[(b * steps + t) * channels + c];
      y[b * channels + c] = float(sum / kept);
    }
  }
  return y;
}
std::vector<float> maskedMeanBackward(const std::vector<float>& ids, const std::vector<float>& grad, std::uint64_t steps,
                                      std::uint64_t channels) {
  const std::uint64_t batch = ids.size() / steps;
  std::vector<float> dx(batch * steps * channels, 0.0f);
  for (std::uint64_t b = 0; b < batch; ++b) {
    double kept = 0;
    for (std::uint64_t t = 0; t < steps; ++t) kept += ids[b * steps + t] != 0.0f;
    for (std::uint64_t t = 0; t < steps; ++t)
      if (ids[b * steps + t] != 0.0f)
        for (std::uint64_t c = 0; c < channels; ++c) dx[(b * steps + t) * channels + c] = float(grad[b * channels + c] / kept);
  }
  return dx;
}

using scheduler::Activation;

// Plain relu (no constants): the relu family's defaults.
bool plainRelu(Activation a, const scheduler::ActivationParams& p) {
  return a == Activation::Relu && p.negativeSlope == 0 && p.threshold == 0 && !p.maxValue;
}

float activate(Activation a, const scheduler::ActivationParams& p, float x) {
  if (plainRelu(a, p)) return std::max(x, 0.0f);
  switch (a) {
    case Activation::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::Tanh: return std::tanh(x);
    case Activation::Gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    default: return float(activationValue(a, p, x));  // cpu_reference_activations.cpp
  }
}

// The derivative: relu, sigmoid and tanh from the output, the others from the input.
float derivative(Activation a, const scheduler::ActivationParams& p, float in, float out) {
  if (plainRelu(a, p)) return out > 0 ? 1.0f : 0.0f;
  switch (a) {
    case Activation::Sigmoid: return out * (1.0f - out);
    case Activation::Tanh: return 1.0f - out * out;
    case Activation::Gelu:
      return 0.5f * (1.0f + std::erf(in * 0.70710678118654752f)) + in * 0.39894228040143268f * std::exp(-0.5f * in * in);
    default: return float(activationSlope(a, p, in));
  }
}

}  // namespace

std::vector<float> CpuReference::pad(const Stage& s, const std::vector<float>& small) const {
  std::vector<float> large(batch_ * s.largeH * s.largeW * s.chans, 0.0f);
  for (std::uint64_t b = 0; b < batch_; ++b)
    for (std::uint64_t h = 0; h < s.smallH; ++h)
      for (std::uint64_t w = 0; w < s.smallW; ++w)
        for (std::uint64_t c = 0; c < s.chans; ++c)
          large[((b * s.largeH + h + s.top) * s.largeW + w + s.left) * s.chans + c] =
              small[((b * s.smallH + h) * s.smallW + w) * s.chans + c];
  return large;
}

std::vector<float> CpuReference::crop(const Stage& s, const std::vector<float>& large) const {
  std::vector<float> small(batch_ * s.smallH * s.smallW * s.chans);
  for (std::uint64_t b = 0; b < batch_; ++b)
    for (std::uint64_t h = 0; h < s.smallH; ++h)
      for (std::uint64_t w = 0; w < s.smallW; ++w)
        for (std::uint64_t c = 0; c < s.chans; ++c)
          small[((b * s.smallH + h) * s.smallW + w) * s.chans + c] =
              large[((b * s.largeH + h + s.top) * s.largeW + w + s.left) * s.chans + c];
  return small;
}

std::vector<float> CpuReference::gather(const Stage& s, const std::vector<float>& x) const {
  std::vector<float> y(batch_ * s.out);
  for (std::uint64_t b = 0; b < batch_; ++b)
    for (std::uint64_t e = 0; e < s.out; ++e) y[b * s.out + e] = x[b * s.in + s.source[e]];
  return y;
}

std::vector<float> CpuReference::scatterAdd(const Stage& s, const std::vector<float>& grad) const {
  std::vector<double> sum(batch_ * s.in, 0.0);
  for (std::uint64_t b = 0; b < batch_; ++b)
    for (std::uint64_t e = 0; e < s.out; ++e) sum[b * s.in + s.source[e]] += grad[b * s.out + e];
  return {sum.begin(), sum.end()};
}

bool CpuReference::gatherSources(const scheduler::LayerSpec& l, std::vector<std::uint64_t>& source) {
  const auto& in = l.inputShape;
  if (l.kind == "up_sampling2d") {
    // Keras: ops.repeat(x, size[0], axis=1), then ops.repeat(.., size[1], axis=2).
    const std::uint64_t h = in[0], w = in[1], c = in[2], sh = l.window[0], sw = l.window[1];
    for (std::uint64_t i = 0; i < h * sh; ++i)
      for (std::uint64_t j = 0; j < w * sw; ++j)
        for (std::uint64_t k = 0; k < c; ++k) source.push_back(((i / sh) * w + j / sw) * c + k);
    return true;
  }
  if (l.kind == "up_sampling1d") {  // ops.repeat(x, size, axis=1)
    const std::uint64_t steps = in[0], c = in[1], size = l.window[1];
    for (std::uint64_t t = 0; t < steps * size; ++t)
      for (std::uint64_t k = 0; k < c; ++k) source.push_back((t / size) * c + k);
    return true;
  }
  if (l.kind == "permute") {  // Keras: ops.transpose(x, (0,) + dims), dims counted from 1
    const std::size_t rank = in.size();
    std::vector<std::uint64_t> out(rank), inStride(rank, 1);
    for (std::size_t d = rank - 1; d > 0; --d) inStride[d - 1] = inStride[d] * in[d];
    for (std::size_t d = 0; d < rank; ++d) out[d] = in[std::size_t(l.axes[d] - 1)];
    std::vector<std::uint64_t> index(rank, 0);  // over the output, row-major
    for (std::uint64_t e = 0; e < scheduler::elementsOf(out); ++e) {
      std::uint64_t s = 0;
      for (std::size_t d = 0; d < rank; ++d) s += index[d] * inStride[std::size_t(l.axes[d] - 1)];
      source.push_back(s);
      for (std::size_t d = rank; d-- > 0 && ++index[d] == out[d];) index[d] = 0;
    }
    return true;
  }
  return false;
}

std::vector<float> CpuReference::mergeForward(const Stage& s, const std::vector<std::vector<float>>& acts) const {
  const std::vector<float>& first = acts[s.from[0]];
  if (s.merge == "concatenate") {
    std::vector<float> y;
    y.reserve(batch_ * s.out);
    for (std::uint64_t r = 0; r < s.rows; ++r)
      for (std::size_t i = 0; i < s.from.size(); ++i) {
        const float* row = acts[s.from[i]].data() + r * s.blocks[i];
        y.insert(y.end(), row, row + s.blocks[i]);
      }
    return y;
  }
  std::vector<float> y = first;
  for (std::size_t i = 1; i < s.from.size(); ++i) {
    const std::vector<float>& x = acts[s.from[i]];
    for (std::size_t e = 0; e < y.size(); ++e)
      y[e] = s.merge == "add" ? y[e] + x[e] : s.merge == "subtract" ? y[e] - x[e]
             : s.merge == "maximum" ? std::max(y[e], x[e]) : s.merge == "minimum" ? std::min(y[e], x[e])
             : s.merge == "average" ? y[e] + x[e] : y[e] * x[e];
  }
  if (s.merge == "average")  // Keras: the sum divided by the count
    for (float& v : y) v = float(double(v) / double(s.from.size()));
  return y;
}

void CpuReference::mergeBackward(const Stage& s, const std::vector<std::vector<float>>& acts,
                                 const std::vector<float>& grad,
                                 const std::function<void(std::size_t, std::vector<float>)>& deliver) const {
  std::uint64_t offset = 0, total = 0;
  for (std::uint64_t b : s.blocks) total += b;
  for (std::size_t i = 0; i < s.from.size(); ++i) {
    std::vector<float> g;
    if (s.merge == "concatenate") {
      for (std::uint64_t r = 0; r < s.rows; ++r)
        g.insert(g.end(), grad.begin() + std::ptrdiff_t(r * total + offset),
                 grad.begin() + std::ptrdiff_t(r * total + offset + s.blocks[i]));
      offset += s.blocks[i];
    } else if (s.merge == "add" || (s.merge == "subtract" && i == 0)) {
      g = grad;
    } else if (s.merge == "average") {
      g = grad;
      for (float& v : g) v = float(double(v) / double(s.from.size()));
    } else if (s.merge == "subtract") {
      g = grad;
      for (float& v : g) v = -v;
    } else if (s.merge == "maximum" || s.merge == "minimum") {
      // To the first input holding the extremum of each element.
      g.assign(grad.size(), 0.0f);
      for (std::size_t e = 0; e < g.size(); ++e) {
        std::size_t winner = 0;
        for (std::size_t j = 1; j < s.from.size(); ++j) {
          const float x = acts[s.from[j]][e], best = acts[s.from[winner]][e];
          if (s.merge == "maximum" ? x > best : x < best) winner = j;
        }
        if (winner == i) g[e] = grad[e];
      }
    } else {  // multiply: the gradient times every other input
      g = grad;
      for (std::size_t j = 0; j < s.from.size(); ++j)
        if (j != i)
          for (std::size_t e = 0; e < g.size(); ++e) g[e] *= acts[s.from[j]][e];
    }
    deliver(s.from[i], std::move(g));
  }
}

bool CpuReference::convFamily(const scheduler::LayerSpec& l) {
  namespace k = scheduler::layer_kind;
  const bool plainConv2D = l.kind == k::kConv2D && l.groups == 1 && l.dilation == std::array<std::uint32_t, 2>{1, 1};
  return !plainConv2D && (l.kind == k::kConv2D || l.kind == k::kConv1D || l.kind == k::kDepthwiseConv1D ||
                          l.kind == k::kDepthwiseConv2D || l.kind == k::kSeparableConv1D ||
                          l.kind == k::kSeparableConv2D || l.kind == k::kConv1DTranspose ||
                          l.kind == k::kConv2DTranspose);
}

std::size_t CpuReference::addConvFamily(const scheduler::LayerSpec& l, std::size_t act, std::uint64_t in,
                                        std::size_t& weight, const std::function<std::size_t(Stage)>& push) {
  namespace k = scheduler::layer_kind;
  // The image read: rows x columns x channels, one row for a 1-D layer.
  const bool oneD = l.inputShape.size() == 2;
  const std::uint64_t h = oneD ? 1 : l.inputShape[0], w = l.inputShape[oneD ? 0 : 1], c = l.inputShape.back();
  const std::uint64_t kH = l.window[0], kW = l.window[1];
  Stage s{Stage::ConvFamily, in, scheduler::elementsOf(l.outputShape), {act}};
  s.kernel = weight;
  if (l.kind == k::kConv1DTranspose || l.kind == k::kConv2DTranspose) {
    // The output's size as Keras computes it (here, not the compiler's shape inference).
    auto padding = [&](int d) { return l.outputPadding ? std::int64_t((*l.outputPadding)[d]) : std::int64_t(-1); };
    const std::uint64_t outH = oneD ? 1 : transposedLength(h, kH, l.strides[0], l.dilation[0], l.padding, padding(0));
    const std::uint64_t outW = transposedLength(w, kW, l.strides[1], l.dilation[1], l.padding, padding(1));
    s.transposed = true;
    s.conv = ConvGeometry::transposed(batch_, h, w, c, outH, outW, l.units, kH, kW, l.strides[0], l.strides[1],
                                      l.dilation[0], l.dilation[1], l.padding);
  } else {
    const bool depthwise = l.kind == k::kDepthwiseConv1D || l.kind == k::kDepthwiseConv2D ||
                           l.kind == k::kSeparableConv1D || l.kind == k::kSeparableConv2D;
    const std::uint64_t out = depthwise ? c * l.depthMultiplier : l.units;
    s.conv = ConvGeometry::convolution(batch_, h, w, c, out, kH, kW, l.strides[0], l.strides[1], l.dilation[0],
                                       l.dilation[1], l.padding, depthwise ? c : l.groups);
  }
  if (s.conv.outH * s.conv.outW * (l.kind == k::kSeparableConv1D || l.kind == k::kSeparableConv2D ? l.units : s.conv.outC) !=
      s.out)
    throw std::logic_error("CpuReference: layer " + l.name + ": the output's size differs from the compiler's " +
                           scheduler::shapeText(l.outputShape));
  if (l.kind == k::kSeparableConv1D || l.kind == k::kSeparableConv2D) {
    // The depthwise half, then the pointwise 1x1 convolution with the bias.
    s.out = s.conv.outH * s.conv.outW * s.conv.outC;
    const std::size_t depthwiseAct = push(s);
    Stage p{Stage::ConvFamily, s.out, scheduler::elementsOf(l.outputShape), {depthwiseAct}};
    p.kernel = weight + 1;
    p.conv = ConvGeometry::convolution(batch_, s.conv.outH, s.conv.outW, s.conv.outC, l.units, 1, 1, 1, 1, 1, 1,
                                       "valid", 1);
    if (l.useBias) p.biasAt = weight + 2;
    weight += l.useBias ? 3 : 2;
    return push(p);
  }
  if (l.useBias) s.biasAt = weight + 1;
  weight += l.useBias ? 2 : 1;
  return push(s);
}

CpuReference::Stage CpuReference::recurrentStage(const scheduler::LayerSpec& l, std::size_t act, std::uint64_t in,
                                                 std::size_t& weight, std::size_t maskFrom) const {
  namespace k = scheduler::layer_kind;
  Stage s{Stage::Recurrent, in, scheduler::elementsOf(l.outputShape), {act}};
  s.kernel = weight;
  weight += l.useBias ? 3 : 2;
  RecurrentGeometry& g = s.recurrent;
  g.batch = batch_, g.steps = l.inputShape[0], g.features = l.inputShape[1], g.units = l.units;
  g.lstm = l.kind == k::kLstm, g.gru = l.kind == k::kGru, g.resetAfter = l.resetAfter;
  g.returnSequences = l.returnSequences, g.goBackwards = l.goBackwards, g.bias = l.useBias;
  g.activation = l.activation, g.params = l.activationParams;
  g.recurrentActivation = l.recurrentActivation, g.recurrentParams = l.recurrentActivationParams;
  g.zeroOutputForMask = l.zeroOutputForMask;
  s.maskFrom = maskFrom;
  return s;
}

AttentionWeights CpuReference::attentionWeights(const Stage& s) const {
  AttentionWeights w;
  for (std::size_t n = 0; n < (s.attention.bias ? 8u : 4u); ++n) w.push_back(&weights_[s.kernel + n]);
  return w;
}

std::vector<std::string> CpuReference::weightNames(const scheduler::LayerSpec& l) {
  namespace k = scheduler::layer_kind;
  if (l.kind == k::kSeparableConv1D || l.kind == k::kSeparableConv2D) {
    if (l.useBias) return {"depthwise_kernel", "pointwise_kernel", "bias"};
    return {"depthwise_kernel", "pointwise_kernel"};
  }
  if (l.kind == k::kBatchNormalization || l.kind == k::kLayerNormalization || l.kind == k::kGroupNormalization) {
    std::vector<std::string> names;
    if (l.scale) names.push_back("gamma");
    if (l.center) names.push_back("beta");
    return names;
  }
  if (l.kind == k::kPRelu) return {"alpha"};
  if (l.kind == k::kPositionEmbedding) return {"embeddings"};
  if (l.kind == k::kMultiHeadAttention) {
    std::vector<std::string> names;
    for (const char* part : {"query", "key", "value", "output"}) {
      names.push_back(std::string(part) + "_kernel");
      if (l.useBias) names.push_back(std::string(part) + "_bias");
    }
    return names;
  }
  if (l.kind == k::kEmbedding) return {"embeddings"};
  if (l.kind == k::kSimpleRnn || l.kind == k::kLstm || l.kind == k::kGru) {
    if (l.useBias) return {"kernel", "recurrent_kernel", "bias"};
    return {"kernel", "recurrent_kernel"};
  }
  if (l.kind == k::kBidirectional) {
    std::vector<std::string> names;
    for (std::size_t side = 0; side < 2; ++side)
      for (const std::string& n : weightNames(l.wrapped[side])) names.push_back((side ? "backward/" : "forward/") + n);
    return names;
  }
  if (l.kind == k::kDense || l.kind == k::kEinsumDense || l.kind == k::kConv2D || convFamily(l)) {
    if (l.useBias) return {"kernel", "bias"};
    return {"kernel"};
  }
  return {};
}

CpuReference::CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights)
    : w_(w), weights_(std::move(weights)), batch_(w.dataset.batchSize), frozen_(weights_.size(), false) {
  namespace k = scheduler::layer_kind;
  std::size_t weight = 0;
  // Per layer, the activation holding its output (0: the images).
  std::vector<std::size_t> actOf(w.layers.size(), 0);
  std::vector<std::uint64_t> sizeOf{w.dataset.features};  // per activation: elements per example
  auto push = [&](Stage s) {
    stages_.push_back(std::move(s));
    sizeOf.push_back(stages_.back().out * stages_.back().steps);
    return stages_.size();
  };
  // A model with several inputs: each input's columns of the images (the tuple the host streams).
  std::vector<std::size_t> inputAct{0};
  if (w.inputs.size() > 1) {
    inputAct.clear();
    std::uint64_t offset = 0;
    for (const scheduler::ModelInput& input : w.inputs) {
      const std::uint64_t n = scheduler::elementsOf(input.shape);
      Stage s{Stage::Slice, w.dataset.features, n, {0}};
      s.blocks = {offset, n, w.dataset.features};
      inputAct.push_back(push(s));
      offset += n;
    }
  }
  const std::vector<std::size_t> outputs = scheduler::modelOutputs(w);
  // A shared layer's later calls use its first call's weights and moving statistics.
  std::map<std::string, std::pair<std::size_t, std::size_t>> weightsOfOwner;  // owner -> (weight, moving)
  // Keras's masks (an Embedding's mask_zero): per activation, the activation
  // of the token ids that mask it, as Keras carries a mask from layer to layer.
  std::map<std::size_t, std::size_t> idsMasking;
  auto maskOf = [&](std::size_t a) {
    const auto it = idsMasking.find(a);
    return it == idsMasking.end() ? ~std::size_t(0) : it->second;
  };
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const auto& l = w.layers[i];
    const std::size_t ownWeight = weight, ownMoving = moving_.size();
    const auto owner = weightsOfOwner.find(l.weightsOwner());
    const bool sharing = owner != weightsOfOwner.end();
    if (sharing) weight = owner->second.first;
    else weightsOfOwner[l.weightsOwner()] = {weight, ownMoving};
    std::vector<std::size_t> from;
    for (std::size_t j : l.inputs.empty() ? std::vector<std::size_t>{i ? i - 1 : scheduler::kModelInput} : l.inputs)
      from.push_back(scheduler::isModelInput(j) ? inputAct.at(scheduler::modelInputIndex(j)) : actOf[j]);
    std::size_t act = from[0];
    const std::uint64_t in = sizeOf[act];
    std::size_t ownMask = ~std::size_t(0);  // a Masking layer's mask (1 kept, 0 masked per step)
    // The last softmax is the categorical cross-entropy's, the last sigmoid
    // the binary cross-entropy's (fused into the loss); any other softmax is
    // over the last axis of the layer's output.
    const bool last = std::find(outputs.begin(), outputs.end(), i) != outputs.end();
    const bool fusedSoftmax = last && (w.loss.type == "sparse_categorical_crossentropy" || w.loss.type == "categorical_crossentropy");
    const bool fusedSigmoid = last && w.loss.type == "binary_crossentropy";
    auto activation = [&](Activation a) {
      if (a == Activation::Linear || (fusedSoftmax && a == Activation::Softmax) || (fusedSigmoid && a == Activation::Sigmoid))
        return;
      if (a == Activation::Softmax) {
        Stage s{Stage::Softmax, sizeOf[act], sizeOf[act], {act}};
        s.axisLength = l.outputShape.back();
        act = push(s);
        return;
      }
      Stage s{Stage::Activation, sizeOf[act], sizeOf[act], {act}};
      s.activation = a;
      s.params = l.activationParams;
      act = push(s);
    };
    if (scheduler::isMerge(l.kind)) {
      Stage s{Stage::Merge, in, scheduler::elementsOf(l.outputShape), from};
      s.merge = l.kind;
      if (l.kind == k::kConcatenate) {
        s.rows = batch_;
        for (std::size_t d = 0; d + 1 < std::size_t(l.axis); ++d) s.rows *= l.outputShape[d];
        for (std::size_t f : from) s.blocks.push_back(sizeOf[f] * batch_ / s.rows);
      }
      act = push(s);
    } else if (l.kind == k::kZeroPadding1D || l.kind == k::kZeroPadding2D || l.kind == k::kCropping1D ||
               l.kind == k::kCropping2D) {
      Stage s{Stage::Padding, in, scheduler::elementsOf(l.outputShape), {act}};
      s.pads = l.kind == k::kZeroPadding1D || l.kind == k::kZeroPadding2D;
      const auto& small = s.pads ? l.inputShape : l.outputShape;
      const auto& large = s.pads ? l.outputShape : l.inputShape;
      const bool two = small.size() == 3;
      s.smallH = two ? small[0] : 1, s.smallW = small[two ? 1 : 0], s.chans = small.back();
      s.largeH = two ? large[0] : 1, s.largeW = large[two ? 1 : 0];
      s.top = l.pads[0], s.left = l.pads[2];
      act = push(s);
    } else if (std::vector<std::uint64_t> source; gatherSources(l, source)) {
      Stage s{Stage::Gather, in, scheduler::elementsOf(l.outputShape), {act}};
      if (source.size() != s.out) throw std::logic_error("CpuReference: layer " + l.name + ": output size");
      s.source = std::move(source);
      act = push(s);
    } else if (l.kind == k::kDense) {
      // Keras's Dense on the last axis: every row of it a row of the product.
      Stage s{Stage::Dense, l.inputShape.back(), l.units, {act}};
      s.steps = in / l.inputShape.back();
      s.kernel = weight;
      s.bias = l.useBias;
      weight += l.useBias ? 2 : 1;
      act = push(s);
      activation(l.activation);
    } else if (l.kind == k::kEinsumDense) {
      // Keras's einsum, read from the equation's letters again: the input
      // axes the kernel names are summed over (the product's inner size),
      // the others are rows; the kernel's letters not in the input are the
      // output's new axes (layers the compiler takes are [free, contracted]
      // . [contracted, new]).
      const std::string& eq = l.equation;
      std::string input = eq.substr(0, eq.find(',')), kernelSpec = eq.substr(eq.find(',') + 1, eq.find("->") - eq.find(',') - 1);
      if (input.rfind("...", 0) == 0) input = input.substr(3);
      std::vector<std::uint64_t> full{batch_};
      full.insert(full.end(), l.inputShape.begin(), l.inputShape.end());
      std::uint64_t inner = 1;
      for (std::size_t a = 0; a < input.size(); ++a)
        if (kernelSpec.find(input[a]) != std::string::npos) inner *= full[full.size() - input.size() + a];
      Stage s{Stage::Dense, inner, scheduler::elementsOf(l.outputShape) / (in / inner), {act}};
      s.steps = in / inner;
      s.kernel = weight;
      s.bias = l.useBias;
      weight += l.useBias ? 2 : 1;
      act = push(s);
      activation(l.activation);
    } else if (convFamily(l)) {
      act = addConvFamily(l, act, in, weight, push);
      activation(l.activation);
    } else if (l.kind == k::kConv2D || l.kind == k::kMaxPooling2D || l.kind == k::kAveragePooling2D ||
               l.kind == k::kGlobalAveragePooling2D || l.kind == k::kGlobalMaxPooling2D || l.kind == k::kMaxPooling1D ||
               l.kind == k::kAveragePooling1D || l.kind == k::kGlobalAveragePooling1D || l.kind == k::kGlobalMaxPooling1D) {
      const bool conv = l.kind == k::kConv2D;
      // height, width, channels (a steps x channels input: one row)
      std::vector<std::uint64_t> s3 = l.inputShape;
      if (s3.size() == 2) s3.insert(s3.begin(), 1);
      Stage s{conv ? Stage::Conv : Stage::Pool, in, scheduler::elementsOf(l.outputShape), {act}};
      s.geometry = SpatialGeometry::of(batch_, s3[0], s3[1], s3[2], conv ? l.units : s3[2], scheduler::windowOf(l));
      s.max = l.kind == k::kMaxPooling2D || l.kind == k::kGlobalMaxPooling2D || l.kind == k::kMaxPooling1D ||
              l.kind == k::kGlobalMaxPooling1D;
      if (conv) {
        s.kernel = weight;
        s.bias = l.useBias;
        weight += l.useBias ? 2 : 1;
      }
      if (l.kind == k::kGlobalAveragePooling1D) s.maskFrom = maskOf(act);  // Keras's masked mean
      act = push(s);
      if (conv) activation(l.activation);
    } else if (l.kind == k::kActivation || l.kind == k::kRelu || l.kind == k::kLeakyRelu || l.kind == k::kElu) {
      activation(l.activation);
    } else if (l.kind == k::kSoftmax) {
      if (std::size_t(l.axis) == l.outputShape.size()) {
        activation(Activation::Softmax);
      } else {
        Stage s{Stage::Softmax, in, in, {act}};
        s.axisLength = l.outputShape[std::size_t(l.axis) - 1];
        for (std::size_t d = std::size_t(l.axis); d < l.outputShape.size(); ++d) s.inner *= l.outputShape[d];
        act = push(s);
      }
    } else if (l.kind == k::kPositionEmbedding) {
      Stage s{Stage::Positions, in, scheduler::elementsOf(l.outputShape), {act}};
      s.kernel = weight++;
      act = push(s);
    } else if (l.kind == k::kMultiHeadAttention) {
      Stage s{Stage::Attention, in, scheduler::elementsOf(l.outputShape), {from[0], from[1], from.size() > 2 ? from[2] : from[1]}};
      s.kernel = weight;
      weight += l.useBias ? 8 : 4;
      AttentionGeometry& g = s.attention;
      const auto& key = l.inputShapes.size() > 2 ? l.inputShapes[2] : l.inputShapes[1];
      g.batch = batch_, g.querySteps = l.inputShapes[0][0], g.valueSteps = l.inputShapes[1][0];
      g.queryFeatures = l.inputShapes[0][1], g.valueFeatures = l.inputShapes[1][1], g.keyFeatures = key[1];
      g.heads = l.heads, g.keyDim = l.keyDim, g.valueDim = l.valueDim, g.units = l.units;
      g.bias = l.useBias, g.causal = l.causalMask;
      // Keras's masks: the query's; the value's or key's (all the same ids).
      const std::size_t queryMask = maskOf(from[0]), valueMask = std::min(maskOf(from[1]), from.size() > 2 ? maskOf(from[2]) : ~std::size_t(0));
      g.queryMasked = queryMask != ~std::size_t(0), g.valueMasked = valueMask != ~std::size_t(0);
      s.maskFrom = std::min(queryMask, valueMask);
      g.dropout = float(l.rate), g.seed = scheduler::dropoutSeed(w, i);
      act = push(s);
    } else if (l.kind == k::kEmbedding) {
      Stage s{Stage::Embedding, in, scheduler::elementsOf(l.outputShape), {act}};
      s.kernel = weight++;
      s.channels = l.units;
      s.vocabulary = l.inputDim;
      s.grain = scheduler::embeddingColumnGrain(l.units);
      act = push(s);
    } else if (l.kind == k::kSimpleRnn || l.kind == k::kLstm || l.kind == k::kGru) {
      act = push(recurrentStage(l, act, in, weight, maskOf(from[0])));
    } else if (l.kind == k::kBidirectional) {
      // Both layers over the input, the backward one's steps put back in time
      // order (a Gather), then merged as a merge layer would.
      std::size_t sides[2];
      for (std::size_t k = 0; k < 2; ++k) sides[k] = push(recurrentStage(l.wrapped[k], act, in, weight, maskOf(from[0])));
      const std::uint64_t T = l.inputShape[0], units = l.wrapped[1].units;
      const bool sequences = l.wrapped[0].returnSequences;
      if (sequences) {
        Stage r{Stage::Gather, sizeOf[sides[1]], sizeOf[sides[1]], {sides[1]}};
        for (std::uint64_t t = 0; t < T; ++t)
          for (std::uint64_t u = 0; u < units; ++u) r.source.push_back((T - 1 - t) * units + u);
        sides[1] = push(r);
      }
      Stage m{Stage::Merge, sizeOf[sides[0]], scheduler::elementsOf(l.outputShape), {sides[0], sides[1]}};
      m.merge = l.mergeMode == "concat" ? "concatenate" : l.mergeMode == "sum" ? "add" : l.mergeMode == "mul" ? "multiply" : "average";
      if (l.mergeMode == "concat") {
        m.rows = batch_ * (sequences ? T : 1);
        m.blocks = {l.wrapped[0].units, units};
      }
      act = push(m);
    } else if (l.kind == k::kPRelu) {
      Stage s{Stage::PRelu, in, in, {act}};
      s.alpha = weight++;
      s.columns = 1;
      for (std::size_t d = 0; d < l.inputShape.size(); ++d)
        if (std::find(l.axes.begin(), l.axes.end(), std::int64_t(d + 1)) == l.axes.end()) s.columns *= l.inputShape[d];
      act = push(s);
    } else if (l.kind == k::kRescaling) {
      Stage s{Stage::Constant, in, in, {act}};
      for (double v : constantPerElement(l.scaleFactor, numpyAxes(l.scaleFactor, l.inputShape.size()), l.inputShape))
        s.first.push_back(float(v));
      for (double v : constantPerElement(l.offset, numpyAxes(l.offset, l.inputShape.size()), l.inputShape))
        s.second.push_back(float(v));
      act = push(s);
    } else if (l.kind == k::kNormalization) {
      // Keras: (x - mean) / max(sqrt(variance), 1e-7) in float32; without a
      // mean and variance, its initial 0 and 1.
      Stage s{Stage::Constant, in, in, {act}};
      s.affine = l.invert ? Stage::AddScaled : Stage::SubtractDivide;
      std::vector<double> mean(in, 0.0), variance(in, 1.0);
      if (l.mean.given()) {
        mean = constantPerElement(l.mean, keptAxesFromTheRight(l.mean, l.axes), l.inputShape);
        variance = constantPerElement(l.variance, keptAxesFromTheRight(l.variance, l.axes), l.inputShape);
      }
      for (std::size_t e = 0; e < in; ++e) {
        s.first.push_back(float(mean[e]));
        s.second.push_back(std::max(std::sqrt(float(variance[e])), 1e-7f));
      }
      act = push(s);
    } else if (l.kind == k::kMasking) {
      // Keras's Masking: a step is kept where any feature differs from
      // mask_value, and zeroed where masked.
      const std::uint64_t features = l.inputShape.at(1);
      Stage mask{Stage::MaskOf, in, in / features, {act}};
      mask.columns = features;
      mask.first = {float(l.maskValue)};  // (the reference is float32 Keras)
      ownMask = push(mask);
      Stage s{Stage::Masked, in, in, {act, ownMask}};
      s.columns = features;
      act = push(s);
    } else if (l.kind == k::kDropout && l.rate > 0) {
      Stage s{Stage::Dropout, in, in, {act}};
      s.rate = float(l.rate);
      s.seed = scheduler::dropoutSeed(w, i);
      act = push(s);
    } else if ((l.kind == k::kGaussianNoise || l.kind == k::kGaussianDropout) && l.rate > 0) {
      // Keras's GaussianNoise (x + stddev n) and GaussianDropout (x (1 + sqrt(rate / (1 - rate)) n)).
      Stage s{Stage::Noise, in, in, {act}};
      s.multiplicative = l.kind == k::kGaussianDropout;
      s.rate = float(s.multiplicative ? std::sqrt(l.rate / (1.0 - l.rate)) : l.rate);
      s.seed = scheduler::dropoutSeed(w, i);
      act = push(s);
    } else if (l.kind == k::kBatchNormalization) {
      Stage s{Stage::BatchNorm, in, in, {act}};
      s.channels = l.outputShape.back();
      s.momentum = l.momentum, s.epsilon = l.epsilon;
      s.frozen = !l.trainable;
      if (l.scale) s.gamma = weight++;
      if (l.center) s.beta = weight++;
      s.moving = sharing ? owner->second.second : moving_.size();
      if (!sharing) {
        moving_.push_back(std::vector<float>(s.channels, 0.0f));  // Keras: moving_mean zeros
        moving_.push_back(std::vector<float>(s.channels, 1.0f));  //        moving_variance ones
      }
      act = push(s);
    } else if (l.kind == k::kGroupNormalization) {
      Stage s{Stage::LayerNorm, in, in, {act}};
      s.channels = l.inputShape.back();
      s.groups = std::uint64_t(l.channelGroups);
      s.epsilon = l.epsilon;
      if (l.scale) s.gamma = weight++;
      if (l.center) s.beta = weight++;
      act = push(s);
    } else if (l.kind == k::kLayerNormalization) {
      Stage s{Stage::LayerNorm, in, in, {act}};
      s.channels = 1;
      for (std::int64_t a : l.axes) s.channels *= l.inputShape[std::size_t(a - 1)];
      s.epsilon = l.epsilon;
      if (l.scale) s.gamma = weight++;
      if (l.center) s.beta = weight++;
      act = push(s);
    } else if (l.kind != k::kFlatten && l.kind != k::kReshape && l.kind != k::kDropout && l.kind != k::kGaussianNoise &&
               l.kind != k::kGaussianDropout) {
      throw std::invalid_argument("CpuReference: no model of " + l.kind);
    }
    // Regularizers (Keras's L1/L2): the layer's own weights in the order it
    // creates them, and its output (each call's, the penalty over the batch).
    if (!sharing) {
      const std::vector<std::string> names = weightNames(l);
      if (names.size() != weight - ownWeight) throw std::logic_error("CpuReference: layer " + l.name + ": weights");
      for (std::size_t n = ownWeight; n < weight && !l.trainable; ++n) frozen_.at(n) = true;
      for (std::size_t n = 0; n < names.size() && l.trainable; ++n)
        if (const auto r = l.regularizers.find(names[n]); r != l.regularizers.end())
          weightPenalties_.push_back({ownWeight + n, r->second.l1, r->second.l2});
    }
    if (const auto r = l.regularizers.find(scheduler::kActivityRegularizer); r != l.regularizers.end())
      activityPenalties_.push_back({act, r->second.l1 / double(batch_), r->second.l2 / double(batch_)});
    if (sharing) weight = ownWeight;
    actOf[i] = act;
    // The output's mask: the Embedding's (ids != 0), or carried by the layers
    // that support masking (Dense, Dropout, Activation, LayerNormalization, the
    // merges) and by a recurrent layer's returned sequence.
    std::size_t inputMask = ~std::size_t(0);
    for (std::size_t a : from) inputMask = std::min(inputMask, maskOf(a));
    const bool carries = l.kind == k::kDense || l.kind == k::kDropout || l.kind == k::kActivation ||
                         l.kind == k::kLayerNormalization || l.kind == k::kAdd || l.kind == k::kSubtract ||
                         l.kind == k::kMultiply || l.kind == k::kAverage || l.kind == k::kMaximum || l.kind == k::kMinimum ||
                         ((l.kind == k::kSimpleRnn || l.kind == k::kLstm || l.kind == k::kGru ||
                           l.kind == k::kBidirectional) && l.returnSequences);
    if (l.kind == k::kEmbedding && l.maskZero) idsMasking[act] = from[0];
    else if (ownMask != ~std::size_t(0)) idsMasking[act] = ownMask;
    else if (l.kind == k::kMultiHeadAttention && maskOf(from[0]) != ~std::size_t(0)) idsMasking[act] = maskOf(from[0]);
    else if (carries && inputMask != ~std::size_t(0)) idsMasking[act] = inputMask;
  }
  for (std::size_t o : outputs) outputs_.push_back(actOf[o]), outputMasks_.push_back(maskOf(actOf[o]));
  if (weight != weights_.size()) throw std::invalid_argument("CpuReference: weights do not match the layers");
  optimizer_.emplace(w.optimizer, weights_);
}

void CpuReference::batchStatistics(const Stage& s, const std::vector<float>& x, std::vector<double>& mean,
                                   std::vector<double>& variance) const {
  const std::size_t C = s.channels, M = x.size() / C;
  mean.assign(C, 0.0);
  variance.assign(C, 0.0);
  for (std::size_t e = 0; e < x.size(); ++e) mean[e % C] += x[e];
  for (double& m : mean) m /= double(M);
  for (std::size_t e = 0; e < x.size(); ++e) variance[e % C] += (x[e] - mean[e % C]) * (x[e] - mean[e % C]);
  for (double& v : variance) v /= double(M);
}

float CpuReference::evaluate(const std::vector<float>& images, const std::vector<std::int32_t>& labels) {
  inference_ = true;
  const float loss = step(images, labels);
  inference_ = false;
  return loss;
}

std::vector<float> CpuReference::predict(const std::vector<float>& images) {
  const std::vector<std::int32_t> labels(batch_ * w_.dataset.labelSteps, 0);
  evaluate(images, labels);
  std::vector<float> out = lastOutput_;
  // A softmax (sigmoid) the loss fuses, the output layer's activation under
  // a categorical (binary) cross-entropy, is the prediction's own.
  const std::string& loss = w_.loss.type;
  if ((loss == "sparse_categorical_crossentropy" || loss == "categorical_crossentropy") && !w_.loss.fromLogits)
    out = softmaxForward(out, w_.dataset.classes, 1);
  if (loss == "binary_crossentropy" && !w_.loss.fromLogits)
    for (float& z : out) z = activate(Activation::Sigmoid, {}, z);
  return out;
}

float CpuReference::step(const std::vector<float>& images, const std::vector<std::int32_t>& labels) {
  if (!inference_) ++stepCount_;
  const std::size_t B = batch_, S = stages_.size();
  // Forward: acts[0] = input, acts[i+1] = output of stage i.
  std::vector<std::vector<float>> acts{images};
  for (std::size_t i = 0; i < S; ++i) {
    const Stage& s = stages_[i];
    const std::vector<float>& x = acts[s.from[0]];
    std::vector<float> y(B * s.steps * s.out);
    if (s.kind == Stage::Merge) {
      y = mergeForward(s, acts);
    } else if (s.kind == Stage::Slice) {
      for (std::size_t r = 0; r < B; ++r)
        for (std::size_t e = 0; e < s.blocks[1]; ++e) y[r * s.out + e] = x[r * s.blocks[2] + s.blocks[0] + e];
    } else if (s.kind == Stage::Padding) {
      y = s.pads ? pad(s, x) : crop(s, x);
    } else if (s.kind == Stage::Gather) {
      y = gather(s, x);
    } else if (s.kind == Stage::ConvFamily) {
      const std::vector<float> bias = s.biasAt == ~std::size_t(0) ? std::vector<float>{} : weights_[s.biasAt];
      y = s.transposed ? transposedConvForward(s.conv, x, weights_[s.kernel], bias)
                       : groupedConvForward(s.conv, x, weights_[s.kernel], bias);
    } else if (s.kind == Stage::Conv) {
      y = conv2dForward(s.geometry, x, weights_[s.kernel], s.bias ? weights_[s.kernel + 1] : std::vector<float>{});
    } else if (s.kind == Stage::Pool && s.maskFrom != ~std::size_t(0)) {
      y = maskedMeanForward(acts[s.maskFrom], x, s.geometry.inW, s.geometry.inC);
    } else if (s.kind == Stage::Pool) {
      y = pool2dForward(s.geometry, s.max, x);
    } else if (s.kind == Stage::Dense) {
      const auto& W = weights_[s.kernel];
      for (std::size_t r = 0; r < B * s.steps; ++r)
        for (std::size_t c = 0; c < s.out; ++c) {
          double sum = 0;
          for (std::size_t k = 0; k < s.in; ++k) sum += double(x[r * s.in + k]) * W[k * s.out + c];
          y[r * s.out + c] = float(sum) + (s.bias ? weights_[s.kernel + 1][c] : 0.0f);
        }
    } else if (s.kind == Stage::BatchNorm && (inference_ || s.frozen)) {
      // Keras's BatchNormalization.call with training=False: the moving statistics.
      const std::size_t C = s.channels;
      for (std::size_t e = 0; e < y.size(); ++e) {
        const std::size_t c = e % C;
        const double gamma = s.gamma == ~std::size_t(0) ? 1.0 : weights_[s.gamma][c];
        const double beta = s.beta == ~std::size_t(0) ? 0.0 : weights_[s.beta][c];
        y[e] = float((x[e] - moving_[s.moving][c]) / std::sqrt(double(moving_[s.moving + 1][c]) + s.epsilon) * gamma + beta);
      }
    } else if (s.kind == Stage::BatchNorm) {
      // Keras's BatchNormalization.call in training: ops.moments over every
      // axis but the channels, the moving averages updated with the batch's
      // (biased) variance, ops.batch_normalization.
      std::vector<double> mean, variance;
      batchStatistics(s, x, mean, variance);
      const std::size_t C = s.channels;
      for (std::size_t e = 0; e < y.size(); ++e) {
        const std::size_t c = e % C;
        const double gamma = s.gamma == ~std::size_t(0) ? 1.0 : weights_[s.gamma][c];
        const double beta = s.beta == ~std::size_t(0) ? 0.0 : weights_[s.beta][c];
        y[e] = float((x[e] - mean[c]) / std::sqrt(variance[c] + s.epsilon) * gamma + beta);
      }
      for (std::size_t c = 0; c < C; ++c) {
        moving_[s.moving][c] = float(moving_[s.moving][c] * s.momentum + mean[c] * (1.0 - s.momentum));
        moving_[s.moving + 1][c] = float(moving_[s.moving + 1][c] * s.momentum + variance[c] * (1.0 - s.momentum));
      }
    } else if ((s.kind == Stage::Noise || s.kind == Stage::Dropout) && inference_) {
      y = x;  // training=False: the input passes
    } else if (s.kind == Stage::Noise) {
      for (std::size_t e = 0; e < y.size(); ++e) {
        const float noise = s.rate * numeric::standardNormal(s.seed, stepCount_, e);
        y[e] = s.multiplicative ? x[e] * (1.0f + noise) : x[e] + noise;
      }
    } else if (s.kind == Stage::LayerNorm) {
      const std::vector<float> none;
      const std::vector<float>& gamma = s.gamma == ~std::size_t(0) ? none : weights_[s.gamma];
      const std::vector<float>& beta = s.beta == ~std::size_t(0) ? none : weights_[s.beta];
      y = s.groups ? groupNormForward(x, s.in / s.channels, s.channels, s.groups, s.epsilon, gamma, beta)
                   : layerNormForward(x, s.channels, s.epsilon, gamma, beta);
    } else if (s.kind == Stage::Activation) {
      for (std::size_t e = 0; e < y.size(); ++e) y[e] = activate(s.activation, s.params, x[e]);
    } else if (s.kind == Stage::Softmax) {
      y = softmaxForward(x, s.axisLength, s.inner);
    } else if (s.kind == Stage::Recurrent) {
      const std::vector<float> none;
      recurrentCache_[i].ids = s.maskFrom == ~std::size_t(0) ? none : acts[s.maskFrom];
      y = recurrentForward(s.recurrent, x, weights_[s.kernel], weights_[s.kernel + 1],
                           s.recurrent.bias ? weights_[s.kernel + 2] : none, recurrentCache_[i]);
    } else if (s.kind == Stage::Positions) {
      for (std::size_t e = 0; e < y.size(); ++e) y[e] = weights_[s.kernel][e % s.out];
    } else if (s.kind == Stage::MaskOf) {
      for (std::size_t r = 0; r < y.size(); ++r) {
        bool kept = false;
        for (std::size_t c = 0; c < s.columns; ++c) kept = kept || x[r * s.columns + c] != s.first[0];
        y[r] = kept ? 1.0f : 0.0f;
      }
    } else if (s.kind == Stage::Masked) {
      for (std::size_t e = 0; e < y.size(); ++e) y[e] = x[e] * acts[s.from[1]][e / s.columns];
    } else if (s.kind == Stage::Attention) {
      const std::vector<float> none;
      y = attentionForward(s.attention, acts[s.from[0]], acts[s.from[1]], acts[s.from[2]], attentionWeights(s), stepCount_,
                           s.maskFrom == ~std::size_t(0) ? none : acts[s.maskFrom], attentionCache_[i]);
    } else if (s.kind == Stage::Embedding) {
      const std::vector<float>& table = weights_[s.kernel];
      for (std::size_t t = 0; t < B * s.in; ++t) {
        const auto id = std::size_t(x[t]);
        for (std::size_t e = 0; e < s.channels; ++e)
          y[t * s.channels + e] = table[((e / s.grain) * s.vocabulary + id) * s.grain + e % s.grain];
      }
    } else if (s.kind == Stage::PRelu) {  // Keras: relu(x) - alpha relu(-x)
      const std::vector<float>& alpha = weights_[s.alpha];
      for (std::size_t e = 0; e < y.size(); ++e) y[e] = std::max(x[e], 0.0f) - alpha[e % s.columns] * std::max(-x[e], 0.0f);
    } else if (s.kind == Stage::Constant) {
      for (std::size_t e = 0; e < y.size(); ++e) {
        const float a = s.first[e % s.in], b = s.second[e % s.in];
        y[e] = s.affine == Stage::ScaleAdd ? x[e] * a + b : s.affine == Stage::SubtractDivide ? (x[e] - a) / b : a + x[e] * b;
      }
    } else {
      const float scale = 1.0f / (1.0f - s.rate);
      for (std::size_t e = 0; e < y.size(); ++e)
        y[e] = numeric::dropoutKeeps(s.seed, stepCount_, e, s.rate) ? x[e] * scale : 0.0f;
    }
    acts.push_back(std::move(y));
  }
  // The loss and its gradient w.r.t. each output (its logits): the sum of
  // the outputs' losses, the first output's accuracy.
  // Rows of the loss: one per example, or one per step (a class per step: DatasetSpec::labelSteps).
  const std::size_t R = B * w_.dataset.labelSteps;
  const std::size_t C = w_.loss.classIndexLabels() ? w_.dataset.classes : w_.loss.targetWidth(w_.dataset.classes);
  const std::string& lossType = w_.loss.type;
  // The target of class c for label `label`: one-hot, or the label itself
  // (a binary classifier), smoothed as Keras's cross-entropies smooth it.
  const double smoothing = w_.loss.labelSmoothing;
  auto target = [&](std::size_t c, std::int32_t label) {
    const double t = w_.loss.labelIsTarget    ? double(label)
                     : w_.loss.targetElements ? double(numeric::regressionTarget(label, c))
                     : int(c) == label        ? 1.0
                                              : 0.0;
    return t * (1 - smoothing) + smoothing / (lossType == "binary_crossentropy" ? 2.0 : double(C));
  };
  double lossSum = 0;
  std::vector<std::vector<float>> outputGrads;
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const std::size_t output = outputs_[k];
    std::vector<float> grad(R * C);
    std::size_t correct = 0;
    float accuracy = 0;
    if (lossType == "sparse_categorical_crossentropy" || lossType == "categorical_crossentropy") {
      // Softmax cross-entropy over the class (one-hot targets give the same numbers).
      // Under the output's mask, Keras's apply_mask weighs row r m_r R / (valid + 1e-7):
      // the loss sum(l m) / valid, the gradient weighted so.
      std::vector<double> weight(R, 1.0);
      if (outputMasks_[k] != ~std::size_t(0)) {
        const std::vector<float>& ids = acts[outputMasks_[k]];
        double valid = 0;
        for (std::size_t r = 0; r < R; ++r) valid += ids[r] != 0;
        for (std::size_t r = 0; r < R; ++r) weight[r] = ids[r] != 0 ? double(R) / (valid + 1e-7) : 0.0;
      }
      for (std::size_t r = 0; r < R; ++r) {
        const float* z = &acts[output][r * C];
        const float mx = *std::max_element(z, z + C);
        correct += std::max_element(z, z + C) - z == labels[r];
        double sum = 0;
        for (std::size_t c = 0; c < C; ++c) sum += std::exp(double(z[c] - mx));
        for (std::size_t c = 0; c < C; ++c) {
          const double p = std::exp(double(z[c] - mx)) / sum, t = target(c, labels[r]);
          grad[r * C + c] = float(weight[r] * (p - t) / double(R));
          lossSum += -weight[r] * t * std::log(p);
        }
      }
      accuracy = float(double(correct) / double(R));
    } else {
      // Binary cross-entropy on the logits, or the squared or absolute error
      // or the Huber loss, per class against the targets; each the mean over
      // the classes.
      const bool binary = lossType == "binary_crossentropy";
      const double delta = w_.loss.delta;
      double matches = 0;
      for (std::size_t r = 0; r < R; ++r) {
        double row = 0;
        std::size_t same = 0;
        for (std::size_t c = 0; c < C; ++c) {
          const double z = acts[output][r * C + c], t = target(c, labels[r]);
          const double e = z - t;
          if (binary) {
            const double p = 1.0 / (1.0 + std::exp(-z));
            row += std::max(z, 0.0) - z * t + std::log1p(std::exp(-std::fabs(z)));
            grad[r * C + c] = float((p - t) / double(R) / double(C));
            const double label = w_.loss.labelIsTarget ? double(labels[r]) : int(c) == labels[r] ? 1.0 : 0.0;
            same += (p > 0.5) == (label > 0.5);  // the metric reads the unsmoothed labels
          } else if (lossType == "mean_absolute_error") {
            row += std::fabs(e);
            grad[r * C + c] = float(double((e > 0) - (e < 0)) / double(R) / double(C));
          } else if (lossType == "kl_divergence") {
            // Keras: t and y clipped to [epsilon, 1], the sum over the
            // classes; the clip passes the gradient inside [epsilon, 1].
            const double eps = 1e-7, tc = std::clamp(t, eps, 1.0), y = z;
            row += tc * std::log(tc / std::clamp(y, eps, 1.0));
            grad[r * C + c] = float(y >= eps && y <= 1.0 ? -tc / y / double(R) : 0.0);
          } else if (lossType == "huber") {
            row += std::fabs(e) <= delta ? 0.5 * e * e : delta * std::fabs(e) - 0.5 * delta * delta;
            grad[r * C + c] = float(std::clamp(e, -delta, delta) / double(R) / double(C));
          } else {
            row += e * e;
            grad[r * C + c] = float(2.0 * e / double(R) / double(C));
          }
        }
        lossSum += lossType == "kl_divergence" ? row : row / double(C);
        matches += double(same) / double(C);
      }
      accuracy = float(matches / double(R));
    }
    if (k == 0) lastAccuracy_ = accuracy;
    // Keras's mae and mse metrics: the predictions (the probabilities a
    // cross-entropy's softmax or sigmoid gives) against the unsmoothed
    // targets, means over the features and the batch.
    if (k == 0)
      for (const std::string& metric : w_.loss.metrics) {
        double sum = 0;
        for (std::size_t r = 0; r < R; ++r) {
          const float* z = &acts[output][r * C];
          const double mx = *std::max_element(z, z + C);
          double exps = 0;
          for (std::size_t c = 0; c < C; ++c) exps += std::exp(double(z[c]) - mx);
          for (std::size_t c = 0; c < C; ++c) {
            const double p = lossType == "categorical_crossentropy" ? std::exp(double(z[c]) - mx) / exps
                             : lossType == "binary_crossentropy"    ? 1.0 / (1.0 + std::exp(-double(z[c])))
                                                                    : double(z[c]);
            const double t = w_.loss.labelIsTarget    ? double(labels[r])
                             : w_.loss.targetElements ? double(numeric::regressionTarget(labels[r], c))
                             : int(c) == labels[r]    ? 1.0
                                                      : 0.0;
            sum += metric == "mean_absolute_error" ? std::fabs(p - t) : (p - t) * (p - t);
          }
        }
        lastMetrics_[metric] = float(sum / double(R) / double(C));
      }
    outputGrads.push_back(std::move(grad));
  }
  // The regularizers' penalties, l1 sum|x| + l2 sum x^2 (an activity
  // penalty's factors divided by the batch), added to the loss, as Keras.
  auto penalty = [](const std::vector<float>& x, double l1, double l2) {
    double abs = 0, square = 0;
    for (float v : x) abs += std::fabs(double(v)), square += double(v) * v;
    return l1 * abs + l2 * square;
  };
  auto penaltyGrad = [](float x, double l1, double l2) { return float(l1 * double((x > 0) - (x < 0)) + 2 * l2 * x); };
  double regularization = 0;
  for (const Penalty& p : weightPenalties_) regularization += penalty(weights_[p.at], p.l1, p.l2);
  for (const Penalty& p : activityPenalties_) regularization += penalty(acts[p.at], p.l1, p.l2);
  lastRegularization_ = float(regularization);
  lastOutput_ = acts[outputs_.front()];
  if (inference_) return float(lossSum / double(B * w_.dataset.labelSteps) + regularization);
  // Backward in reverse stage order, each activation's gradient the sum of
  // its readers'; only activations that depend on a weight get one. Then the updates.
  auto weighted = [](const Stage& s) {
    return s.kind == Stage::Dense || s.kind == Stage::Conv || s.kind == Stage::PRelu || s.kind == Stage::ConvFamily ||
           s.kind == Stage::Embedding || s.kind == Stage::Recurrent || s.kind == Stage::Attention || s.kind == Stage::Positions ||
           ((s.kind == Stage::BatchNorm || s.kind == Stage::LayerNorm) &&
            (s.gamma != ~std::size_t(0) || s.beta != ~std::size_t(0)));
  };
  std::vector<char> depends(S + 1, 0);
  for (std::size_t i = 0; i < S; ++i) {
    depends[i + 1] = weighted(stages_[i]);
    for (std::size_t f : stages_[i].from) depends[i + 1] |= depends[f];
  }
  std::vector<std::vector<float>> gradOf(S + 1);
  auto deliver = [&](std::size_t act, std::vector<float> g) {
    if (!depends[act]) return;
    if (gradOf[act].empty()) gradOf[act] = std::move(g);
    else
      for (std::size_t e = 0; e < g.size(); ++e) gradOf[act][e] += g[e];
  };
  for (std::size_t k = 0; k < outputs_.size(); ++k) deliver(outputs_[k], std::move(outputGrads[k]));
  for (const Penalty& p : activityPenalties_) {
    std::vector<float> g(acts[p.at].size());
    for (std::size_t e = 0; e < g.size(); ++e) g[e] = penaltyGrad(acts[p.at][e], p.l1, p.l2);
    deliver(p.at, std::move(g));
  }
  std::vector<std::pair<std::size_t, std::vector<float>>> grads;
  for (std::size_t i = S; i-- > 0;) {
    const Stage& s = stages_[i];
    if (gradOf[i + 1].empty() || !depends[i + 1]) continue;
    std::vector<float> grad = std::move(gradOf[i + 1]);
    const std::size_t inAct = s.from[0];
    const bool wantInput = depends[inAct];
    const std::vector<float>& input = acts[inAct];
    if (s.kind == Stage::Merge) {
      mergeBackward(s, acts, grad, deliver);
      continue;
    }
    if (s.kind == Stage::Padding) {
      deliver(inAct, s.pads ? crop(s, grad) : pad(s, grad));
      continue;
    }
    if (s.kind == Stage::Gather) {
      deliver(inAct, scatterAdd(s, grad));
      continue;
    }
    if (s.kind == Stage::Pool && s.maskFrom != ~std::size_t(0)) {
      deliver(inAct, maskedMeanBackward(acts[s.maskFrom], grad, s.geometry.inW, s.geometry.inC));
      continue;
    }
    if (s.kind == Stage::Pool) {
      deliver(inAct, pool2dBackward(s.geometry, s.max, input, grad));
      continue;
    }
    if (s.kind == Stage::ConvFamily) {
      ConvGrads d = s.transposed ? transposedConvBackward(s.conv, input, weights_[s.kernel], grad, wantInput)
                                 : groupedConvBackward(s.conv, input, weights_[s.kernel], grad, wantInput);
      grads.push_back({s.kernel, std::move(d.kernel)});
      if (s.biasAt != ~std::size_t(0)) grads.push_back({s.biasAt, std::move(d.bias)});
      if (wantInput) deliver(inAct, std::move(d.input));
      continue;
    }
    if (s.kind == Stage::Conv) {
      Conv2DReferenceGrads d = conv2dBackward(s.geometry, input, weights_[s.kernel], grad, wantInput);
      grads.push_back({s.kernel, std::move(d.kernel)});
      if (s.bias) grads.push_back({s.kernel + 1, std::move(d.bias)});
      if (wantInput) deliver(inAct, std::move(d.input));
      continue;
    }
    if (s.kind == Stage::Activation) {
      for (std::size_t e = 0; e < grad.size(); ++e) grad[e] *= derivative(s.activation, s.params, input[e], acts[i + 1][e]);
      deliver(inAct, std::move(grad));
      continue;
    }
    if (s.kind == Stage::Softmax) {
      deliver(inAct, softmaxBackward(acts[i + 1], grad, s.axisLength, s.inner));
      continue;
    }
    if (s.kind == Stage::Recurrent) {
      RecurrentGrads d = recurrentBackward(s.recurrent, input, weights_[s.kernel], weights_[s.kernel + 1],
                                           recurrentCache_.at(i), grad, wantInput);
      grads.push_back({s.kernel, std::move(d.kernel)});
      grads.push_back({s.kernel + 1, std::move(d.recurrent)});
      if (s.recurrent.bias) grads.push_back({s.kernel + 2, std::move(d.bias)});
      if (wantInput) deliver(inAct, std::move(d.input));
      continue;
    }
    if (s.kind == Stage::Positions) {  // the table's gradient: the batch's sum; the input gets none
      std::vector<double> dTable(s.out, 0.0);
      for (std::size_t e = 0; e < grad.size(); ++e) dTable[e % s.out] += grad[e];
      grads.push_back({s.kernel, std::vector<float>(dTable.begin(), dTable.end())});
      continue;
    }
    if (s.kind == Stage::Attention) {
      AttentionGrads d = attentionBackward(s.attention, acts[s.from[0]], acts[s.from[1]], acts[s.from[2]], attentionWeights(s),
                                           stepCount_, attentionCache_.at(i), grad);
      for (std::size_t n = 0; n < d.weights.size(); ++n) grads.push_back({s.kernel + n, std::move(d.weights[n])});
      deliver(s.from[0], std::move(d.query));
      deliver(s.from[1], std::move(d.value));
      deliver(s.from[2], std::move(d.key));
      continue;
    }
    if (s.kind == Stage::Embedding) {  // each looked-up row's gradient added into its row; the ids get none
      std::vector<double> dTable(s.vocabulary * s.channels, 0.0);
      for (std::size_t t = 0; t < B * s.in; ++t) {
        const auto id = std::size_t(input[t]);
        for (std::size_t e = 0; e < s.channels; ++e)
          dTable[((e / s.grain) * s.vocabulary + id) * s.grain + e % s.grain] += grad[t * s.channels + e];
      }
      grads.push_back({s.kernel, std::vector<float>(dTable.begin(), dTable.end())});
      continue;
    }
    if (s.kind == Stage::PRelu) {
      // d/dx: 1 above 0, alpha below, 0 at 0 (relu's derivative at 0 is 0);
      // d/dalpha: -relu(-x), summed over every row sharing the value.
      const std::vector<float>& alpha = weights_[s.alpha];
      std::vector<double> dAlpha(s.columns, 0.0);
      for (std::size_t e = 0; e < grad.size(); ++e) dAlpha[e % s.columns] -= double(std::max(-input[e], 0.0f)) * grad[e];
      grads.push_back({s.alpha, std::vector<float>(dAlpha.begin(), dAlpha.end())});
      if (wantInput) {
        for (std::size_t e = 0; e < grad.size(); ++e)
          grad[e] *= input[e] > 0 ? 1.0f : input[e] < 0 ? alpha[e % s.columns] : 0.0f;
        deliver(inAct, std::move(grad));
      }
      continue;
    }
    if (s.kind == Stage::Constant) {
      for (std::size_t e = 0; e < grad.size(); ++e) {
        const float a = s.first[e % s.in], b = s.second[e % s.in];
        grad[e] *= s.affine == Stage::ScaleAdd ? a : s.affine == Stage::SubtractDivide ? 1.0f / b : b;
      }
      deliver(inAct, std::move(grad));
      continue;
    }
    if (s.kind == Stage::BatchNorm && s.frozen) {
      // Normalized by constants (its moving statistics): dx = dy gamma / sqrt(moving variance + epsilon).
      if (!wantInput) continue;
      for (std::size_t e = 0; e < grad.size(); ++e) {
        const std::size_t c = e % s.channels;
        const double gamma = s.gamma == ~std::size_t(0) ? 1.0 : weights_[s.gamma][c];
        grad[e] = float(grad[e] * gamma / std::sqrt(double(moving_[s.moving + 1][c]) + s.epsilon));
      }
      deliver(inAct, std::move(grad));
      continue;
    }
    if (s.kind == Stage::BatchNorm) {
      // The gradient through the batch statistics: with xhat = (x - mean) * r,
      // r = 1 / sqrt(variance + epsilon), over the M values of a channel,
      // dgamma = sum(dy xhat), dbeta = sum(dy),
      // dx = gamma r / M (M dy - dbeta - xhat dgamma).
      std::vector<double> mean, variance;
      batchStatistics(s, input, mean, variance);
      const std::size_t C = s.channels, M = grad.size() / C;
      std::vector<double> r(C), dGamma(C, 0.0), dBeta(C, 0.0);
      for (std::size_t c = 0; c < C; ++c) r[c] = 1.0 / std::sqrt(variance[c] + s.epsilon);
      for (std::size_t e = 0; e < grad.size(); ++e) {
        const std::size_t c = e % C;
        dGamma[c] += grad[e] * (input[e] - mean[c]) * r[c];
        dBeta[c] += grad[e];
      }
      if (s.gamma != ~std::size_t(0)) grads.push_back({s.gamma, std::vector<float>(dGamma.begin(), dGamma.end())});
      if (s.beta != ~std::size_t(0)) grads.push_back({s.beta, std::vector<float>(dBeta.begin(), dBeta.end())});
      if (wantInput) {
        for (std::size_t e = 0; e < grad.size(); ++e) {
          const std::size_t c = e % C;
          const double gamma = s.gamma == ~std::size_t(0) ? 1.0 : weights_[s.gamma][c];
          const double xhat = (input[e] - mean[c]) * r[c];
          grad[e] = float(gamma * r[c] / double(M) * (double(M) * grad[e] - dBeta[c] - xhat * dGamma[c]));
        }
        deliver(inAct, std::move(grad));
      }
      continue;
    }
    if (s.kind == Stage::Noise) {
      if (s.multiplicative)
        for (std::size_t e = 0; e < grad.size(); ++e) grad[e] *= 1.0f + s.rate * numeric::standardNormal(s.seed, stepCount_, e);
      deliver(inAct, std::move(grad));
      continue;
    }
    if (s.kind == Stage::LayerNorm) {
      const std::vector<float> none;
      const std::vector<float>& gamma = s.gamma == ~std::size_t(0) ? none : weights_[s.gamma];
      LayerNormGrads d = s.groups ? groupNormBackward(input, grad, s.in / s.channels, s.channels, s.groups, s.epsilon, gamma)
                                  : layerNormBackward(input, grad, s.channels, s.epsilon, gamma);
      if (s.gamma != ~std::size_t(0)) grads.push_back({s.gamma, std::move(d.gamma)});
      if (s.beta != ~std::size_t(0)) grads.push_back({s.beta, std::move(d.beta)});
      if (wantInput) deliver(inAct, std::move(d.input));
      continue;
    }
    if (s.kind == Stage::Masked) {  // the kept steps' gradients (the mask gets none)
      for (std::size_t e = 0; e < grad.size(); ++e) grad[e] *= acts[s.from[1]][e / s.columns];
      deliver(inAct, std::move(grad));
      continue;
    }
    if (s.kind == Stage::Dropout) {
      const float scale = 1.0f / (1.0f - s.rate);
      for (std::size_t e = 0; e < grad.size(); ++e)
        grad[e] = numeric::dropoutKeeps(s.seed, stepCount_, e, s.rate) ? grad[e] * scale : 0.0f;
      deliver(inAct, std::move(grad));
      continue;
    }
    const auto& W = weights_[s.kernel];
    std::vector<float> dW(s.in * s.out);
    for (std::size_t k = 0; k < s.in; ++k)
      for (std::size_t c = 0; c < s.out; ++c) {
        double sum = 0;
        for (std::size_t r = 0; r < B * s.steps; ++r) sum += double(input[r * s.in + k]) * grad[r * s.out + c];
        dW[k * s.out + c] = float(sum);
      }
    grads.push_back({s.kernel, std::move(dW)});
    if (s.bias) {
      std::vector<float> db(s.out);
      for (std::size_t c = 0; c < s.out; ++c) {
        double sum = 0;
        for (std::size_t r = 0; r < B * s.steps; ++r) sum += grad[r * s.out + c];
        db[c] = float(sum);
      }
      grads.push_back({s.kernel + 1, std::move(db)});
    }
    if (wantInput) {
      std::vector<float> gin(B * s.steps * s.in);
      for (std::size_t r = 0; r < B * s.steps; ++r)
        for (std::size_t k = 0; k < s.in; ++k) {
          double sum = 0;
          for (std::size_t c = 0; c < s.out; ++c) sum += double(grad[r * s.out + c]) * W[k * s.out + c];
          gin[r * s.in + k] = float(sum);
        }
      deliver(inAct, std::move(gin));
    }
  }
  // A shared layer's weight gets the sum of its calls' gradients, one update.
  std::map<std::size_t, std::vector<float>> summed;
  for (auto& [weight, g] : grads) {
    auto [it, first] = summed.emplace(weight, g);
    if (!first)
      for (std::size_t e = 0; e < g.size(); ++e) it->second[e] += g[e];
  }
  for (const Penalty& p : weightPenalties_) {
    std::vector<float>& g = summed[p.at];
    g.resize(weights_[p.at].size(), 0.0f);
    for (std::size_t e = 0; e < g.size(); ++e) g[e] += penaltyGrad(weights_[p.at][e], p.l1, p.l2);
  }
  for (std::size_t i = 0; i < frozen_.size(); ++i)
    if (frozen_[i]) summed.erase(i);  // a frozen layer's weights stay as they are
  optimizer_->apply(weights_, std::move(summed));
  return float(lossSum / double(B * w_.dataset.labelSteps) + regularization);
}

}  // namespace ipusim::testing
