#pragma once
// Layer: everything specific to one kind of layer lives in one class, as a
// Keras layer class owns its config, its build and its call: its workload
// keys, its Keras config, its shape inference, its size checks, and its
// forward ops with the backward ops they need. The readers, the shape
// inference and the training graph's builder are generic and ask the
// registry (registry.cpp) for the layer of a kind; adding a layer kind is
// one file here, one line in the registry, its tests and the docs.
//
// Errors are std::invalid_argument naming the file, the layer and the key:
// every hook that can fail is handed a LayerFail that does so.
#include "scheduler/models/layer_spec.hpp"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class KerasConfig;
class TrainingGraphBuilder;
class WorkloadReader;

using Shape = std::vector<std::uint64_t>;
// Throws: names the file, the layer and `key` ("" for the layer itself).
using LayerFail = std::function<void(const std::string& key, const std::string& what)>;

class Layer {
 public:
  virtual ~Layer() = default;

  // The kinds this class builds (ipusim's names: a workload's "type") and
  // the Keras classes it reads.
  virtual std::vector<std::string> kinds() const = 0;
  virtual std::vector<std::string> kerasClasses() const = 0;
  // Whether it merges two or more inputs (else it reads one).
  virtual bool merges() const { return false; }
  // How many inputs a call reads, and the words for it in an error ("merges
  // two or more inputs"): a merge's two or more, else one, unless the layer says.
  struct Arity {
    std::size_t fewest, most;
    std::string what;
  };
  virtual Arity arity() const {
    return merges() ? Arity{2, ~std::size_t(0), "merges two or more inputs"} : Arity{1, 1, "reads one input"};
  }

  // ipusim's workload: the keys of `kind` beyond type, name, shard, stage and
  // inputs, and their values into `spec` (spec.kind is set).
  virtual std::set<std::string> workloadKeys(const std::string& kind) const = 0;
  virtual void readWorkload(const WorkloadReader& keys, LayerSpec& spec) const = 0;
  // A Keras config of class `cls`: every key used, ignored (no effect on the
  // computation) or checked to hold the value modelled; sets spec.kind.
  virtual void readKeras(KerasConfig& config, const std::string& cls, LayerSpec& spec) const = 0;
  // A call's keyword arguments that are not tensors (models/keras_graph.hpp):
  // those the layer models (an attention's use_causal_mask) read into
  // `spec`, those that change the computation refused; by default none is
  // read (training and the like change nothing in a training step here).
  virtual void readKerasCall(KerasConfig& keywords, LayerSpec& spec) const {}

  // The per-example output shape (channels last) from the inputs'; may
  // complete `spec` (a reshape's -1, a concatenation's axis).
  virtual Shape outputShape(LayerSpec& spec, const std::vector<Shape>& inputs, const LayerFail& fail) const = 0;
  // Sizes checked before anything is built (its tensors against the
  // one-tensor limit, workload_limits.hpp), at `batch` examples.
  virtual void checkLimits(const LayerSpec& spec, std::uint32_t batch, const LayerFail& fail) const {}
  // Whether it has trainable weights (a model needs a layer that has).
  virtual bool hasWeights(const LayerSpec& spec) const { return false; }
  // What the up-front memory check (models/memory_estimate.hpp) counts for
  // one call of the layer, from its shapes alone: its trainable weights
  // (each with the optimizer's slots; a shared layer's later calls count
  // none), its float state, and an activation its backward pass keeps
  // until it runs (per example; not counted when it is the model's input).
  // Counts are long double: a hostile layer width must not wrap around.
  struct Footprint {
    std::vector<std::pair<std::string, long double>> weights;  // name ("kernel"), elements
    long double stateElements = 0;                              // float (moving statistics)
    std::string kept;                                           // "input", "whitened", or ""
    long double keptElements = 0;
  };
  virtual Footprint footprint(const LayerSpec& spec) const { return {}; }
  // Whether it needs its input laid out in its own (image) shape: the
  // images are then fed in the model's input shape when it reads them first.
  virtual bool readsShapedInput(const LayerSpec& spec) const { return false; }

  // Keras's masks (an Embedding's mask_zero): what the layer does with a mask
  // on its input. Refuses: an error (not modelled); Carries: the output has
  // the input's mask (Keras's supports_masking with its default compute_mask;
  // a merge's inputs must share their one mask); Consumes: build() reads it
  // (TrainingGraphBuilder::maskOf) and gives its output one, or none.
  enum class MaskUse { Refuses, Carries, Consumes };
  virtual MaskUse maskUse(const LayerSpec& spec) const { return MaskUse::Refuses; }

  // Adds the forward ops over `inputs` (values of the compute type, one per
  // LayerSpec::inputs) and records on the builder's tape what its backward
  // pass needs; returns the output value.
  virtual std::size_t build(TrainingGraphBuilder& b, const LayerSpec& spec, std::size_t index,
                            const std::vector<std::size_t>& inputs) const = 0;
};

// The registry. layerOfKind throws std::logic_error for a kind it does not
// have (the readers check kinds against layerKinds() first).
const Layer& layerOfKind(const std::string& kind);
const Layer* layerOfKerasClass(const std::string& cls);  // nullptr: not read
const std::vector<std::string>& layerKinds();            // in the documentation's order
const std::vector<std::string>& kerasLayerClasses();     // InputLayer first, then the layers'
bool isMerge(const std::string& kind);

}  // namespace ipusim::scheduler
