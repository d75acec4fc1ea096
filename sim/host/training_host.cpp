#include "sim/host/training_host.hpp"

#include "model/clock.hpp"
#include "model/stop_request.hpp"
#include "sim/host/interrupt.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace ipusim::sim {

TrainingHost::TrainingHost(sc_core::sc_module_name name, Engine& engine, const TrainingPlan& plan,
                           const HostParams& host, BatchProvider* batches, BatchProvider* validationBatches)
    : sc_module(name), engine_(engine), plan_(plan), host_(host), batches_(batches), validationBatches_(validationBatches) {
  if (plan_.feeds && plan_.steps % plan_.stepsPerExecution != 0)
    throw std::invalid_argument("training.steps (" + std::to_string(plan_.steps) +
                                ") must be a multiple of training.steps_per_execution (" +
                                std::to_string(plan_.stepsPerExecution) + ")");
  host_.checkCycles(engine_.system().target());  // every hostSpan below then fits
  images_ = &engine_.stream(plan_.imagesStream);
  labels_ = plan_.labelsStream.empty() ? nullptr : &engine_.stream(plan_.labelsStream);
  loss_ = &engine_.stream(plan_.lossStream);
  const model::Target& target = engine_.system().target();
  const ir::Cycles service = target.secondsToCycles(host_.streamServiceSeconds);
  if (plan_.validation.enabled()) {
    validationImages_ = &engine_.stream(plan_.validation.imagesStream);
    validationLabels_ = &engine_.stream(plan_.validation.labelsStream);
    validationLoss_ = &engine_.stream(plan_.validation.lossStream);
  }
  for (auto* s : {images_, labels_, loss_, validationImages_, validationLabels_, validationLoss_})
    if (s) s->setHostServiceCycles(service);

  if (plan_.feeds) {
    SC_THREAD(datasetProducer);
    SC_THREAD(outfeedDrainer);
    if (plan_.validation.enabled()) {
      SC_THREAD(validationProducer);
      SC_THREAD(validationDrainer);
    }
  } else {
    // Without feeds the batch travels with its run: the streams read the
    // buffers the loop filled, and the loss comes back with the run.
    images_->connect([this](model::Bytes& b) { b = pendingImages_; });
    if (labels_) labels_->connect([this](model::Bytes& b) { b = pendingLabels_; });
    loss_->connect([this](model::Bytes& b) { receive(b); });
    if (validationImages_) {
      validationImages_->connect([this](model::Bytes& b) { b = pendingImages_; });
      validationLabels_->connect([this](model::Bytes& b) { b = pendingLabels_; });
      validationLoss_->connect([this](model::Bytes& b) { receiveValidation(b); });
    }
  }
  SC_THREAD(trainingLoop);
}

void TrainingHost::hostSpan(const char* track, const char* name, const char* category, double seconds) {
  const ir::Cycles start = model::nowCycles();
  const ir::Cycles cycles = engine_.system().target().secondsToCycles(seconds);
  if (cycles) sc_core::wait(model::cyclesToTime(cycles));
  engine_.hostEvent({track, name, category, start, cycles});
}

void TrainingHost::batchReady() {
  if (plan_.outfeedMode == OutfeedMode::All) readySince_.push_back(model::nowCycles());
}

void TrainingHost::receive(model::Bytes bytes) {
  engine_.completeOutfeed(bytes);
  if (plan_.outfeedMode == OutfeedMode::All && !readySince_.empty()) {
    latencies_.add(model::nowCycles() - readySince_.front());
    readySince_.pop_front();
  }
  if (!plan_.predictionWidth) return receiveLoss(bytes);
  // Predictions: each replica's rows in turn, the global batch's order.
  const std::uint64_t rows = bytes.size() / sizeof(float) / plan_.predictionWidth;
  if (predictions_ && rows) predictions_(reinterpret_cast<const float*>(bytes.data()), rows);
}

namespace {

// An outfeed copy holds each replica's values in turn (the loss, the
// accuracy, ...): the global batch's figures are their means, as the
// replicas' batches are equal. Empty with synthetic data (no numbers).
std::vector<float> replicaMeans(const model::Bytes& bytes, std::uint32_t replicaCount) {
  const std::size_t replicas = std::max<std::uint32_t>(1, replicaCount);
  const std::size_t perReplica = bytes.size() / sizeof(float) / replicas;
  std::vector<float> means(perReplica);
  for (std::size_t index = 0; index < perReplica; ++index) {
    double sum = 0;
    for (std::size_t r = 0; r < replicas; ++r) {
      float value = 0;
      std::memcpy(&value, bytes.data() + (r * perReplica + index) * sizeof(float), sizeof(float));
      sum += value;
    }
    means[index] = float(sum / double(replicas));
  }
  return means;
}

}  // namespace

void TrainingHost::receiveValidation(model::Bytes bytes) {
  engine_.completeOutfeed(bytes);
  const std::vector<float> values = replicaMeans(bytes, plan_.replicas);
  // A validation's copies: each step's (ALL), or each run's last (LAST).
  const std::uint64_t perValidation =
      plan_.validation.runsEach * (plan_.outfeedMode == OutfeedMode::All ? plan_.validation.stepsPerRun : 1);
  if (validationCopies_++ % perValidation == 0) validationSums_.assign(values.size(), 0.0), validationSumCopies_ = 0;
  if (values.empty()) return;
  validationSums_.resize(values.size(), 0.0);
  ++validationSumCopies_;
  const model::DeviceOrigin& origin = validationLoss_->lastOrigin();
  for (std::size_t i = 0; i < values.size() && i < plan_.validation.outfeed.size(); ++i) {
    validationSums_[i] += values[i];
    engine_.counter({"val_" + plan_.validation.outfeed[i], origin.at, values[i], origin.run, origin.step});
  }
}

std::vector<std::pair<std::string, double>> TrainingHost::lastValidation() const {
  std::vector<std::pair<std::string, double>> means;
  if (validationSumCopies_ == 0) return means;
  for (std::size_t i = 0; i < validationSums_.size() && i < plan_.validation.outfeed.size(); ++i)
    means.emplace_back("val_" + plan_.validation.outfeed[i], validationSums_[i] / double(validationSumCopies_));
  return means;
}

void TrainingHost::receiveLoss(const model::Bytes& bytes) {
  const std::vector<float> values = replicaMeans(bytes, plan_.replicas);
  const std::size_t perReplica = values.size();
  if (perReplica == 0) return;  // synthetic data: no numbers
  const float loss = values[0];
  finalLoss_ = loss;
  valueSums_.resize(std::max<std::size_t>(valueSums_.size(), perReplica), 0.0);
  for (std::size_t i = 0; i < perReplica; ++i) valueSums_[i] += values[i];
  ++valueSteps_;
  const model::DeviceOrigin& origin = loss_->lastOrigin();
  engine_.counter({"loss", origin.at, loss, origin.run, origin.step});
  // The compiled step's outfeed: the loss, then the accuracy, a schedule's learning rate.
  static const std::vector<std::string> kLossAndAccuracy{"loss", "accuracy"};
  const std::vector<std::string>& names = plan_.outfeed.empty() ? kLossAndAccuracy : plan_.outfeed;
  finalValues_.clear();
  for (std::size_t i = 1; i < std::min(perReplica, names.size()); ++i) {
    const float value = values[i];
    engine_.counter({names[i], origin.at, value, origin.run, origin.step});
    finalValues_.emplace_back(names[i], value);
  }
}

std::vector<std::pair<std::string, double>> TrainingHost::meanValues() const {
  std::vector<std::pair<std::string, double>> means;
  if (valueSteps_ == 0) return means;
  means.emplace_back("loss", valueSums_[0] / double(valueSteps_));
  for (std::size_t i = 1; i < valueSums_.size() && i - 1 < finalValues_.size(); ++i)
    means.emplace_back(finalValues_[i - 1].first, valueSums_[i] / double(valueSteps_));
  return means;
}

void TrainingHost::fail(std::exception_ptr error) {
  if (!failure_) failure_ = error;
  endCycle_ = model::nowCycles();
  sc_core::sc_stop();
}

void TrainingHost::rethrowFailure() const {
  if (failure_) std::rethrow_exception(failure_);
}

void TrainingHost::trainingLoop() {
  try {
    const ir::Cycles startup = engine_.system().target().secondsToCycles(host_.streamStartupSeconds);
    for (std::uint64_t run = 0; run < plan_.runs() && !interruptRequested(); ++run) {
      if (!plan_.feeds) {
        hostSpan("training loop", "next batch", "host_io", host_.batchPrepareSeconds);
        if (batches_) batches_->next(pendingImages_, pendingLabels_);
        batchReady();
      }
      hostSpan("training loop", "Engine::run dispatch", "host", host_.runDispatchSeconds);
      images_->delayNextCopy(startup);
      engine_.run(plan_.entry);
      ++runsDone_;
      if (progress_) progress_(runsDone_, stepsDone());
      if (plan_.validation.enabled() && runsDone_ % plan_.validation.everyTrainingRuns == 0 && !interruptRequested())
        validate();
    }
    // The job ends when the host holds every loss, not when the device is done.
    const std::uint64_t expected = plan_.outfeedMode == OutfeedMode::All ? stepsDone() : runsDone_;
    const std::uint64_t validationRuns = validationsDone_ * plan_.validation.runsEach;
    const std::uint64_t expectedValidation =
        plan_.outfeedMode == OutfeedMode::All ? validationRuns * plan_.validation.stepsPerRun : validationRuns;
    while (plan_.feeds && (outfeedCopies_ < expected || validationCopies_ < expectedValidation) && !interruptRequested())
      sc_core::wait(outfeedReceived_);
    endCycle_ = model::nowCycles();
    sc_core::sc_stop();
  } catch (const model::StopRequested&) {
    endCycle_ = model::nowCycles();  // interrupted: the caller reports it
    sc_core::sc_stop();
  } catch (...) {
    fail(std::current_exception());
  }
}

void TrainingHost::validate() {
  const ir::Cycles startup = engine_.system().target().secondsToCycles(host_.streamStartupSeconds);
  for (std::uint64_t run = 0; run < plan_.validation.runsEach && !interruptRequested(); ++run) {
    if (!plan_.feeds) {
      hostSpan("training loop", "next validation batch", "host_io", host_.batchPrepareSeconds);
      if (validationBatches_) validationBatches_->next(pendingImages_, pendingLabels_);
    }
    hostSpan("training loop", "Engine::run dispatch", "host", host_.runDispatchSeconds);
    validationImages_->delayNextCopy(startup);
    engine_.run(plan_.validation.entry);
  }
  if (!interruptRequested()) ++validationsDone_;  // (one Ctrl-C cut short is not counted)
}

void TrainingHost::validationProducer() {
  try {
    // Keras's validation data is read in order, from its start at each validation.
    for (std::uint64_t step = 0; step < plan_.validationSteps(); ++step) {
      hostSpan("validation dataset", "prepare batch", "host_io", host_.batchPrepareSeconds);
      model::Bytes images, labels;
      if (validationBatches_) validationBatches_->next(images, labels);
      validationImages_->push(std::move(images));  // blocks while the prefetch buffer is full
      validationLabels_->push(std::move(labels));
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

void TrainingHost::validationDrainer() {
  try {
    for (;;) {
      model::Bytes bytes = validationLoss_->pop();  // blocks until the device enqueues
      hostSpan("validation outfeed", "dequeue loss", "host_io", host_.outfeedDequeueSeconds);
      receiveValidation(bytes);
      outfeedReceived_.notify(sc_core::SC_ZERO_TIME);
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

void TrainingHost::datasetProducer() {
  try {
    for (std::uint64_t step = 0; step < plan_.steps; ++step) {
      hostSpan("dataset", "prepare batch", "host_io", host_.batchPrepareSeconds);
      model::Bytes images, labels;
      if (batches_) batches_->next(images, labels);
      images_->push(std::move(images));  // blocks while the prefetch buffer is full
      batchReady();                      // in the infeed: its time in the queue counts
      if (labels_) labels_->push(std::move(labels));
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

void TrainingHost::outfeedDrainer() {
  try {
    for (;;) {
      model::Bytes bytes = loss_->pop();  // blocks until the device enqueues
      hostSpan("outfeed", plan_.predictionWidth ? "dequeue predictions" : "dequeue loss", "host_io",
               host_.outfeedDequeueSeconds);
      receive(bytes);
      ++outfeedCopies_;
      outfeedReceived_.notify(sc_core::SC_ZERO_TIME);
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

}  // namespace ipusim::sim
