#pragma once
// Graph building for zero padding and cropping (Keras's ZeroPadding1D/2D,
// Cropping1D/2D) over channels-last values: [batch, rows, columns, channels]
// or, 1d, [batch, steps, channels] (a single row). Pad2D writes zeros around
// a copy of its input; Crop2D copies the inside out. Each is the other's
// gradient: the gradient of a padding is the inside of the output's
// gradient, that of a cropping its gradient padded with zeros.
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/graph/op_graph.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace ipusim::scheduler {

// Keras's padding / cropping value into LayerSpec::pads: 2d an integer (all
// four), [rows, columns] (each on both sides) or [[top, bottom], [left,
// right]]; 1d an integer or [before, after] (the steps: pads[2], pads[3]).
// Empty when the value has none of these forms; "<form>" names them.
std::optional<std::array<std::uint32_t, 4>> padsFromJson(const nlohmann::json& v, bool twoD);
const char* padsForms(bool twoD);

// Adds the Pad2D or Crop2D op of layer `l` over `input`; returns its output.
std::size_t addPaddingOrCropping(OpGraph& g, const LayerSpec& l, std::size_t input, std::uint64_t batch);

// The input gradient of Pad2D / Crop2D op `op` given its output's gradient.
std::size_t addPaddingOrCroppingGrad(OpGraph& g, std::size_t op, std::size_t outputGrad);

// The images x rows x columns x channels a padding or cropping op moves,
// from its (larger or smaller) input value.
struct PaddedGeometry {
  std::uint64_t images = 0, rows = 0, cols = 0, channels = 0;
};
PaddedGeometry paddedGeometryOf(const std::vector<std::uint64_t>& valueShape);

}  // namespace ipusim::scheduler
