#include "scheduler/models/layer_graph.hpp"
#include "scheduler/models/workload_limits.hpp"

#include "scheduler/layers/layer.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace ipusim::scheduler {
std::vector<std::size_t> connectLayers(std::vector<LayerSpec>& layers, const LayerConnections& c, const std::string& source,
                   const LayerKeyNamer& where) {
  constexpr std::size_t kUnplaced = ~std::size_t(0);
  const std::size_t n = layers.size();
  auto fail = [&](std::size_t i, const std::string& key, const std::string& what) {
    throw std::invalid_argument(source + ": " + where(i, key) + ": " + what);
  };
  std::unordered_map<std::string, std::size_t> byName;
  for (std::size_t i = 0; i < n; ++i)
    if (!byName.emplace(layers[i].name, i).second) fail(i, "name", "'" + layers[i].name + "' names two layers");
  std::unordered_map<std::string, std::size_t> inputByName;
  for (std::size_t k = 0; k < c.modelInputs.size() && k < kMaxModelInputs; ++k) inputByName.emplace(c.modelInputs[k], k);
  std::string inputNames;
  for (const std::string& name : c.modelInputs) inputNames += (inputNames.empty() ? "'" : ", '") + name + "'";
  const bool several = c.modelInputs.size() > 1;
  // Inputs by original index.
  std::vector<std::vector<std::size_t>> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<std::string> none;
    const std::vector<std::string>& names = i < c.inputs.size() ? c.inputs[i] : none;
    if (names.empty()) {
      in[i] = {i == 0 ? modelInput(0) : i - 1};
    } else {
      for (const std::string& name : names) {
        const auto it = byName.find(name);
        const auto input = inputByName.find(name);
        if (it != byName.end()) in[i].push_back(it->second);
        else if (input != inputByName.end()) in[i].push_back(modelInput(input->second));
        else if (const std::string overlong = overlongReference(name); !overlong.empty())
          fail(i, c.inputsKey, overlong);
        else
          fail(i, c.inputsKey, "'" + name + "' names no layer (nor the model's input" + (several ? "s " : " ") + inputNames + ")");
        if (in[i].back() == i) fail(i, c.inputsKey, "the layer reads its own output");
      }
    }
    const Layer::Arity arity = layerOfKind(layers[i].kind).arity();
    if (in[i].size() < arity.fewest || in[i].size() > arity.most)
      fail(i, c.inputsKey, "a " + layers[i].kind + " layer " + arity.what + ", got " + std::to_string(in[i].size()));
  }
  // The outputs: the named layers, else the one layer no layer reads (a chain's last).
  std::vector<std::size_t> outputs;
  for (const std::string& name : c.outputs) {
    const auto it = byName.find(name);
    if (it == byName.end())
      throw std::invalid_argument(source + ": " + c.outputKey + ": " +
                                  (overlongReference(name).empty() ? "'" + name + "' names no layer" : overlongReference(name)));
    if (std::find(outputs.begin(), outputs.end(), it->second) != outputs.end())
      throw std::invalid_argument(source + ": " + c.outputKey + ": '" + name + "' is named twice (one loss per output)");
    outputs.push_back(it->second);
  }
  if (outputs.empty()) {
    std::size_t output = n - 1;
    std::vector<char> read(n, 0);
    for (const auto& ins : in)
      for (std::size_t j : ins)
        if (!isModelInput(j)) read[j] = 1;
    std::vector<std::size_t> sinks;
    for (std::size_t i = 0; i < n; ++i)
      if (!read[i]) sinks.push_back(i);
    if (sinks.size() > 1) {
      std::string names;
      for (std::size_t i : sinks) names += (names.empty() ? "'" : ", '") + layers[i].name + "'";
      fail(sinks[1], "", "no layer reads the outputs of " + names + ": a model has one output (the layer no other reads)");
    }
    if (!sinks.empty()) output = sinks[0];
    outputs.push_back(output);
  }
  // The last output is released last, unless a layer reads it (then only
  // the order of the layers decides).
  std::size_t output = outputs.back();
  // Every layer must lead to an output.
  std::vector<char> used(n, 0);
  std::vector<std::size_t> stack;
  for (std::size_t o : outputs) used[o] = 1, stack.push_back(o);
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    for (std::size_t j : in[i])
      if (!isModelInput(j) && !used[j]) used[j] = 1, stack.push_back(j);
  }
  std::string outputNames;
  for (std::size_t o : outputs) outputNames += (outputNames.empty() ? "'" : ", '") + layers[o].name + "'";
  for (std::size_t i = 0; i < n; ++i)
    if (!used[i])
      fail(i, "", "its output does not lead to the model's output" + std::string(outputs.size() > 1 ? "s (" : " (") +
                      outputNames + ")");
  // Kahn's algorithm, the lowest original index first (the given order where
  // it is topological); the output is released last.
  std::vector<std::size_t> pending(n, 0);
  std::vector<std::vector<std::size_t>> readers(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j : in[i])
      if (!isModelInput(j)) ++pending[i], readers[j].push_back(i);
  if (!readers[output].empty()) output = kUnplaced;
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (!pending[i] && i != output) ready.push(i);
  std::vector<std::size_t> order, position(n, kUnplaced);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    position[i] = order.size();
    order.push_back(i);
    for (std::size_t r : readers[i])
      if (--pending[r] == 0 && r != output) ready.push(r);
  }
  if (output != kUnplaced && pending[output] == 0 && order.size() == n - 1) {
    position[output] = order.size();
    order.push_back(output);
  }
  if (order.size() != n) {
    // A cycle: walk back from a layer left over through inputs left over until one repeats.
    std::size_t at = 0;
    while (position[at] != kUnplaced) ++at;
    std::vector<std::size_t> path, seenAt(n, kUnplaced);
    while (seenAt[at] == kUnplaced) {
      seenAt[at] = path.size();
      path.push_back(at);
      for (std::size_t j : in[at])
        if (!isModelInput(j) && position[j] == kUnplaced) { at = j; break; }
    }
    // path[k + 1] is an input of path[k]: the data flows from the end of the path to `at`.
    std::string cycle = "'" + layers[at].name + "' -> ";
    for (std::size_t k = path.size(); k-- > seenAt[at] + 1;) cycle += "'" + layers[path[k]].name + "' -> ";
    fail(at, c.inputsKey, "the layers' inputs form a cycle: " + cycle + "'" + layers[at].name + "'");
  }
  std::vector<LayerSpec> sorted;
  sorted.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    LayerSpec l = std::move(layers[order[k]]);
    l.inputs.clear();
    for (std::size_t j : in[order[k]]) l.inputs.push_back(isModelInput(j) ? j : position[j]);
    sorted.push_back(std::move(l));
  }
  layers = std::move(sorted);
  for (std::size_t& o : outputs) o = position[o];
  return outputs;
}

}  // namespace ipusim::scheduler
