#include "profiler/recorder/step_breakdown.hpp"

namespace ipusim::profiler {

model::Detail StepBreakdown::detailFor(const model::RunEvent& run) {
  return run.runIndex == run_ ? model::Detail::Phases : model::Detail::RunsOnly;
}

void StepBreakdown::stepBegin(std::uint64_t, ir::Cycles at) {
  if (!measuring_) return;
  inStep_ = true;
  stepStart_ = at;
}

void StepBreakdown::stepEnd(std::uint64_t, ir::Cycles at) {
  if (!measuring_ || !inStep_) return;
  inStep_ = false;
  ++sum_.steps;
  sum_.total += double(at - stepStart_);
}

void StepBreakdown::phase(const model::PhaseEvent& event) {
  if (!measuring_ || !inStep_ || event.ipu != 0) return;
  const double d = double(event.duration);
  if (event.collective) {
    sum_.collective += d;
    return;
  }
  switch (event.kind) {
    case model::PhaseKind::Compute: sum_.compute += d; break;
    case model::PhaseKind::Exchange: sum_.exchange += d; break;
    case model::PhaseKind::Sync: sum_.sync += d; break;
    case model::PhaseKind::StreamCopy: sum_.streamCopy += d; break;
    case model::PhaseKind::IpuLinkCopy: sum_.ipuLink += d; break;
    case model::PhaseKind::StreamingMemory: sum_.streamingMemory += d; break;
  }
}

StepCycles StepBreakdown::result() const {
  StepCycles mean = sum_;
  if (sum_.steps == 0) return mean;
  const double n = double(sum_.steps);
  for (double* v : {&mean.total, &mean.compute, &mean.exchange, &mean.sync, &mean.streamCopy, &mean.ipuLink,
                    &mean.collective, &mean.streamingMemory}) *v /= n;
  return mean;
}

}  // namespace ipusim::profiler
