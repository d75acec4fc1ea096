#pragma once
// Insights: the bottleneck of a profile in plain words, the knob that moves
// it and the expected gain — PopVision's Insights, computed from the profile.
//
// Rules (each is one function of ProfileFacts; thresholds in InsightLimits):
// - host_bound: the IPU waits for the host (host_wait_share.hpp) for at
//   least `hostBoundShare` of the captured time. Knob: with feeds, raise
//   steps_per_execution tenfold; without feeds, turn feeds on with
//   steps_per_execution 10; at most the profile's steps, and the largest
//   such value that divides them (and is a multiple of the present one),
//   as a workload takes it (none: the rule does not fire). Gain: the
//   per-run cost shrinks with the number of runs: saved = runs x per-run
//   cost x (1 - old/new steps per run), where
//   the per-run cost is the time outside Engine::run per run (first run start
//   to last run end minus the runs' time, over the runs), plus the part of a
//   captured run outside its steps (its duration minus its step slices'),
//   plus the extra wait of a run's first StreamCopy Begin over the median
//   Begin of the other copies (the host stream service starting up for the
//   run) — the last two averaged over the captured runs. Costs per step
//   (each copy's service time) do not shrink and are not counted.
// - device_bound: the IPU waits for the host less than `hostBoundShare` and
//   compute + exchange + sync take at least `deviceBoundShare` of the
//   captured time. Names the largest phase and the op (operations summary)
//   taking most of it; the knob is that op (its layer's size or the batch
//   size).
// - tile_balance: compute takes at least `balanceMinComputeShare` of the
//   captured time and the parallel efficiency of the compute (range_stats:
//   tile cycles over busiest tile x all tiles, needs tile detail) is below
//   `balanceLimit`. Names the largest op and the tiles it uses; gain: at most
//   (1 - efficiency) of its compute if spread over all tiles.
// - tile_memory: the fullest tile holds at least `memoryFullShare` of its
//   capacity. Knob: ipu.available_memory_proportion (matmul plans) or more
//   tiles; gain: headroom before out of memory. With optimizer slot
//   variables always live there (not the step counter or per-tile
//   scalars), also sharding them over the replicas, or with one replica
//   Streaming Memory, and what that saves on the tile.
// - recomputation: ops of pass "recompute" (operations_summary.hpp: forward
//   ops run again for the backward pass, training.recompute_checkpoints)
//   take device time. States their share of the busy time; knob: fewer
//   recomputed segments (more checkpoints) where memory allows; gain: that
//   share, at most.
// - streaming_memory: ops copy optimizer state to and from Streaming Memory
//   (training.offload_optimizer_state: the updates' remote-buffer copies).
//   States their share of the busy time; knob: keep the state on the tiles
//   where the memory allows; gain: that share, at most.
#include "profiler/analysis/host_wait_share.hpp"
#include "profiler/analysis/operations_summary.hpp"
#include "profiler/analysis/report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct InsightLimits {
  double hostBoundShare = 0.25;
  double deviceBoundShare = 0.5;
  double balanceLimit = 0.25;
  double balanceMinComputeShare = 0.1;
  double memoryFullShare = 0.9;
};

// What the rules read, measured once from a profile.
struct ProfileFacts {
  ProfileReport report;
  OperationsSummary operations;
  HostWaitShare hostWait;
  std::optional<double> parallelEfficiency;  // of the captured compute; empty without tile detail
  std::int64_t stepsPerExecution = 0;        // meta steps_per_execution, 0 when unknown
  std::optional<bool> feeds;                 // meta feeds
  double runCostInsideCycles = 0;            // per captured run: outside its steps + its first Begin's extra wait
  bool optimizerStateSharded = false;        // an all_gather of the weights follows the updates (replication.hpp)
  bool pipelined = false;                    // the step runs pipeline stages (a training/pipeline program)
  bool optimizerSlotVariables = false;       // an always-live slot variable (momentum, Adam's m and v, ...)
  std::int64_t optimizerScalarBytesPerTile = 0;  // the step counter's and per-tile scalars' bytes on a tile
  // meta recompute_auto_checkpoints: how many checkpoints
  // training.recompute_checkpoints "auto" finds in the model (0: it refuses
  // the model); empty when the profile does not say.
  std::optional<std::int64_t> autoRecomputeCheckpoints;
  // meta recompute_auto_ops: how many forward ops the fit would recompute as
  // "auto" (or a pipeline's "Auto") makes it (0: recomputation would not
  // help); empty when the profile does not say.
  std::optional<std::int64_t> autoRecomputedOps;
};

struct Insight {
  std::string rule;      // host_bound, device_bound, tile_balance, tile_memory, recomputation, streaming_memory
  std::string finding;   // the bottleneck in plain words
  std::string knob;      // what to change
  std::string gain;      // the expected gain
  double weight = 0;     // share of time (or memory) it concerns, to order insights
  nlohmann::json figures;
};

ProfileFacts measureProfileFacts(const traces::ProfileReader& reader);

std::optional<Insight> hostBoundInsight(const ProfileFacts& facts, const InsightLimits& limits = {});
std::optional<Insight> deviceBoundInsight(const ProfileFacts& facts, const InsightLimits& limits = {});
std::optional<Insight> tileBalanceInsight(const ProfileFacts& facts, const InsightLimits& limits = {});
std::optional<Insight> tileMemoryInsight(const ProfileFacts& facts, const InsightLimits& limits = {});
std::optional<Insight> recomputationInsight(const ProfileFacts& facts, const InsightLimits& limits = {});
std::optional<Insight> streamingMemoryInsight(const ProfileFacts& facts, const InsightLimits& limits = {});

// Every rule that fires, heaviest first.
std::vector<Insight> findInsights(const ProfileFacts& facts, const InsightLimits& limits = {});

nlohmann::json insightsToJson(const std::vector<Insight>& insights, const ProfileFacts& facts);
void printInsights(const std::vector<Insight>& insights, const ProfileFacts& facts, std::ostream& out);

}  // namespace ipusim::profiler::analysis
