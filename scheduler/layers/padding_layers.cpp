#include "scheduler/layers/padding_layers.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

PaddedGeometry paddedGeometryOf(const std::vector<std::uint64_t>& s) {
  if (s.size() == 4) return {s[0], s[1], s[2], s[3]};
  if (s.size() == 3) return {s[0], 1, s[1], s[2]};
  throw std::logic_error("paddedGeometryOf: expected a rank-3 or rank-4 value");
}

namespace {

bool count(const nlohmann::json& v, std::uint32_t& out) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 0xffffff) return false;
  out = std::uint32_t(v.get<std::int64_t>());
  return true;
}

// [before, after] (or one count for both).
bool pair(const nlohmann::json& v, std::uint32_t& before, std::uint32_t& after, bool oneCount) {
  if (oneCount && count(v, before)) return after = before, true;
  return v.is_array() && v.size() == 2 && count(v[0], before) && count(v[1], after);
}

}  // namespace

std::optional<std::array<std::uint32_t, 4>> padsFromJson(const nlohmann::json& v, bool twoD) {
  std::array<std::uint32_t, 4> p{0, 0, 0, 0};
  if (!twoD) return pair(v, p[2], p[3], true) ? std::optional(p) : std::nullopt;
  if (count(v, p[0])) return std::array<std::uint32_t, 4>{p[0], p[0], p[0], p[0]};
  if (!v.is_array() || v.size() != 2) return std::nullopt;
  if (v[0].is_array() || v[1].is_array())
    return pair(v[0], p[0], p[1], false) && pair(v[1], p[2], p[3], false) ? std::optional(p) : std::nullopt;
  return pair(v[0], p[0], p[1], true) && pair(v[1], p[2], p[3], true) ? std::optional(p) : std::nullopt;
}

const char* padsForms(bool twoD) {
  return twoD ? "a count, [rows, columns] or [[top, bottom], [left, right]] of counts up to 16777215"
              : "a count or [before, after] of counts up to 16777215";
}

namespace {

// Pad2D or Crop2D from `input` with `pads` (rows before/after, columns before/after).
std::size_t addOp(OpGraph& g, OpKind kind, std::size_t input, const std::array<std::uint64_t, 4>& pads,
                  const std::string& layer, const std::string& name, ValueKind valueKind) {
  std::vector<std::uint64_t> shape = g.values[input].shape;
  const bool rank4 = shape.size() == 4;
  const int sign = kind == OpKind::Pad2D ? 1 : -1;
  if (rank4) shape[1] += sign * std::int64_t(pads[0] + pads[1]);
  shape[rank4 ? 2 : 1] += sign * std::int64_t(pads[2] + pads[3]);
  const std::size_t out = g.addValue({layer + "/" + name, shape, g.values[input].dtype, valueKind, layer});
  Op op{kind, name, layer, {input}, {out}};
  op.pads = pads;
  g.addOp(op);
  return out;
}

}  // namespace

std::size_t addPaddingOrCropping(OpGraph& g, const LayerSpec& l, std::size_t input, std::uint64_t batch) {
  const bool crop = l.kind == layer_kind::kCropping1D || l.kind == layer_kind::kCropping2D;
  const std::array<std::uint64_t, 4> pads{l.pads[0], l.pads[1], l.pads[2], l.pads[3]};
  const std::size_t out = addOp(g, crop ? OpKind::Crop2D : OpKind::Pad2D, input, pads, l.name,
                                crop ? "crop" : "pad", ValueKind::Activation);
  std::vector<std::uint64_t> expected{batch};
  expected.insert(expected.end(), l.outputShape.begin(), l.outputShape.end());
  if (g.values[out].shape != expected) throw std::logic_error("layer '" + l.name + "': padding shape mismatch");
  return out;
}

std::size_t addPaddingOrCroppingGrad(OpGraph& g, std::size_t opIndex, std::size_t outputGrad) {
  const Op forward = g.ops[opIndex];  // a copy: the op list grows
  const OpKind kind = forward.kind == OpKind::Pad2D ? OpKind::Crop2D : OpKind::Pad2D;
  return addOp(g, kind, outputGrad, forward.pads, forward.layer, forward.name + "_grad", ValueKind::Gradient);
}

}  // namespace ipusim::scheduler
