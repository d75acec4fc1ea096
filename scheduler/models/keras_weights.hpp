#pragma once
// Trained weights from a Keras file, read through Debian's HDF5
// (libhdf5-dev) and matched to the model's layers as Keras itself matches them:
//   - Keras 3 (a `.keras` archive's model.weights.h5, or a `.weights.h5` of
//     model.save_weights): a group per layer of model.layers, named not by the
//     config's `name` but by the layer class in snake case and a counter in
//     layer order (`layers/conv2d`, `layers/conv2d_1`, `layers/dense`, ...),
//     its variables in `vars/0`, `vars/1`, ... in the order the layer creates them;
//   - legacy `.h5` (Keras 2's, tf.keras's and Keras 3's model.save("m.h5") in
//     `model_weights`, save_weights("w.h5") at the root): a group per layer by
//     its config name, listed in the `layer_names` attribute, each listing its
//     weights' paths in `weight_names` (`dense/kernel:0` in Keras 2,
//     `sequential/dense/kernel` or `kernel` in Keras 3); the file's layers
//     with weights are matched to the model's in order, each weight to a
//     variable by position (Keras's load_weights_from_hdf5_group).
// Modelled: Dense, Conv1D and Conv2D (kernel, then bias when use_bias),
// BatchNormalization (gamma when scale, beta when center, moving_mean,
// moving_variance); layers without weights hold none. Errors
// (std::invalid_argument) name the file, the layer, the weight and both
// shapes: a weight missing, a shape that differs, a group the model has no
// layer for, counts of layers or weights that differ, a layer whose weights
// are not read yet.
#include "scheduler/models/layer_spec.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct TrainedWeight {
  std::vector<std::uint64_t> shape;  // as Keras stores it
  std::vector<double> values;        // row-major
};
// By "<layer>/<weight>", the layer's config name and ipusim's weight name
// ("kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance"):
// TrainingGraphBuilder::weight and ::state take them in place of drawn values.
using TrainedWeights = std::map<std::string, TrainedWeight>;

// The weights file is at most this large (an estimate with room: ResNet-50
// in float32 is 98 MB, BERT-Large 1.3 GB).
inline constexpr std::uint64_t kMaxWeightsFileBytes = 4ull << 30;

// `layers`: the model's layer calls in model.layers' order; `classOf`: each
// one's Keras class by name. A model with shared layers is refused (its
// calls share one group).
TrainedWeights readKerasWeights(const std::string& path, const std::vector<LayerSpec>& layers,
                                const std::map<std::string, std::string>& classOf);

// Keras's naming.to_snake_case: "MaxPooling2D" -> "max_pooling2d".
std::string kerasSnakeCase(const std::string& className);

}  // namespace ipusim::scheduler
