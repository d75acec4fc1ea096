#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/codelet.hpp"
#include "model/codelets/per_worker.hpp"
#include "model/util/nearest_name.hpp"

#include <stdexcept>

namespace ipusim::model {

const CodeletRegistry& CodeletRegistry::instance() {
  static const CodeletRegistry registry = [] {
    CodeletRegistry r;
    addElementwiseBinaryCodelets(r);
    addElementwiseUnaryCodelets(r);
    addExtremumCodelets(r);
    addScaledAddCodelet(r);
    addAddBiasCodelet(r);
    addIdMaskCodelet(r);
    addReduceCodelets(r);
    addMatMulPartialCodelet(r);
    addDataMovementCodelets(r);
    addSoftmaxCrossEntropyCodelets(r);
    addNonLinearityGradCodelets(r);
    addDropoutCodelets(r);
    addGaussianNoiseCodelets(r);
    addOptimizerUpdateCodelets(r);
    addLearningRateCodelets(r);
    addGradientClippingCodelets(r);
    addRegularizerCodelets(r);
    addAccuracyCodelet(r);
    addTargetLossCodelets(r);
    addConvPartialCodelets(r);
    addPoolingCodelets(r);
    addBatchNormCodelets(r);
    addLayerNormCodelets(r);
    addMultiSliceCodelets(r);
    addActivationCodelets(r);
    addSoftmaxCodelets(r);
    addColumnBroadcastCodelets(r);
    addPerWorkerCodelets(r);  // wrapping codelets added above
    return r;
  }();
  return registry;
}

const Codelet& CodeletRegistry::get(const std::string& name) const {
  if (const auto it = byName_.find(name); it != byName_.end()) return *it->second;
  std::string message = "unknown codelet '" + name + "'";
  const std::string nearest = util::nearestName(name, names());
  if (!nearest.empty()) message += "; did you mean '" + nearest + "'?";
  throw std::invalid_argument(message);
}

bool CodeletRegistry::has(const std::string& name) const { return byName_.count(name) != 0; }

std::vector<std::string> CodeletRegistry::names() const {
  std::vector<std::string> result;
  result.reserve(codelets_.size());
  for (const auto& codelet : codelets_) result.push_back(codelet->name());
  return result;
}

void CodeletRegistry::add(std::unique_ptr<Codelet> codelet) {
  if (!codelet) throw std::invalid_argument("CodeletRegistry::add: null codelet");
  if (has(codelet->name()))
    throw std::invalid_argument("CodeletRegistry::add: codelet '" + codelet->name() + "' is already registered");
  byName_.emplace(codelet->name(), codelet.get());
  codelets_.push_back(std::move(codelet));
}

}  // namespace ipusim::model
