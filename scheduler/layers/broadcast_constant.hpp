#pragma once
// Constants a layer broadcasts against its input (LayerSpec::BroadcastConstant:
// Rescaling's scale and offset, Normalization's mean and variance): read
// from JSON, checked against the input's shape, and expanded to the
// per-column vector a per-column op (PRelu, Normalize, ScaleShift: the
// vector applies to the last elements of each row) reads.
#include "scheduler/models/layer_spec.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class TrainingGraphBuilder;

// A number, nested lists of numbers (a rectangular array, row-major), or
// Keras 3's serialized array {"class_name": "__numpy__" | "__tensor__",
// "config": {"value": ...}}; calls fail(what) on anything else.
BroadcastConstant readBroadcastConstant(const nlohmann::json& v, const std::function<void(const std::string&)>& fail);

// Checks that `c`, its dims laid on the input's axes `axes` (0-based per
// example, one per dim of `c`), broadcasts against per-example shape `in`:
// each dim the axis's size or 1. Calls fail(what) otherwise.
void checkBroadcast(const BroadcastConstant& c, const std::vector<std::size_t>& axes, const std::vector<std::uint64_t>& in,
                    const std::function<void(const std::string&)>& fail);

// numpy's alignment: `c`'s dims (leading ones dropped) on the input's last axes.
std::vector<std::size_t> trailingAxes(const BroadcastConstant& c, std::size_t rank);

// The first axis a per-column op over a rank-`rank` input needs to cover
// every dim of `c` (on `axes`) that is not 1: the smallest such axis, and at
// most the last axis (a scalar is spread over the last axis, not repeated per
// element).
std::size_t firstColumnAxis(const BroadcastConstant& c, const std::vector<std::size_t>& axes, std::size_t rank);

// The elements of the input's axes from..rank-1 (long double: from the
// shapes alone, as the up-front memory check counts).
long double columnsFrom(const std::vector<std::uint64_t>& in, std::size_t from);

// c's value at every element of the input's axes from..rank-1 (row-major):
// the per-column vector of a per-column op over rows of that many elements.
std::vector<double> expandBroadcast(const BroadcastConstant& c, const std::vector<std::size_t>& axes,
                                    const std::vector<std::uint64_t>& in, std::size_t from);

// A constant of layer `l` (non-trainable state "<layer>/<name>", in the
// compute type, its initial values `values`).
std::size_t addLayerConstant(TrainingGraphBuilder& b, const LayerSpec& l, const std::string& name,
                             const std::vector<double>& values);

}  // namespace ipusim::scheduler
