#pragma once
// StepBreakdown: an observer that measures where one training step's device
// cycles go (compute, exchange, IPU link, collective, sync, stream copy, idle), on IPU 0, over the
// steps of one chosen run. It asks for phase detail for that run only, so it
// costs nothing elsewhere. `ipusim run` prints it.
#include "model/observer.hpp"

namespace ipusim::profiler {

struct StepCycles {
  std::uint64_t steps = 0;  // steps measured
  // Per step (mean). collective: the phases of a collective (the all-reduce's
  // syncs, exchanges and additions), counted there and in no other bucket.
  double total = 0, compute = 0, exchange = 0, sync = 0, streamCopy = 0, ipuLink = 0, collective = 0;
  double idle() const { return total - compute - exchange - sync - streamCopy - ipuLink - collective; }
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
