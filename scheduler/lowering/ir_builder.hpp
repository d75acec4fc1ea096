#pragma once
// IrBuilder: the executable under construction, for the lowering's parts
// (ops, matmuls, reductions). It adds tensors with their tile mapping,
// Copy and Execute programs to the current op, tags every program with the
// op's debug info, and records for each tensor the first and last program
// step that uses it (the liveness the memory planner shares bytes by).
// Step 0 is the step's input stream copies; the programs added here are
// steps 1, 2, ...; the caller closes the step with its output copies.
#include "model/ir/executable.hpp"
#include "model/target.hpp"
#include "scheduler/planning/tile_placement.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

using Params = std::map<std::string, double>;
using UseSpan = std::pair<std::size_t, std::size_t>;  // first, last step using a tensor

class IrBuilder {
 public:
  explicit IrBuilder(const model::Target& target) : target_(target) {}

  const model::Target& target() const { return target_; }
  // Sharding: the op being built works on tiles [base, base + tiles) (its
  // shard's IPU). Placements given here and vertex tiles are relative to the
  // base and stored offset by it; placementOf() answers relative to it, so a
  // tensor of another shard never matches a placement of this one (its tiles
  // come out outside the shard's range) and is copied over by the caller.
  void setTileBase(std::uint32_t base) { tileBase_ = base; }
  std::uint32_t tileBase() const { return tileBase_; }
  // The tiles one op may spread over (one IPU's when sharded; every tile by default).
  void setOpTiles(std::uint32_t tiles) { opTiles_ = tiles; }
  std::uint32_t opTiles() const { return opTiles_ ? opTiles_ : target_.totalTiles(); }
  ir::Executable& exe() { return exe_; }
  const ir::Tensor& tensor(ir::Id id) const { return exe_.tensors[id]; }

  // The op whose programs follow (debug info, names "<layer>/<op>/<what>").
  void beginOp(const ir::DebugInfo& debug);
  // The op's programs (Copy / Execute), in order; clears them.
  std::vector<ir::Id> endOp();

  ir::Id addTensor(const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype,
                   const std::string& category, bool alwaysLive, const Placement& placement);
  // A tensor of per-tile blocks: block b (sizes[b] elements) on tiles[b],
  // one after another. Returns the tensor and each block's first element
  // (callers std::tie them: clang before 16, which the sanitizer and fuzz
  // builds use, cannot capture a structured binding in a lambda).
  std::pair<ir::Id, std::vector<std::uint64_t>> addBlocks(const std::string& name, ir::DType dtype,
                                                         const std::vector<std::uint32_t>& tiles,
                                                         const std::vector<std::uint64_t>& sizes);
  Placement placementOf(ir::Id tensor) const;

  // One Copy program (one exchange phase) of every region; `estimate` is
  // its cycles as the caller's cost model sees them.
  void copy(std::vector<ir::CopyRegion> regions, const std::string& what, ir::Cycles estimate);
  // A remote buffer holding `tensor` between its copies (its elements, dtype
  // and `initialValue`), and one RemoteCopy of the tensor to it (`store`) or
  // from it, estimated as the model times it (model/hardware/streaming_memory.hpp).
  ir::Id addRemoteBuffer(ir::Id tensor, std::vector<double> initialValue);
  void remoteCopy(ir::Id tensor, ir::Id buffer, bool store);
  // One Execute of a compute set of these vertices; its cycles are
  // estimated from the codelets (the first `estimated` only: a sharded
  // update's, whose replicas each run one shard) and added to the step estimate.
  void execute(std::vector<ir::Vertex> vertices, const std::string& what, std::size_t estimated = SIZE_MAX);

  // A use of a tensor by the program being built (extends its span).
  void use(ir::Id tensor);
  void useAt(ir::Id tensor, std::size_t step);
  std::size_t currentStep() const { return step_; }
  const std::vector<UseSpan>& useSpans() const { return spans_; }
  ir::Cycles estimatedCycles() const { return estimate_; }

 private:
  ir::Id addProgram(ir::Program p);

  const model::Target& target_;
  ir::Executable exe_;
  ir::DebugInfo debug_;
  std::vector<ir::Id> opPrograms_;
  std::vector<UseSpan> spans_;
  std::size_t step_ = 1;
  std::uint32_t tileBase_ = 0;
  std::uint32_t opTiles_ = 0;
  ir::Cycles estimate_ = 0;
};

}  // namespace ipusim::scheduler
