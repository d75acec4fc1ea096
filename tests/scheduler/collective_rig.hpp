#pragma once
// A collective on the machine model, for the collectives' tests
// (collectives_test.cpp, pod_all_reduce_test.cpp): R replicas, one per IPU,
// one tensor of R copies of `elements` floats (replica r's copy spread
// evenly over its IPU's 8 tiles, value r * 100 + i % 7, and a buffer mapped
// alike), the collective's steps as one program (each step's Copy, then an
// Execute where it adds or scales), and its values after one run.
#include "scheduler/multi_ipu/collectives.hpp"

#include "../model/test_system_rig.hpp"
#include "model/ir/graph_builder.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ipusim::model::testing {

struct Replicated {
  ir::Executable exe;
  ir::Id data = ir::kNoId;
  std::vector<std::string> stepNames;
};

// The steps `collective` makes of the replicated tensor and its buffer.
inline Replicated buildCollective(
    const Target& target, std::uint32_t replicas, std::uint64_t elements,
    const std::function<std::vector<scheduler::CollectiveStep>(const ir::Tensor& data, const ir::Tensor& received)>&
        collective) {
  ir::GraphBuilder b(target, "collective");
  const ir::Id data = b.addTensor("grad", {replicas * elements}, ir::DType::Float);
  const ir::Id received = b.addTensor("received", {replicas * elements}, ir::DType::Float);
  std::vector<double> init(replicas * elements);
  for (std::uint32_t r = 0; r < replicas; ++r)
    for (std::uint64_t i = 0; i < elements; ++i) {
      init[r * elements + i] = r * 100.0 + double(i % 7);
      for (ir::Id t : {data, received})
        b.mapInterval(t, r * elements + i, r * elements + i + 1, r * 8 + std::uint32_t(i * 8 / elements));
    }
  b.setInitialValue(data, init);
  Replicated out;
  std::vector<ir::Id> programs;
  for (const scheduler::CollectiveStep& step : collective(b.tensor(data), b.tensor(received))) {
    out.stepNames.push_back(step.what);
    if (!step.copy.empty()) programs.push_back(b.copy(step.copy, step.what));
    if (step.vertices.empty()) continue;
    const ir::Id cs = b.addComputeSet(step.what + "/add");
    for (const ir::Vertex& v : step.vertices) b.addVertex(cs, v.codelet, v.tile, v.fields, v.params);
    programs.push_back(b.execute(cs));
  }
  b.addEntryPoint("collective", b.sequence(programs));
  out.exe = b.finish();
  out.data = data;
  return out;
}

// Runs the collective once (one simulation per process), functional: the
// replicated tensor's values after it.
inline std::vector<float> valuesAfter(const Target& target, const Replicated& g) {
  Rig rig(target);
  rig.system.load(g.exe);
  rig.device = [&](Rig& r) { r.system.run(0); };
  rig.simulate();
  return asFloats(rig.system.readTensor(g.data));
}

}  // namespace ipusim::model::testing
