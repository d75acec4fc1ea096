#include "profiler/analysis/insights.hpp"

#include "profiler/analysis/checked_sum.hpp"
#include "profiler/analysis/range_stats.hpp"
#include "profiler/analysis/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ipusim::profiler::analysis {

namespace {

std::int64_t metaInt(const traces::ProfileReader& reader, const std::string& key) {
  const std::string text = reader.metaValue(key);
  try {
    return text.empty() ? 0 : std::stoll(text);
  } catch (const std::exception&) {
    return 0;  // a tool's own meta key, not ours to validate
  }
}

std::string seconds(const ProfileTarget& target, double cycles) {
  if (target.clockHz <= 0) return formatNumber(cycles, 0) + " cycles";
  return formatSeconds(cycles / target.clockHz);
}

std::string opName(const OperationRow& row) {
  return row.layer.empty() ? std::string("(no debug info)") : row.layer + "/" + row.op;
}

// The op with most cycles in a phase bucket, or nullptr.
const OperationRow* largestOp(const OperationsSummary& ops, std::int64_t OperationRow::*bucket) {
  const OperationRow* best = nullptr;
  for (const auto& r : ops.rows)
    if (r.pass != "step" && (!best || r.*bucket > best->*bucket)) best = &r;
  return best;
}

}  // namespace

ProfileFacts measureProfileFacts(const traces::ProfileReader& reader) {
  ProfileFacts facts;
  facts.report = buildReport(reader);
  facts.operations = summarizeOperations(reader);
  facts.hostWait = hostWaitShare(facts.report);
  facts.stepsPerExecution = metaInt(reader, "steps_per_execution");
  for (const auto& program : reader.programs()) {
    if (program.layer == "training" && program.op == "all_gather") facts.optimizerStateSharded = true;
    if (program.layer == "training" && program.op == "pipeline") facts.pipelined = true;
  }
  // Of the always-live "optimizer" tensors, the slot variables (a weight's
  // "<layer>/<weight>/<slot>", its layer's) are what sharding and offloading
  // move; the step counter ("iterations", layer "training") and the per-tile
  // scalars ("optimizer/learning_rate", ...) stay whole on every tile they
  // are on, their bytes / tiles each.
  for (const auto& t : reader.tensors()) {
    if (t.category != "optimizer" || !t.alwaysLive) continue;
    const bool scalar = (t.layer == "training" || t.layer == "optimizer") &&
                        std::count(t.name.begin(), t.name.end(), '/') <= 1;
    if (!scalar) facts.optimizerSlotVariables = true;
    else if (t.tiles > 0)
      addChecked(facts.optimizerScalarBytesPerTile, t.bytes / t.tiles, reader.path(), "tensors.bytes");
  }
  if (!reader.metaValue("recompute_auto_checkpoints").empty())
    facts.autoRecomputeCheckpoints = metaInt(reader, "recompute_auto_checkpoints");
  if (!reader.metaValue("recompute_auto_ops").empty()) facts.autoRecomputedOps = metaInt(reader, "recompute_auto_ops");
  const std::string feeds = reader.metaValue("feeds");
  if (feeds == "true") facts.feeds = true;
  if (feeds == "false") facts.feeds = false;
  // Per captured run, its time outside its steps (Engine::run start-up, the
  // first copy's wait, the drain at the end).
  const auto runs = reader.runs();
  std::map<std::int64_t, std::int64_t> stepCycles;
  for (const auto& track : reader.tracks())
    if (track.kind == "engine")
      reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
        if (s.category == "step" && s.runId >= 0) addChecked(stepCycles[s.runId], s.dur, reader.path(), "slices.dur");
      });
  double inside = 0;
  std::int64_t captured = 0;
  for (const auto& r : runs) {
    const auto steps = stepCycles.find(r.id);
    if (!r.captured || steps == stepCycles.end()) continue;
    inside += double(std::max<std::int64_t>(0, (r.endCycle - r.startCycle) - steps->second));
    ++captured;
  }
  // The first StreamCopy Begin of each captured run against the other Begins.
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> firstBegin;  // run -> (ts, dur)
  std::vector<std::int64_t> begins;
  std::vector<std::pair<std::int64_t, std::int64_t>> all;  // (run, dur) of every Begin
  for (const auto& track : reader.tracks())
    if (track.kind == "stream")
      reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
        if (s.category != "stream_copy_begin" || s.runId < 0) return;
        auto [it, added] = firstBegin.emplace(s.runId, std::make_pair(s.ts, s.dur));
        if (!added && s.ts < it->second.first) it->second = {s.ts, s.dur};
        all.emplace_back(s.runId, s.dur);
      });
  double firstExtra = 0;
  if (!firstBegin.empty()) {
    // Every Begin but one first-of-run per run (forEachSlice is in ts order per track).
    std::map<std::int64_t, bool> skipped;
    for (const auto& [run, dur] : all) {
      if (!skipped[run] && dur == firstBegin[run].second) {
        skipped[run] = true;
        continue;
      }
      begins.push_back(dur);
    }
    std::int64_t median = 0;
    if (!begins.empty()) {
      std::nth_element(begins.begin(), begins.begin() + begins.size() / 2, begins.end());
      median = begins[begins.size() / 2];
    }
    for (const auto& [run, first] : firstBegin) firstExtra += double(std::max<std::int64_t>(0, first.second - median));
    firstExtra /= double(firstBegin.size());
  }
  facts.runCostInsideCycles = (captured > 0 ? inside / double(captured) : 0.0) + firstExtra;
  // Tile balance over the last captured run (the steady state when two are captured).
  const traces::RunRow* last = nullptr;
  for (const auto& r : runs)
    if (r.captured) last = &r;
  if (last) {
    const RangeStats range = computeRangeStats(reader, last->startCycle, last->endCycle);
    if (!range.ipus.empty() && range.ipus[0].hasTileDetail) {
      double sum = 0;
      for (const auto& ipu : range.ipus) sum += ipu.parallelEfficiency;
      facts.parallelEfficiency = sum / double(range.ipus.size());
    }
  }
  return facts;
}

std::optional<Insight> hostBoundInsight(const ProfileFacts& f, const InsightLimits& limits) {
  const double share = f.hostWait.share();
  if (!(share >= limits.hostBoundShare)) return std::nullopt;  // (NaN: nothing measured, no finding)
  const auto& runs = f.report.runs;
  const std::int64_t outside = std::max<std::int64_t>(0, runs.spanCycles() - runs.runCycles);
  const double stepsPerRun = runs.stepsPerRun();
  const bool feeds = f.feeds.value_or(stepsPerRun > 1);
  const std::int64_t from = f.stepsPerExecution > 0 ? f.stepsPerExecution : std::llround(stepsPerRun);
  // Ten times as many steps a run, but one the workload takes: a divisor of
  // its steps (training.steps must be a multiple of steps_per_execution),
  // and a multiple of the steps a run now has (what accumulation needs is
  // kept). A 4-step fit run whole was told "raise steps_per_execution
  // (4 -> 40)", which its workload refuses, and that it saved 0.9 of its
  // one run's cost ("0 calls remain"); 40 steps by 10 were told 100.
  const std::int64_t base = feeds ? std::max<std::int64_t>(1, from) : 1;
  std::int64_t to = 0;
  for (std::int64_t t = std::min(feeds ? std::max<std::int64_t>(10, from * 10) : 10, runs.steps); t > base && !to; --t)
    if (runs.steps % t == 0 && t % base == 0) to = t;
  if (!to) return std::nullopt;  // (every step in one run already: no run to save)
  const double oldRuns = double(runs.runs);
  const double newRuns = stepsPerRun > 0 ? oldRuns * (stepsPerRun / double(to)) : oldRuns;
  const double perRun = oldRuns > 0 ? double(outside) / oldRuns + f.runCostInsideCycles : 0.0;
  const double saved = std::max(0.0, (oldRuns - newRuns) * perRun);

  Insight in;
  in.rule = "host_bound";
  in.weight = share;
  in.finding = "the IPU waits for the host " + formatPercent(share) + " of the time";
  if (feeds)
    in.knob = "raise steps_per_execution (" + std::to_string(from) + " -> " + std::to_string(to) + ")";
  else
    in.knob = "use infeed/outfeed queues (training.feeds = true) with steps_per_execution " + std::to_string(to);
  in.gain = "saves about " + seconds(f.report.target, saved) + " per " + std::to_string(runs.steps) +
            " steps (" + std::to_string(runs.runs) + " Engine::run calls cost " + seconds(f.report.target, perRun) +
            " each outside their steps; " + std::to_string(std::llround(newRuns)) +
            (std::llround(newRuns) == 1 ? " call remains)" : " calls remain)");
  in.figures = {{"host_wait_share", share},
                {"host_wait_cycles", f.hostWait.waitCycles},
                {"outside_runs_cycles", outside},
                {"run_cost_cycles", perRun},
                {"steps_per_execution", from},
                {"suggested_steps_per_execution", to},
                {"feeds", feeds},
                {"saved_cycles", std::llround(saved)}};
  return in;
}

std::optional<Insight> deviceBoundInsight(const ProfileFacts& f, const InsightLimits& limits) {
  if (f.hostWait.share() >= limits.hostBoundShare) return std::nullopt;
  const auto& all = f.report.captured;
  const PhaseCycles sum = all.allIpus();
  const std::int64_t total = sum.total();
  if (total <= 0) return std::nullopt;
  const std::int64_t busy = sum.compute + sum.exchange + sum.ipuLink + sum.collective + sum.sync;
  const double share = double(busy) / double(total);
  if (share < limits.deviceBoundShare) return std::nullopt;
  struct Phase { const char* name; std::int64_t cycles; std::int64_t OperationRow::*bucket; };
  const Phase phases[] = {{"compute", sum.compute, &OperationRow::compute},
                          {"exchange", sum.exchange + sum.ipuLink, &OperationRow::exchange},
                          {"sync", sum.sync, &OperationRow::sync}};
  const Phase& top = *std::max_element(std::begin(phases), std::end(phases),
                                       [](const Phase& a, const Phase& b) { return a.cycles < b.cycles; });
  Insight in;
  in.rule = "device_bound";
  in.weight = share;
  in.finding = "the device is busy " + formatPercent(share) + " of the time (compute " +
               formatPercent(double(sum.compute) / total) + ", exchange " +
               formatPercent(double(sum.exchange + sum.ipuLink) / total) + ", sync " +
               formatPercent(double(sum.sync) / total) +
               (sum.collective > 0 ? ", collective " + formatPercent(double(sum.collective) / total) : "") +
               "); the host is not the bottleneck";
  const OperationRow* op = largestOp(f.operations, top.bucket);
  if (op && op->*top.bucket > 0) {
    const double opShare = f.operations.busyCycles > 0 ? double(op->*top.bucket) / double(f.operations.busyCycles) : 0;
    in.knob = std::string(top.name) + " dominates; the largest part is " + opName(*op) + " (" +
              formatPercent(opShare) + " of the device's busy time): its shape (layer size, batch size) "
              "and tile mapping move it (ipusim report --ops)";
    in.gain = "halving " + opName(*op) + "'s " + top.name + " saves about " +
              formatPercent(opShare / 2) + " of the busy time";
    in.figures["largest_op"] = opName(*op);
    in.figures["largest_op_share"] = opShare;
  } else {
    in.knob = std::string(top.name) + " dominates (no per-op debug info in this profile)";
    in.gain = "unknown without per-op debug info";
  }
  in.figures["busy_share"] = share;
  in.figures["dominant_phase"] = top.name;
  return in;
}

std::optional<Insight> tileBalanceInsight(const ProfileFacts& f, const InsightLimits& limits) {
  if (!f.parallelEfficiency) return std::nullopt;
  const PhaseCycles sum = f.report.captured.allIpus();
  if (sum.total() <= 0) return std::nullopt;
  const double computeShare = double(sum.compute) / double(sum.total());
  const double efficiency = *f.parallelEfficiency;
  if (computeShare < limits.balanceMinComputeShare || efficiency >= limits.balanceLimit) return std::nullopt;
  const OperationRow* op = largestOp(f.operations, &OperationRow::compute);
  const std::int64_t tiles = std::max<std::int64_t>(f.report.target.tilesPerIpu, f.report.target.tilesHeld());
  Insight in;
  in.rule = "tile_balance";
  in.weight = computeShare * (1 - efficiency);
  in.finding = "tile balance " + formatPercent(efficiency) + ": compute keeps the busiest tile working while most "
               "tiles idle";
  if (op && op->tiles > 0)
    in.finding += "; the largest op, " + opName(*op) + ", uses " + std::to_string(op->tiles) + " of " +
                  std::to_string(tiles) + " tiles";
  in.knob = "more work per step (dataset.batch_size) or a smaller target (--tiles) for the same time";
  in.gain = "at most " + formatPercent(computeShare * (1 - efficiency)) +
            " of the time if the compute were spread evenly over all tiles";
  in.figures = {{"parallel_efficiency", efficiency}, {"compute_share", computeShare}, {"tiles", tiles}};
  if (op) {
    in.figures["largest_op"] = opName(*op);
    in.figures["largest_op_tiles"] = op->tiles;
  }
  return in;
}

std::optional<Insight> tileMemoryInsight(const ProfileFacts& f, const InsightLimits& limits) {
  const auto& m = f.report.memory;
  if (m.capacityBytes <= 0 || m.fullest.empty()) return std::nullopt;
  const TileUse& tile = m.fullest.front();
  const double share = double(tile.bytes) / double(m.capacityBytes);
  if (share < limits.memoryFullShare) return std::nullopt;
  Insight in;
  in.rule = "tile_memory";
  in.weight = share;
  in.finding = "tile " + std::to_string(tile.tile) + " is " + formatPercent(share) + " full (" +
               std::to_string(tile.bytes) + " of " + std::to_string(m.capacityBytes) + " B)";
  if (m.tilesOverCapacity > 0) in.finding += "; " + std::to_string(m.tilesOverCapacity) + " tile(s) over capacity";
  in.knob = "lower ipu.available_memory_proportion (matmul plans spread wider) or use more tiles";
  in.gain = share >= 1.0 ? "the program fits only with debug.allowOutOfMemory; it would not run on hardware"
                         : "headroom: " + std::to_string(m.capacityBytes - tile.bytes) + " B left on that tile";
  in.figures = {{"tile", tile.tile}, {"ipu", tile.ipu}, {"bytes", tile.bytes}, {"capacity_bytes", m.capacityBytes},
                {"share", share}};
  // A fit that recomputes nothing keeps every activation its backward pass
  // reads, for every mini-batch in flight in a pipeline: recomputation frees
  // them, part of the tile's not-always-live peak, at the cost of running
  // forward ops again (compile's out-of-memory summary compiles the trial
  // and gives both).
  const bool recomputing = std::any_of(f.operations.rows.begin(), f.operations.rows.end(),
                                       [](const OperationRow& row) { return row.pass == "recompute"; });
  // ("auto" finds no checkpoint in a model without two layers to cut at, and
  // may find some that recompute nothing, as a pipeline's "Auto" may: not
  // offered where the profile says so.)
  const bool autoFindsNone = (!f.pipelined && f.autoRecomputeCheckpoints == 0) || f.autoRecomputedOps == 0;
  if (f.report.target.task == "fit" && !recomputing && !autoFindsNone && tile.notAlwaysLivePeakBytes > 0) {
    in.knob += f.pipelined ? "; or recompute each stage's activations in its backward pass instead of keeping them "
                             "for every mini-batch in flight (pipeline.recomputation_mode: \"Auto\")"
                           : "; or recompute activations for the backward pass instead of keeping them "
                             "(training.recompute_checkpoints: \"auto\")";
    in.knob += ": part of the tile's " + std::to_string(tile.notAlwaysLivePeakBytes) +
               " B of activations, gradients and temporaries at its peak, for forward ops run again";
    in.figures["not_always_live_peak_bytes"] = tile.notAlwaysLivePeakBytes;
  }
  // The optimizer state always live there: with replicas, sharding keeps
  // 1/R of it per replica at no more link traffic (replication.hpp); with
  // one, Streaming Memory holds it between updates (at copies' cost: the
  // streaming_memory insight of such a run, or compile's out-of-memory summary).
  // (Its slot variables alone: with none, an SGD with a learning-rate
  // schedule was told to offload or shard "its 8 B" of step counter and
  // learning rate, which neither moves and offloading refuses.)
  const std::int64_t replicas = f.report.target.replicas;
  const std::int64_t state = f.optimizerSlotVariables
                                 ? std::max<std::int64_t>(0, tile.optimizerStateBytes - f.optimizerScalarBytesPerTile)
                                 : 0;
  if (state > 0 && !(replicas > 1 && f.optimizerStateSharded)) {
    in.figures["optimizer_state_bytes"] = state;
    std::int64_t saved = state;
    if (replicas > 1) {
      saved = state * (replicas - 1) / replicas;
      in.knob += "; or shard the optimizer state over the " + std::to_string(replicas) +
                 " replicas (training.replicated_optimizer_state_sharding: true): its " + std::to_string(state) +
                 " B there fall to 1/" + std::to_string(replicas) + ", the links carry as many bytes";
    } else {
      in.knob += "; or keep the optimizer state in Streaming Memory between its updates "
                 "(training.offload_optimizer_state: true): its " + std::to_string(state) +
                 " B there are then live only during their weight's update";
    }
    in.figures["optimizer_state_saving_bytes"] = saved;
    if (share >= 1.0)
      in.gain += tile.bytes - saved <= m.capacityBytes ? "; without " + std::to_string(saved) + " B of optimizer state "
                                                             "that tile would fit"
                                                       : "; " + std::to_string(saved) + " B of optimizer state less "
                                                             "would not be enough there";
  }
  return in;
}

namespace {

// The operations with some cycles of one kind (`cyclesOf` > 0): their sum,
// how many, and the largest, for the rules about one mechanism's cost.
struct OpsTally {
  std::int64_t cycles = 0, count = 0;
  const OperationRow* largest = nullptr;
};
template <typename CyclesOf>
OpsTally tallyOps(const OperationsSummary& ops, CyclesOf cyclesOf) {
  OpsTally t;
  std::int64_t most = 0;
  for (const OperationRow& row : ops.rows) {
    const std::int64_t cycles = cyclesOf(row);
    if (cycles <= 0) continue;
    t.cycles += cycles;
    ++t.count;
    if (!t.largest || cycles > most) t.largest = &row, most = cycles;
  }
  return t;
}

}  // namespace

std::optional<Insight> recomputationInsight(const ProfileFacts& f, const InsightLimits&) {
  const OperationsSummary& ops = f.operations;
  const auto [cycles, count, largest] = tallyOps(ops, [](const OperationRow& row) {
    return row.pass == "recompute" ? row.compute + row.exchange + row.sync : std::int64_t(0);
  });
  if (count == 0 || ops.busyCycles <= 0) return std::nullopt;
  const double share = double(cycles) / double(ops.busyCycles);
  Insight in;
  in.rule = "recomputation";
  in.weight = share;
  in.finding = "recomputation takes " + formatPercent(share) + " of the device's busy time (" +
               formatNumber(ops.perWindow(cycles), 0) + " cycles a " + (ops.byStep ? "step" : "run") +
               ", " + std::to_string(count) + (count == 1 ? " op" : " ops") + " run again for the backward pass; the largest " + opName(*largest) + ")";
  // (In a pipeline the stages are recomputed by pipeline.recomputation_mode,
  // which takes checkpoints in its RecomputeAndBackpropagateInterleaved mode.)
  in.knob = f.pipelined
                ? "checkpoint more layers (training.recompute_checkpoints, with pipeline.recomputation_mode "
                  "\"RecomputeAndBackpropagateInterleaved\"), or recompute nothing (no pipeline.recomputation_mode), "
                  "where the memory allows: each checkpoint, and each stage's activations kept, stay live for every "
                  "mini-batch in flight instead of being recomputed"
                : "checkpoint more layers (training.recompute_checkpoints), or none, where the memory allows: each "
                  "checkpoint keeps its output live instead of recomputing the ops before it";
  in.gain = "at most " + formatPercent(share) + " of the busy time, paid for in memory (ipusim report --liveness)";
  in.figures = {{"recompute_share", share}, {"recompute_ops", count}, {"largest_op", opName(*largest)}};
  return in;
}

std::optional<Insight> streamingMemoryInsight(const ProfileFacts& f, const InsightLimits&) {
  const OperationsSummary& ops = f.operations;
  const auto [cycles, count, largest] = tallyOps(ops, [](const OperationRow& row) { return row.streamingMemory; });
  if (count == 0 || ops.busyCycles <= 0) return std::nullopt;
  const double share = double(cycles) / double(ops.busyCycles);
  Insight in;
  in.rule = "streaming_memory";
  in.weight = share;
  in.finding = "copies to and from Streaming Memory take " + formatPercent(share) + " of the device's busy time (" +
               formatNumber(ops.perWindow(cycles), 0) + " cycles a " + (ops.byStep ? "step" : "run") + ", by " +
               std::to_string(count) + (count == 1 ? " op" : " ops") + "; the largest " + opName(*largest) + ")";
  in.knob = "keep the optimizer state on the tiles (training.offload_optimizer_state: false) where the memory allows";
  in.gain = "at most " + formatPercent(share) + " of the busy time, paid for in tile memory (the state's bytes, "
            "ipusim compile: Streaming Memory)";
  in.figures = {{"streaming_memory_share", share}, {"ops", count}, {"largest_op", opName(*largest)}};
  return in;
}

std::vector<Insight> findInsights(const ProfileFacts& facts, const InsightLimits& limits) {
  std::vector<Insight> found;
  for (auto rule : {hostBoundInsight, deviceBoundInsight, tileBalanceInsight, tileMemoryInsight, recomputationInsight,
                    streamingMemoryInsight})
    if (auto insight = rule(facts, limits)) found.push_back(std::move(*insight));
  std::stable_sort(found.begin(), found.end(), [](const Insight& a, const Insight& b) { return a.weight > b.weight; });
  return found;
}

nlohmann::json insightsToJson(const std::vector<Insight>& insights, const ProfileFacts& facts) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i : insights)
    list.push_back({{"rule", i.rule}, {"finding", i.finding}, {"knob", i.knob}, {"gain", i.gain},
                    {"weight", i.weight}, {"figures", i.figures}});
  return {{"profile", facts.report.target.path},
          {"host_wait_share", facts.hostWait.share()},
          {"insights", list}};
}

void printInsights(const std::vector<Insight>& insights, const ProfileFacts& facts, std::ostream& out) {
  out << "Insights for " << facts.report.target.path << "\n";
  if (insights.empty()) {
    out << "  nothing stands out: no rule fired (host wait " << formatPercent(facts.hostWait.share()) << ")\n";
    return;
  }
  int n = 1;
  for (const auto& i : insights) {
    out << "  " << n++ << ". " << i.finding << "\n"
        << "     knob: " << i.knob << "\n"
        << "     gain: " << i.gain << "\n";
  }
}

}  // namespace ipusim::profiler::analysis
