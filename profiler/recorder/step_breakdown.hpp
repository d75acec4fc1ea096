#pragma once
// StepBreakdown: an observer that measures where one training step's device
// cycles go (compute, exchange, IPU link, collective, sync, stream copy,
// Streaming Memory, idle), on IPU 0, over the
// steps of one chosen run. It asks for phase detail for that run only, so it
// costs nothing elsewhere. `ipusim run` prints it.
#include "model/observer.hpp"

#include <cmath>

namespace ipusim::profiler {

struct StepCycles {
  std::uint64_t steps = 0;  // steps measured
  // Per step (mean). collective: the phases of a collective (the all-reduce's
  // syncs, exchanges and additions), counted there and in no other bucket.
  double total = 0, compute = 0, exchange = 0, sync = 0, streamCopy = 0, ipuLink = 0, collective = 0,
         streamingMemory = 0;
  // What no other bucket holds. A difference of means: within their rounding
  // of zero it is zero (it printed as "idle 0 (-1.04e-14%)"); a larger
  // negative value, buckets that overlap, stays visible.
  double idle() const {
    const double rest = total - compute - exchange - sync - streamCopy - ipuLink - collective - streamingMemory;
    return std::abs(rest) < 1e-9 * total ? 0.0 : rest;
  }
};

class StepBreakdown : public model::ExecutionObserver {
 public:
  explicit StepBreakdown(std::uint64_t runToMeasure) : run_(runToMeasure) {}
  model::Detail detailFor(const model::RunEvent& run) override;
  void runBegin(const model::RunEvent& run) override { measuring_ = run.runIndex == run_; }
  void runEnd(const model::RunEvent& run) override { measuring_ = false; }
  void stepBegin(std::uint64_t step, ir::Cycles at) override;
  void stepEnd(std::uint64_t step, ir::Cycles at) override;
  void phase(const model::PhaseEvent& event) override;
  // Means over the measured steps; zeros when the run never happened.
  StepCycles result() const;

 private:
  std::uint64_t run_;
  bool measuring_ = false, inStep_ = false;
  ir::Cycles stepStart_ = 0;
  StepCycles sum_;
};

}  // namespace ipusim::profiler
