#pragma once
// GraphBuilder: a small Poplar-like API that builds an ir::Executable.
//
//   GraphBuilder b(Target::preset("ipu2"), "mlp");
//   Id w = b.addTensor("w1", {784, 128}, DType::Float, "weights");
//   b.mapLinearly(w, GraphBuilder::tileRange(0, 16), 128);
//   Id cs = b.addComputeSet("fwd/matmul");
//   b.addVertex(cs, "MatMulPartial", 0, {{"a", b.ref(x)}, {"b", b.ref(w, 0, 128)}}, {{"m", 1}});
//   b.addEntryPoint("train", b.sequence({b.execute(cs)}, "step"));
//   Executable exe = b.finish();
//
// Contract:
// - Ids returned are indices into the executable's tables; calls referring to
//   an unknown id or an out-of-range tile throw std::invalid_argument at once.
// - Mapping calls keep a tensor's intervals sorted and reject overlaps; the
//   completeness of every mapping is checked by finish().
// - finish() places every interval that has no address yet: per tile, a bump
//   allocation with 8-byte aligned starts, above the highest byte any already
//   placed interval of that tile uses. A memory planner that shares addresses
//   between not-always-live tensors sets those addresses first
//   (setIntervalAddress); they are left as they are. finish() then checks that
//   each tile's peak (ir::tileMemoryUsage: highest used byte, 8-byte aligned)
//   fits tile.memoryBytes, else throws Poplar's out-of-memory summary (unless
//   allowOutOfMemory), validates the executable and returns it.
#include "model/ir/executable.hpp"
#include "model/target.hpp"

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace ipusim::ir {

struct FinishOptions {
  bool allowOutOfMemory = false;  // debug.allowOutOfMemory: report, do not fail
};

// Per-tile memory use after finish(): the tile's peak (ir::tileMemoryUsage).
struct TileMemoryHighWater {
  std::uint32_t tile = 0;
  std::uint64_t bytes = 0;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const model::Target& target, std::string name = "graph");

  // --- tensors ---
  Id addTensor(const std::string& name, std::vector<std::uint64_t> shape, DType dtype,
               const std::string& category = "temporaries", DebugInfo debug = {});
  void setAlwaysLive(Id tensor, bool alwaysLive);
  void setInitialValue(Id tensor, std::vector<double> values);  // numElements values
  // Replaces the tensor's mapping: every element on `tile`.
  void setTileMapping(Id tensor, std::uint32_t tile);
  // Replaces the tensor's mapping: consecutive chunks of whole grains spread
  // evenly over `tiles` in order (Poplar's mapTensorLinearly); trailing tiles
  // may get nothing.
  void mapLinearly(Id tensor, const std::vector<std::uint32_t>& tiles, std::uint64_t grain = 1);
  // Adds elements [begin, end) on `tile` to the mapping (must not overlap).
  void mapInterval(Id tensor, std::uint64_t begin, std::uint64_t end, std::uint32_t tile);
  // Memory-plan interface: fixes the byte address of mapping[interval].
  void setIntervalAddress(Id tensor, std::size_t interval, std::uint64_t address);
  const Tensor& tensor(Id tensor) const;
  TensorRef ref(Id tensor) const;  // the whole tensor
  TensorRef ref(Id tensor, std::uint64_t begin, std::uint64_t end) const;
  static std::vector<std::uint32_t> tileRange(std::uint32_t first, std::uint32_t count);

  // --- compute ---
  Id addComputeSet(const std::string& name, DebugInfo debug = {});
  void addVertex(Id computeSet, const std::string& codelet, std::uint32_t tile, std::vector<VertexField> fields,
                 VertexParams params = {});

  // --- streams ---
  Id addStream(const std::string& name, StreamDirection direction, DType dtype, std::uint64_t elementsPerCopy,
               std::uint32_t bufferDepth = 1, DebugInfo debug = {});

  // --- programs (each returns the new program's id) ---
  Id sequence(std::vector<Id> children, const std::string& name = "sequence", DebugInfo debug = {});
  Id execute(Id computeSet, const std::string& name = "", DebugInfo debug = {});  // name: the compute set's
  Id copy(TensorRef src, TensorRef dst, const std::string& name = "copy", DebugInfo debug = {});
  // A multi-region Copy: every pair moved in ONE exchange phase (see program.hpp).
  // One pair is stored as a single-region Copy. Overlaps are checked by finish().
  Id copy(std::vector<CopyRegion> regions, const std::string& name = "copy", DebugInfo debug = {});
  Id streamCopy(Id stream, TensorRef tensor, const std::string& name = "", DebugInfo debug = {});  // name: the stream's
  Id repeat(std::uint64_t count, Id body, const std::string& name = "repeat", DebugInfo debug = {});
  Id repeatWhileTrue(Id conditionProgram, TensorRef condition, Id body, const std::string& name = "repeatWhileTrue",
                     DebugInfo debug = {});
  Id ifElse(TensorRef condition, Id thenBody, Id elseBody = kNoId, const std::string& name = "if",
            DebugInfo debug = {});
  Id sync(SyncType type, const std::string& name = "sync", DebugInfo debug = {});
  Id call(Id callee, const std::string& name = "call", DebugInfo debug = {});
  // Each execution of `program` counts as one training step.
  void markStep(Id program);
  void addEntryPoint(const std::string& name, Id program);

  void setOptions(nlohmann::json options);

  // Places, checks memory, validates; the builder is spent afterwards.
  Executable finish(const FinishOptions& options = {});
  // Filled by finish(): tiles with at least one byte used, in tile order.
  const std::vector<TileMemoryHighWater>& memoryHighWater() const { return highWater_; }

 private:
  Tensor& mutableTensor(Id id, const char* operation);
  void checkTile(std::uint32_t tile, const std::string& what) const;
  void checkProgram(Id id, const char* operation) const;
  Id addProgram(Program program);
  void placeUnplacedIntervals();
  void checkCapacity(const FinishOptions& options);

  model::Target target_;
  Executable exe_;
  std::vector<TileMemoryHighWater> highWater_;
  bool finished_ = false;
};

}  // namespace ipusim::ir
