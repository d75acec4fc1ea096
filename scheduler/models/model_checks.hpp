#pragma once
// The checks a model must pass against its loss, whichever format it came
// from (run by parseWorkload() after shape inference):
//   - at least one layer with weights (dense or conv2d);
//   - softmax only as the last layer's activation (fused with the loss);
//   - each output layer (workload.hpp: the last, or a Keras model's
//     output_layers) fits the loss; with several, none is read by another
//     layer when the loss takes its logits:
//   - the output shape fits the loss: [classes] for the categorical
//     cross-entropies (classes = dataset.classes), and for binary
//     cross-entropy and mean squared error too (their targets are the class
//     labels one-hot encoded);
//   - from_logits=false needs probabilities: the output's activation is
//     softmax (categorical) or sigmoid (binary); from_logits=true with such
//     an activation would apply it twice, which is not modelled.
// Errors: std::invalid_argument naming `source` and the key.
#include "scheduler/models/workload.hpp"

namespace ipusim::scheduler {

// `layersKey` names the layer list in errors ("model.layers", or the Keras file's name).
// `lossSource` is the file the loss came from, named by the errors about the
// loss's own keys (loss.from_logits): a workload's loss replaces a Keras
// file's, and its errors are the workload's (empty: `source`).
void checkModelAgainstLoss(const Workload& w, const std::string& source, const std::string& layersKey,
                           const std::string& lossSource = "");

// In fit, at least one layer with weights is not frozen (LayerSpec::trainable):
// else std::invalid_argument naming `source`. Evaluate and predict take any model.
void checkSomethingTrains(const Workload& w, const std::string& source);

}  // namespace ipusim::scheduler
