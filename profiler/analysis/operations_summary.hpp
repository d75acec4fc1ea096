#pragma once
// OperationsSummary: PopVision's Operations Summary — where the device cycles
// of a training step go, per workload layer and op (the programs' debug info).
//
// Definitions:
// - Windows: the captured "step" slices (engine track); a profile without
//   steps uses the captured runs. Cycles are summed over all of them and
//   divided by their count for "per step" figures.
// - A BSP slice (bsp tracks, every IPU) of category compute, exchange,
//   ipu_link (counted as exchange), sync or collective (counted as what its
//   phase does: compute, exchange or sync) is clipped to the windows and
//   attributed to its program's layer/op; a program without debug info takes
//   its nearest ancestor's, else the row ("", "").
// - Pass: "step" for the training-loop programs (layer "training"),
//   "recompute" when the op's name starts with "recompute/" (a forward op run
//   again for the backward pass: scheduler/graph/recomputation.hpp),
//   "update" when it ends in "_update", "gradient" when it contains "grad",
//   else "forward".
// - The rows' cycles add up exactly to the windows' compute + exchange +
//   ipu link + collective + sync cycles of DeviceActivity (the slices of one bsp track
//   do not overlap).
// - FLOPs: program_work.flops per execution of the op's Execute programs,
//   executions counted as compute slices on the first IPU (in IPU order)
//   whose bsp track shows the program's compute: once per execution, not
//   once per replica, and a sharded or pipelined model's later IPUs counted.
//   Achieved FLOP/s: FLOPs over the op's cycles (compute + exchange + sync);
//   peak: the target's AMP float rate, 2 x tile.ampFloatMacsPerCycle x tiles
//   x IPUs x clock.
// - Tiles: the most tiles any of the op's compute sets uses; memory: bytes of
//   the tensors whose debug info names the layer and op.
#include "profiler/analysis/profile_target.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct OperationRow {
  std::string layer, op, pass;
  std::int64_t compute = 0, exchange = 0, sync = 0;  // cycles over all windows
  std::int64_t streamingMemory = 0;                  // its remote-buffer copies (offloaded optimizer state)
  std::int64_t flops = 0;                            // over all windows
  std::int64_t tiles = 0;
  std::int64_t memoryBytes = 0;
  std::vector<std::int64_t> programIds;              // programs attributed to it (to select their slices)
  std::int64_t cycles() const { return compute + exchange + sync + streamingMemory; }
};

struct OperationsSummary {
  ProfileTarget target;
  std::int64_t windows = 0;         // steps (or runs) measured
  bool byStep = true;               // false: windows are runs (no step slices)
  std::int64_t windowCycles = 0;    // their total length
  std::int64_t busyCycles = 0;      // compute + exchange + ipu link + collective + sync + Streaming Memory over all IPUs
  double peakFlopsPerCycle = 0;     // the AMP float peak of the whole target
  std::vector<OperationRow> rows;   // by cycles, largest first

  // Per window (step) figures.
  double perWindow(std::int64_t value) const { return windows > 0 ? double(value) / double(windows) : 0.0; }
  // Share of the windows' time (all IPUs) an op takes.
  double share(const OperationRow& row) const;
  // Achieved FLOP/s of an op, 0 when its cycles or the clock are unknown.
  double flopsPerSecond(const OperationRow& row) const;
  double peakFlopsPerSecond() const { return peakFlopsPerCycle * target.clockHz; }
};

enum class OperationSort { Cycles, Flops, Memory, Name };
OperationSort parseOperationSort(const std::string& name);  // throws std::invalid_argument naming the value

// Throws traces::ProfileError on a malformed profile.
OperationsSummary summarizeOperations(const traces::ProfileReader& reader);
void sortOperations(OperationsSummary& summary, OperationSort sort);

nlohmann::json operationsToJson(const OperationsSummary& summary);
void printOperations(const OperationsSummary& summary, std::ostream& out);

}  // namespace ipusim::profiler::analysis
