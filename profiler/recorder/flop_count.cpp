#include "profiler/recorder/flop_count.hpp"

#include "model/codelets/per_worker.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace ipusim::profiler {

namespace {

double paramOr(const ir::Vertex& v, const char* name, double fallback) {
  const auto it = v.params.find(name);
  return it == v.params.end() ? fallback : it->second;
}

std::uint64_t largestField(const ir::Vertex& v) {
  std::uint64_t largest = 0;
  for (const auto& f : v.fields) largest = std::max(largest, f.ref.size());
  return largest;
}

// FLOPs per element of the largest field, for codelets counted that way.
const std::map<std::string, std::uint64_t>& flopsPerElement() {
  static const std::map<std::string, std::uint64_t> table = {
      {"Add", 1},       {"Sub", 1},        {"Mul", 1},      {"Div", 1},       {"Relu", 1},
      {"Exp", 1},       {"Log", 1},        {"Neg", 1},      {"Square", 1},    {"AddBias", 1},
      {"ReluGrad", 1},  {"ReduceSum", 1},  {"ReduceMax", 1}, {"ScaledAdd", 2},
      {"SoftmaxCrossEntropy", 4}, {"SoftmaxCrossEntropyGrad", 4}};
  return table;
}

// "MatMulPartial<half,float>" -> "MatMulPartial": every typed variant counts as its plain codelet, and a
// per-worker vertex as the codelet its workers run ("PerWorker<ReduceSum<float,half>>" -> "ReduceSum").
std::string baseName(const std::string& codelet) {
  const std::string worker = model::workerCodeletOf(codelet);
  return worker.substr(0, worker.find('<'));
}

}  // namespace

std::uint64_t vertexFlops(const ir::Vertex& vertex) {
  const std::string codelet = baseName(vertex.codelet);
  if (codelet == "MatMulPartial") {
    const double macs = paramOr(vertex, "m", 0) * paramOr(vertex, "k", 0) * paramOr(vertex, "n", 0);
    return static_cast<std::uint64_t>(2.0 * macs);
  }
  if (codelet.rfind("ConvPartial", 0) == 0 || codelet.rfind("ConvWeightUpdate", 0) == 0) {
    // Every output element of the vertex's field (for a weight update, of
    // its kernel) meets a whole window of its conv group's input channels.
    double macs = paramOr(vertex, "convGroups", 1);
    for (const char* dimension : {"batch", "outH", "outW", "outChans", "kernelH", "kernelW", "inChans"})
      macs *= paramOr(vertex, dimension, 0);
    return static_cast<std::uint64_t>(2.0 * macs);
  }
  const auto it = flopsPerElement().find(codelet);
  return it == flopsPerElement().end() ? 0 : it->second * largestField(vertex);
}

std::uint64_t computeSetFlops(const ir::ComputeSet& computeSet) {
  std::uint64_t flops = 0;
  for (const auto& v : computeSet.vertices) flops += vertexFlops(v);
  return flops;
}

}  // namespace ipusim::profiler
