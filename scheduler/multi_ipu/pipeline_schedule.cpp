#include "scheduler/multi_ipu/pipeline_schedule.hpp"

#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// Mini-batch m = (u - offset) / period when that is a whole number in [0, n).
bool miniBatchAt(std::int64_t u, std::int64_t offset, std::int64_t period, std::int64_t n, std::uint32_t& m) {
  const std::int64_t d = u - offset;
  if (d < 0 || d % period) return false;
  if (d / period >= n) return false;
  m = std::uint32_t(d / period);
  return true;
}

PipelinePlan grouped(std::int64_t S, std::int64_t N) {
  PipelinePlan plan;
  for (std::int64_t t = 0; t < N + 2 * S - 2; ++t) {
    PipelineTimeStep step;
    PipelineSlot forward, backward;
    std::uint32_t m = 0;
    for (std::int64_t s = 0; s < S; ++s)
      if (miniBatchAt(t, s, 1, N, m)) forward.push_back({std::uint32_t(s), m, false});
    for (std::int64_t s = S - 1; s >= 0; --s)
      if (miniBatchAt(t, 2 * (S - 1) - s, 1, N, m)) backward.push_back({std::uint32_t(s), m, true});
    if (!forward.empty()) step.slots.push_back(forward);
    if (!backward.empty()) step.slots.push_back(backward);
    plan.timeSteps.push_back(step);
  }
  for (std::int64_t m = 0; m < N; ++m) plan.firstTimeStep.push_back(std::size_t(m));
  return plan;
}

PipelinePlan interleaved(std::int64_t S, std::int64_t N) {
  PipelinePlan plan;
  for (std::int64_t u = 0; u < 2 * N + 2 * S - 2; ++u) {
    PipelineSlot slot;
    std::uint32_t m = 0;
    for (std::int64_t s = 0; s < S; ++s) {
      if (miniBatchAt(u, s, 2, N, m)) slot.push_back({std::uint32_t(s), m, false});
      if (miniBatchAt(u, 2 * S - 1 - s, 2, N, m)) slot.push_back({std::uint32_t(s), m, true});
    }
    plan.timeSteps.push_back({{slot}});
  }
  for (std::int64_t m = 0; m < N; ++m) plan.firstTimeStep.push_back(std::size_t(2 * m));
  return plan;
}

PipelinePlan sequential(std::int64_t S, std::int64_t N) {
  PipelinePlan plan;
  for (std::int64_t m = 0; m < N; ++m) {
    PipelineTimeStep step;
    for (std::int64_t s = 0; s < S; ++s) step.slots.push_back({{std::uint32_t(s), std::uint32_t(m), false}});
    for (std::int64_t s = S - 1; s >= 0; --s) step.slots.push_back({{std::uint32_t(s), std::uint32_t(m), true}});
    plan.timeSteps.push_back(step);
    plan.firstTimeStep.push_back(std::size_t(m));
  }
  return plan;
}

}  // namespace

PipelinePlan planPipeline(const std::string& schedule, std::uint32_t stages, std::uint32_t miniBatches) {
  if (stages < 1 || miniBatches < 1) throw std::invalid_argument("planPipeline: needs at least one stage and mini-batch");
  if (schedule == "grouped") return grouped(stages, miniBatches);
  if (schedule == "interleaved") return interleaved(stages, miniBatches);
  if (schedule == "sequential") return sequential(stages, miniBatches);
  throw std::invalid_argument("pipeline.schedule: '" + schedule + "' is not grouped, interleaved or sequential");
}

PipelinePlan forwardOnly(const PipelinePlan& plan) {
  PipelinePlan out;
  std::vector<bool> kept(plan.timeSteps.size(), false);
  std::vector<std::size_t> indexOf(plan.timeSteps.size(), 0);  // in `out`, of each time step kept
  for (std::size_t t = 0; t < plan.timeSteps.size(); ++t) {
    PipelineTimeStep step;
    for (const PipelineSlot& slot : plan.timeSteps[t].slots) {
      PipelineSlot forward;
      for (const StagePass& p : slot)
        if (!p.backward) forward.push_back(p);
      if (!forward.empty()) step.slots.push_back(std::move(forward));
    }
    if (step.slots.empty()) continue;
    kept[t] = true;
    indexOf[t] = out.timeSteps.size();
    out.timeSteps.push_back(std::move(step));
  }
  // A training step starts at its first time step, or the next one kept
  // (its first holds its F_0: every schedule's is kept).
  for (std::size_t t : plan.firstTimeStep) {
    while (t < kept.size() && !kept[t]) ++t;
    if (t == kept.size()) throw std::logic_error("forwardOnly: a step with no forward pass");
    out.firstTimeStep.push_back(indexOf[t]);
  }
  return out;
}

}  // namespace ipusim::scheduler
