#pragma once
// The model as a graph of layer calls (Keras's functional model): each layer
// reads the outputs of the layers it names (or the model's input), so
// residual and branching networks can be said; a chain is the case where each
// layer reads the one before it. connectLayers() resolves the names into
// LayerSpec::inputs and puts the layers in topological order, keeping the
// given order wherever it already is one; the model's outputs are the layers
// named so (Keras's output_layers), else the one layer no layer reads, and
// the last of them is then the last layer. Errors are std::invalid_argument
// "<source>: <where(layer, key)>: <what>", naming the layer and the key: an
// input that names no layer, a cycle (every layer of it named), a layer that
// does not lead to an output (or, with no output named, two layers no layer
// reads), two layers of one name, a merge with one input or another layer
// with several.
#include "scheduler/models/layer_shapes.hpp"
#include "scheduler/models/layer_spec.hpp"

#include <string>
#include <vector>

namespace ipusim::scheduler {

struct LayerConnections {
  // Per layer, the names it reads, in argument order; an empty list: the
  // layer before it (the model's input for the first layer).
  std::vector<std::vector<std::string>> inputs;
  // The names that stand for the model's inputs: input k is read as modelInput(k).
  std::vector<std::string> modelInputs{"input"};
  // The output layers' names, in the model's order; none: the one layer no layer reads.
  std::vector<std::string> outputs;
  std::string inputsKey = "inputs";  // the key the names came from, for errors
  std::string outputKey = "output";  // the key `outputs` came from, for errors
};

// Fills layers[i].inputs (indices into the reordered list, or modelInput(k))
// and reorders `layers` topologically with the last output last. Returns the
// outputs' indices in the reordered list, in the model's order.
std::vector<std::size_t> connectLayers(std::vector<LayerSpec>& layers, const LayerConnections& c, const std::string& source,
                   const LayerKeyNamer& where);

}  // namespace ipusim::scheduler
