#pragma once
// TrainingHost: the host runtime of a training job, as SystemC processes.
//
// - the training loop issues Engine::run calls, each after a dispatch
//   overhead; with feeds each run executes stepsPerExecution steps of an
//   on-device loop, without feeds every step is its own run that carries its
//   batch with it (prepared on the loop's own thread, then copied in);
// - with feeds, a dataset process produces batches into the infeed's prefetch
//   buffer (the stream FIFO, depth prefetch_depth), blocking when it is full;
//   an outfeed process drains the loss to the host (ALL: every step; LAST: the
//   last of each run), and the device blocks when the outfeed is full;
// - every stream copy costs host service time, and the first copy of a run
//   waits for the host stream service to start (the long first Begin).
// Losses arrive as the `loss` counter (predict's outputs go to the
// prediction sink instead); each batch's latency is kept
// (batch_latency.hpp). Host activity becomes host-track slices.
// Fit with validation (TrainingPlan::validation): after every epoch (times
// validation_freq) the loop runs the validation entry point, fed by its own
// producer and drained by its own drainer (Keras's validation data has its
// own infeed and outfeed), its values recorded as val_ counters.
#include "sim/engine/engine.hpp"
#include "sim/host/batch_latency.hpp"
#include "sim/host/host_params.hpp"
#include "sim/host/training_plan.hpp"

#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <systemc>
#include <utility>
#include <vector>

namespace ipusim::sim {

class TrainingHost : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(TrainingHost);
  // `batches` may be null for synthetic data (empty payloads), and so may
  // `validationBatches` (the validation data's: TrainingPlan::validation).
  TrainingHost(sc_core::sc_module_name name, Engine& engine, const TrainingPlan& plan, const HostParams& host,
               BatchProvider* batches, BatchProvider* validationBatches = nullptr);

  // Called after every run with (runs done, steps done); e.g. a progress bar.
  void onProgress(std::function<void(std::uint64_t runs, std::uint64_t steps)> fn) { progress_ = std::move(fn); }
  // Predict (TrainingPlan::predictionWidth): called with each step's
  // predictions as they reach the host, `rows` rows of predictionWidth floats.
  void onPredictions(std::function<void(const float* values, std::uint64_t rows)> fn) { predictions_ = std::move(fn); }
  // Each batch's latency (batch_latency.hpp), with outfeed mode ALL.
  const BatchLatencies& latencies() const { return latencies_; }

  // The last loss the host received (NaN before any, or with synthetic data).
  // Only the last is kept: host memory does not grow with the number of steps.
  double finalLoss() const { return finalLoss_; }
  // The last step's other outfed values (accuracy, metrics, regularization,
  // learning_rate), by counter name, in outfeed order.
  const std::vector<std::pair<std::string, double>>& finalValues() const { return finalValues_; }
  // Every outfed value (loss first, then as finalValues) averaged over the
  // steps the host received: Keras's evaluate result, the mean over the
  // batches (equal batches: the mean over the examples). Empty without numbers.
  std::vector<std::pair<std::string, double>> meanValues() const;
  // Fit with validation: the last validation's values ("val_loss",
  // "val_accuracy", ...), each the mean over its batches (Keras's epoch-end
  // val_ figures); empty before one, or without numbers.
  std::vector<std::pair<std::string, double>> lastValidation() const;
  std::uint64_t validationsDone() const { return validationsDone_; }
  std::uint64_t runsDone() const { return runsDone_; }  // training runs
  std::uint64_t stepsDone() const { return runsDone_ * plan_.stepsPerRun(); }
  ir::Cycles endCycle() const { return endCycle_; }
  void rethrowFailure() const;

 private:
  void trainingLoop();
  void validate();          // one validation's runs (trainingLoop)
  void datasetProducer();   // feeds only
  void outfeedDrainer();    // feeds only
  void validationProducer();  // feeds with validation only
  void validationDrainer();   // feeds with validation only
  // Waits `seconds` of host time and records it as a host slice: category
  // "host_io" for data work (batches, outfeed), "host" for control (dispatch).
  void hostSpan(const char* track, const char* name, const char* category, double seconds);
  void receiveLoss(const model::Bytes& bytes);
  // The outfeed's copy (loss and metrics, or predictions), completed by the
  // engine first (Engine::completeOutfeed: other instances' replicas).
  void receive(model::Bytes bytes);
  void receiveValidation(model::Bytes bytes);
  void batchReady();                        // a batch's data is on the host: its latency starts
  void fail(std::exception_ptr error);

  Engine& engine_;
  TrainingPlan plan_;
  HostParams host_;
  BatchProvider* batches_;
  BatchProvider* validationBatches_;
  model::HostStream *images_, *labels_, *loss_;
  model::HostStream *validationImages_ = nullptr, *validationLabels_ = nullptr, *validationLoss_ = nullptr;
  model::Bytes pendingImages_, pendingLabels_;  // no feeds: this run's batch
  std::function<void(std::uint64_t, std::uint64_t)> progress_;
  std::function<void(const float*, std::uint64_t)> predictions_;
  BatchLatencies latencies_;
  std::deque<ir::Cycles> readySince_;  // batches in flight: when each became ready
  double finalLoss_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::string, double>> finalValues_;
  std::vector<double> valueSums_;  // per outfed value, over the steps received
  std::uint64_t valueSteps_ = 0;
  std::uint64_t runsDone_ = 0;
  std::uint64_t outfeedCopies_ = 0;       // feeds: outfeed elements the host has taken
  std::uint64_t validationsDone_ = 0, validationCopies_ = 0;
  std::vector<double> validationSums_;  // per validation outfeed value, over the current validation's copies
  std::uint64_t validationSumCopies_ = 0;
  sc_core::sc_event outfeedReceived_;
  ir::Cycles endCycle_ = 0;
  std::exception_ptr failure_;
};

}  // namespace ipusim::sim
