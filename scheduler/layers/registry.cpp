#include "scheduler/layers/layer.hpp"
#include "scheduler/layers/layers.hpp"

#include <map>
#include <memory>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// The table: one entry per layer class, in the documentation's order.
struct Registry {
  std::vector<std::unique_ptr<Layer>> layers;
  std::map<std::string, const Layer*> byKind, byKerasClass;
  std::vector<std::string> kinds, kerasClasses{"InputLayer"};
  Registry() {
    layers.push_back(makeReshapeLayer());
    layers.push_back(makeDenseLayer());
    layers.push_back(makeEinsumDenseLayer());
    layers.push_back(makeEmbeddingLayer());
    layers.push_back(makeRecurrentLayer());
    layers.push_back(makeBidirectionalLayer());
    layers.push_back(makeTimeDistributedLayer());
    layers.push_back(makeDropoutLayer());
    layers.push_back(makeMaskingLayer());
    layers.push_back(makeGaussianNoiseLayer());
    layers.push_back(makeBatchNormalizationLayer());
    layers.push_back(makeActivationLayer());
    layers.push_back(makeConv2DLayer());
    layers.push_back(makeDepthwiseConvLayer());
    layers.push_back(makeSeparableConvLayer());
    layers.push_back(makeConvTransposeLayer());
    layers.push_back(makePoolingLayer());
    layers.push_back(makeMergeLayer());
    layers.push_back(makePaddingLayer());
    layers.push_back(makeReluLayer());
    layers.push_back(makeLeakyReluLayer());
    layers.push_back(makeEluLayer());
    layers.push_back(makePReluLayer());
    layers.push_back(makeSoftmaxLayer());
    layers.push_back(makeRescalingLayer());
    layers.push_back(makeNormalizationLayer());
    layers.push_back(makeLayerNormalizationLayer());
    layers.push_back(makeGroupNormalizationLayer());
    layers.push_back(makeUpSamplingLayer());
    layers.push_back(makePermuteLayer());
    layers.push_back(makeMultiHeadAttentionLayer());
    layers.push_back(makePositionEmbeddingLayer());
    layers.push_back(makeRecomputationCheckpointLayer());
    for (const auto& l : layers) {
      for (const std::string& k : l->kinds())
        if (byKind.emplace(k, l.get()).second) kinds.push_back(k);
      for (const std::string& c : l->kerasClasses())
        if (byKerasClass.emplace(c, l.get()).second) kerasClasses.push_back(c);
    }
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const Layer& layerOfKind(const std::string& kind) {
  const auto it = registry().byKind.find(kind);
  if (it == registry().byKind.end()) throw std::logic_error("no layer of kind '" + kind + "'");
  return *it->second;
}

const Layer* layerOfKerasClass(const std::string& cls) {
  const auto it = registry().byKerasClass.find(cls);
  return it == registry().byKerasClass.end() ? nullptr : it->second;
}

const std::vector<std::string>& layerKinds() { return registry().kinds; }
const std::vector<std::string>& kerasLayerClasses() { return registry().kerasClasses; }

bool isMerge(const std::string& kind) {
  const auto it = registry().byKind.find(kind);
  return it != registry().byKind.end() && it->second->merges();
}

}  // namespace ipusim::scheduler
