#include "scheduler/layers/broadcast_constant.hpp"

#include "scheduler/graph/training_graph.hpp"

#include <algorithm>

namespace ipusim::scheduler {

BroadcastConstant readBroadcastConstant(const nlohmann::json& v, const std::function<void(const std::string&)>& fail) {
  const std::string expected = "expected a number or a (nested) list of numbers, got ";
  const nlohmann::json* value = &v;
  const std::string cls = v.is_object() && v.contains("class_name") && v["class_name"].is_string()
                              ? v["class_name"].get<std::string>() : "";
  if (cls == "__numpy__" || cls == "__tensor__") {
    if (!v.contains("config") || !v["config"].is_object() || !v["config"].contains("value")) fail(expected + v.dump());
    value = &v["config"]["value"];
  }
  BroadcastConstant c;
  // Depth first: the shape from the first element of each level, every
  // list of a level checked to have that length.
  std::function<void(const nlohmann::json&, std::size_t)> walk = [&](const nlohmann::json& e, std::size_t depth) {
    if (e.is_number()) {
      if (depth != c.shape.size()) fail("a ragged array: " + v.dump());
      c.values.push_back(e.get<double>());
      return;
    }
    if (!e.is_array() || e.empty()) fail(expected + v.dump());
    if (depth == c.shape.size() && c.values.empty()) c.shape.push_back(e.size());
    if (depth >= c.shape.size() || c.shape[depth] != e.size()) fail("a ragged array: " + v.dump());
    for (const auto& x : e) walk(x, depth + 1);
  };
  walk(*value, 0);
  return c;
}

void checkBroadcast(const BroadcastConstant& c, const std::vector<std::size_t>& axes, const std::vector<std::uint64_t>& in,
                    const std::function<void(const std::string&)>& fail) {
  for (std::size_t d = 0; d < c.shape.size(); ++d)
    if (c.shape[d] != 1 && c.shape[d] != in.at(axes[d]))
      fail("shape " + shapeText(c.shape) + " does not broadcast against the " + shapeText(in) + " input (its dimension " +
           std::to_string(d) + ", " + std::to_string(c.shape[d]) + ", lies on axis " + std::to_string(axes[d] + 1) +
           " of size " + std::to_string(in.at(axes[d])) + ")");
}

std::vector<std::size_t> trailingAxes(const BroadcastConstant& c, std::size_t rank) {
  std::size_t lead = 0;
  while (lead < c.shape.size() && c.shape[lead] == 1) ++lead;  // numpy: leading ones broadcast anywhere
  std::vector<std::size_t> axes(c.shape.size(), 0);
  const std::size_t dims = c.shape.size() - lead;
  for (std::size_t d = lead; d < c.shape.size(); ++d) axes[d] = rank - dims + (d - lead);
  return axes;
}

std::size_t firstColumnAxis(const BroadcastConstant& c, const std::vector<std::size_t>& axes, std::size_t rank) {
  std::size_t from = rank - 1;
  for (std::size_t d = 0; d < c.shape.size(); ++d)
    if (c.shape[d] != 1) from = std::min(from, axes[d]);
  return from;
}

long double columnsFrom(const std::vector<std::uint64_t>& in, std::size_t from) {
  long double n = 1;
  for (std::size_t a = from; a < in.size(); ++a) n *= in[a];
  return n;
}

std::vector<double> expandBroadcast(const BroadcastConstant& c, const std::vector<std::size_t>& axes,
                                    const std::vector<std::uint64_t>& in, std::size_t from) {
  std::uint64_t columns = 1;
  for (std::size_t a = from; a < in.size(); ++a) columns *= in[a];
  std::vector<double> out(columns);
  std::vector<std::uint64_t> index(in.size(), 0);  // the input position (axes from.. used)
  for (std::uint64_t e = 0; e < columns; ++e) {
    std::uint64_t rest = e;
    for (std::size_t a = in.size(); a-- > from;) index[a] = rest % in[a], rest /= in[a];
    std::uint64_t at = 0;
    for (std::size_t d = 0; d < c.shape.size(); ++d) {
      const bool spread = c.shape[d] == 1 || axes[d] < from;
      at = at * c.shape[d] + (spread ? 0 : index[axes[d]]);
    }
    out[e] = c.values[at];
  }
  return out;
}

std::size_t addLayerConstant(TrainingGraphBuilder& b, const LayerSpec& l, const std::string& name,
                             const std::vector<double>& values) {
  const std::size_t v = b.state(l, name, {values.size()}, b.compute(), 0);
  b.graph().values[v].initialValues = values;
  return v;
}

}  // namespace ipusim::scheduler
