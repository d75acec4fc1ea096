#include "scheduler/models/model_checks.hpp"

#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/layer.hpp"

#include <functional>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using Fail = std::function<void(const std::string& key, const std::string& what)>;

// One output layer against the loss.
void checkOutput(const Workload& w, std::size_t o, bool several, const Fail& fail, const std::string& layersKey) {
  const LayerSpec& last = w.layers[o];
  const std::vector<std::uint64_t>& out = last.outputShape;
  const std::string& loss = w.loss.type;
  const bool categorical = loss == "sparse_categorical_crossentropy" || loss == "categorical_crossentropy";
  const bool binary = loss == "binary_crossentropy";
  const std::string lastName = several ? "the output layer '" + last.name + "'" : "the last layer ('" + last.name + "')";
  // The loss computes a fused softmax or sigmoid from the logits: the
  // probabilities an activity regularizer would penalize are never a value.
  if (last.regularizers.count(kActivityRegularizer) && fusedWithLoss(w, last, last.activation))
    fail(layersKey, lastName + " has an activity_regularizer " + last.regularizers.at(kActivityRegularizer).text +
                        " but its " + toString(last.activation) + " is computed inside " + loss +
                        " (fused): a penalty on its probabilities is not modelled");
  // Each output is trained on the example's one label (workload.hpp).
  if (several && (categorical || binary))
    for (const LayerSpec& l : w.layers)
      for (std::size_t j : l.inputs)
        if (j == o)
          fail(layersKey, lastName + " is read by layer '" + l.name + "': an output whose " + loss +
                              " takes its logits cannot also feed other layers (not modelled)");
  // An output that is not a vector (an image, a sequence) needs targets of its
  // own shape: a regression loss has them (LossSpec::targetElements), the
  // classification losses' come from the example's one label.
  const std::uint64_t steps = w.dataset.labelSteps;  // a class per step of a [steps, classes] output
  if (!w.loss.regression() && steps == 1 && out.size() > 1 && elementsOf(out) != out.back())  // ([1, 1, classes] is a vector laid out as an image)
    fail(layersKey, lastName + " outputs " + shapeText(out) + " per example (not a vector): " + loss +
                        "'s targets here come from the example's class label (" +
                        (categorical ? "over" : "one-hot over") + " dataset.classes = " +
                        std::to_string(w.dataset.classes) + "), and targets of an output's own shape (an image, a "
                        "sequence: an autoencoder's, a segmentation's) are modelled for the regression losses only "
                        "(mean_squared_error, mean_absolute_error, huber)");
  if (categorical && elementsOf(out) / steps != w.dataset.classes)
    fail(layersKey, lastName + " outputs " + shapeText(out) + " per example but " + loss + " over dataset.classes = " +
                        std::to_string(w.dataset.classes) + " needs " + std::to_string(w.dataset.classes));
  // A binary classifier's target is the label itself (LossSpec::labelIsTarget).
  if (w.loss.labelIsTarget && w.dataset.classes != 2)
    fail(layersKey, lastName + " is one sigmoid unit under binary_crossentropy, a binary classifier: its targets are "
                               "the labels 0 and 1, but dataset.classes is " + std::to_string(w.dataset.classes) +
                               " (set it to 2)");
  // The targets of the other losses are the class labels one-hot encoded (LossSpec::classIndexLabels).
  if (!categorical && !w.loss.labelIsTarget && elementsOf(out) != w.loss.targetWidth(w.dataset.classes))
    fail(layersKey, lastName + " outputs " + shapeText(out) + " per example but " + loss + "'s targets are the " +
                        std::to_string(w.dataset.classes) + " classes one-hot encoded (dataset.classes), so it needs " +
                        std::to_string(w.dataset.classes));
  if (!categorical && !binary) return;  // the regression losses: any activation
  const Activation probabilities = categorical ? Activation::Softmax : Activation::Sigmoid;
  const std::string act = toString(probabilities);
  // A RecomputationCheckpoint passes its input on: the probabilities it
  // would end the model with are the layer's it reads (through a chain of
  // them). Dense(softmax) then a checkpoint, under from_logits true, trained
  // with the softmax applied twice without a word (refused without the
  // checkpoint); under false the checkpoint was told its own activation
  // must be softmax. The loss fuses the activation of the model's last layer
  // alone, so the checkpoint cannot stand after it.
  std::size_t source = o;
  while (w.layers[source].kind == layer_kind::kRecomputationCheckpoint && !w.layers[source].inputs.empty() &&
         !isModelInput(w.layers[source].inputs[0]))
    source = w.layers[source].inputs[0];
  if (source != o && w.layers[source].activation == probabilities)
    fail(layersKey, lastName + " is a RecomputationCheckpoint passing on the " + act + " of layer '" +
                        w.layers[source].name + "', which " + loss + " computes itself, fused with the model's last "
                        "layer (not through a checkpoint: not modelled): end the model with '" + w.layers[source].name +
                        "' (training.recompute_checkpoints may name it), or give it no activation and set "
                        "loss.from_logits to true");
  if (!w.loss.fromLogits && last.activation != probabilities)
    fail("loss.from_logits", "false (Keras's default) means " + lastName + " outputs probabilities, so its activation "
                             "must be " + act + ", not " + toString(last.activation) +
                             "; for a model that outputs logits set \"loss\": {\"type\": \"" + loss +
                             "\", \"from_logits\": true}");
  if (w.loss.fromLogits && last.activation == probabilities)
    fail("loss.from_logits", "true with " + act + " as " + lastName + "'s activation would apply " + act +
                             " twice (not modelled): drop the activation or set from_logits to false");
}

}  // namespace

void checkModelAgainstLoss(const Workload& w, const std::string& source, const std::string& layersKey,
                           const std::string& lossSource) {
  const Fail fail = [&](const std::string& key, const std::string& what) {
    const bool lossKey = key.rfind("loss", 0) == 0;
    if (lossKey && !lossSource.empty()) throw std::invalid_argument(lossSource + ": " + key + ": " + what);
    // The model's fault only beside the workload's loss, which replaces the Keras file's: both named.
    const std::string replaced = !lossSource.empty() && lossSource != source
                                     ? " (the loss is " + lossSource + "'s, which replaces the Keras file's)"
                                     : "";
    throw std::invalid_argument(source + ": " + key + ": " + what + replaced);
  };
  // (A softmax anywhere but ending the model under a categorical
  // cross-entropy is its own op: layers/activation_functions.hpp.)
  bool weights = false;
  for (const LayerSpec& l : w.layers) weights = weights || layerOfKind(l.kind).hasWeights(l);
  if (!weights) fail(layersKey, "needs at least one dense or conv2d layer");

  const std::vector<std::size_t> outputs = modelOutputs(w);
  for (std::size_t o : outputs) checkOutput(w, o, outputs.size() > 1, fail, layersKey);
}

void checkSomethingTrains(const Workload& w, const std::string& source) {
  if (w.task != Task::Fit) return;
  std::size_t frozen = 0;
  for (const LayerSpec& l : w.layers) {
    if (!layerOfKind(l.kind).hasWeights(l)) continue;
    if (l.trainable) return;
    ++frozen;
  }
  if (frozen)  // (a model with no weights at all is checkModelAgainstLoss's)
    throw std::invalid_argument(source + ": model: " +
                                (frozen == 1 ? std::string("its one layer")
                                             : "each of its " + std::to_string(frozen) + " layers") +
                                " with weights is frozen (trainable: false), so fit would train nothing: "
                                "expected a layer with trainable weights, or task evaluate or predict");
}

}  // namespace ipusim::scheduler
