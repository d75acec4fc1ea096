#pragma once
// The model as a graph of layer calls (Keras's functional model): each layer
// reads the outputs of the layers it names (or the model's input), so
// residual and branching networks can be said; a chain is the case where each
// layer reads the one before it. connectLayers() resolves the names into
// LayerSpec::inputs and puts the layers in topological order, keeping the
// given order wherever it already is one; the model's output (the layer named
// so, else the one layer no layer reads) is then the last layer. Errors are std::invalid_argument "<source>: <where(layer, key)>:
// <what>", naming the layer and the key: an input that names no layer, a
// cycle (every layer of it named), a layer that does not lead to the output
// (or, with no output named, two layers no layer reads), two layers of one
// name, a merge with one input or another layer with several.
#include "scheduler/models/layer_shapes.hpp"
#include "scheduler/models/layer_spec.hpp"

#include <string>
#include <vector>

namespace ipusim::scheduler {

struct LayerConnections {
  // Per layer, the names it reads, in argument order; an empty list: the
  // layer before it (the model's input for the first layer).
  std::vector<std::vector<std::string>> inputs;
  std::string modelInput = "input";  // the name that stands for the model's input
  std::string output;                // the output layer's name; "" : the one layer no layer reads
  std::string inputsKey = "inputs";  // the key the names came from, for errors
  std::string outputKey = "output";  // the key `output` came from, for errors
};

// Fills layers[i].inputs (indices into the reordered list, or kModelInput)
// and reorders `layers` topologically with the output last.
void connectLayers(std::vector<LayerSpec>& layers, const LayerConnections& c, const std::string& source,
                   const LayerKeyNamer& where);

}  // namespace ipusim::scheduler
