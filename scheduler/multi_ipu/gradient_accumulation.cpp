#include "scheduler/multi_ipu/gradient_accumulation.hpp"

#include "scheduler/multi_ipu/update_vertices.hpp"

#include <algorithm>
#include <map>

namespace ipusim::scheduler {
ir::Id addAccumulationExecute(ir::Executable& exe, const std::string& name, std::vector<ir::Vertex> vertices) {
  ir::ComputeSet cs;
  cs.name = name;
  cs.vertices = std::move(vertices);
  cs.debug = {"training", "gradient_accumulation"};
  ir::Program p;
  p.kind = ir::ProgramKind::Execute;
  p.name = name;
  p.debug = cs.debug;
  p.computeSet = exe.addComputeSet(std::move(cs));
  return exe.addProgram(p);
}

namespace {

// Pieces [b, e) of `t` per tile interval, each dealt over the worker contexts.
template <class Emit>
void perWorker(const ir::Tensor& t, std::uint32_t workers, Emit emit) {
  for (const ir::TileInterval& iv : t.mapping) {
    const std::uint64_t parts = std::min<std::uint64_t>(workers, iv.end - iv.begin);
    for (std::uint64_t w = 0; w < parts; ++w) {
      const std::uint64_t b = iv.begin + (iv.end - iv.begin) * w / parts;
      const std::uint64_t e = iv.begin + (iv.end - iv.begin) * (w + 1) / parts;
      if (b < e) emit(iv.tile, b, e);
    }
  }
}

}  // namespace

GradientAccumulation accumulateGradients(ir::Executable& exe, const std::vector<ir::Id>& updateSequences,
                                         std::uint32_t workerContexts) {
  GradientAccumulation out;
  std::map<ir::Id, ir::Id> accumulatorOf;  // gradient -> accumulator
  std::vector<ir::Id> gradients;
  for (ir::Id seq : updateSequences)
    for (ir::Id child : exe.programs[seq].children) {
      const ir::Program& p = exe.programs[child];
      if (p.kind != ir::ProgramKind::Execute) continue;
      for (ir::Vertex& v : exe.computeSets[p.computeSet].vertices) {
        const char* gradient = gradientField(v);
        for (ir::VertexField& f : v.fields) {
          if (f.name != gradient) continue;
          auto [it, added] = accumulatorOf.emplace(f.ref.tensor, ir::kNoId);
          if (added) {
            ir::Tensor acc = exe.tensors[f.ref.tensor];
            acc.id = ir::Id(exe.tensors.size());
            acc.name = acc.name + "/accumulator";
            acc.category = "gradients";
            acc.alwaysLive = true;
            acc.initialValue.clear();
            acc.drawnInit.reset();
            for (ir::TileInterval& iv : acc.mapping) iv.address = ir::TileInterval::kUnplaced;
            it->second = acc.id;
            gradients.push_back(f.ref.tensor);
            exe.tensors.push_back(std::move(acc));
          }
          f.ref.tensor = it->second;  // the update reads the accumulated sum
        }
      }
    }
  std::vector<ir::Vertex> add, zero;
  for (ir::Id g : gradients) {
    const ir::Id acc = accumulatorOf[g];
    const ir::Tensor& t = exe.tensors[acc];
    const bool half = t.dtype == ir::DType::Half;
    perWorker(t, workerContexts, [&](std::uint32_t tile, std::uint64_t b, std::uint64_t e) {
      add.push_back({half ? "ScaledAdd<half>" : "ScaledAdd", tile, {{"data", {acc, b, e}}, {"deltas", {g, b, e}}},
                     {{"scale", 1.0}}});
      zero.push_back({half ? "Fill<half>" : "Fill", tile, {{"out", {acc, b, e}}}, {{"value", 0.0}}});
    });
    out.accumulators.push_back(acc);
  }
  out.accumulate = addAccumulationExecute(exe, "gradient_accumulation/add", std::move(add));
  out.zero = addAccumulationExecute(exe, "gradient_accumulation/zero", std::move(zero));
  return out;
}

}  // namespace ipusim::scheduler
