#include "validation_harness.hpp"

#include "cpu_reference.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/engine/engine.hpp"

#include <systemc>

#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>

namespace ipusim::testing {
namespace {

// Runs `body` as a SystemC thread, then stops the simulation.
class Loop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Loop);
  Loop(sc_core::sc_module_name name, std::function<void()> body) : sc_module(name), body_(std::move(body)) {
    SC_THREAD(main);
  }
  void rethrowFailure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void main() {
    try {
      body_();
    } catch (...) {
      failure_ = std::current_exception();
    }
    sc_core::sc_stop();
  }
  std::function<void()> body_;
  std::exception_ptr failure_;
};

void toBytes(model::Bytes& bytes, const sim::dataset::Batch& batch) {
  const void* data = batch.tokens.empty() ? static_cast<const void*>(batch.images.data()) : batch.tokens.data();
  bytes.resize(batch.images.size() * 4);  // floats, or int32 token ids
  std::memcpy(bytes.data(), data, bytes.size());
}

}  // namespace

ValidationResults runFitWithValidation(const scheduler::Workload& w) {
  if (w.ipu.numIpus != scheduler::ipusPerReplica(w)) throw std::invalid_argument("runFitWithValidation: one replica");
  const scheduler::TrainingSpec& t = w.training;
  if (!t.validation.enabled()) throw std::invalid_argument("runFitWithValidation: no training.validation");
  ValidationResults result;
  result.compiled = scheduler::compile(w);
  const scheduler::CompiledWorkload& c = result.compiled;
  const std::uint64_t epochs = t.steps / t.epochSteps();
  const std::uint64_t trainingRunsPerEpoch = t.epochSteps() / c.stepsPerRun;
  const std::uint64_t validationRuns = t.validation.steps / c.validationStepsPerRun;
  auto validates = [&](std::uint64_t epoch) { return (epoch + 1) % t.validation.freq == 0; };

  sim::dataset::BatchSource deviceBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize, w.dataset.shuffleSeed);
  sim::dataset::BatchSource hostBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize, w.dataset.shuffleSeed);
  const scheduler::DatasetSpec validation = sim::dataset::validationDataset(w);
  sim::dataset::BatchSource deviceValidation(sim::dataset::loadExamples(validation), w.dataset.batchSize,
                                             validation.shuffleSeed, false);
  sim::dataset::BatchSource hostValidation(sim::dataset::loadExamples(validation), w.dataset.batchSize,
                                           validation.shuffleSeed, false);

  sim::Engine engine(c.exe, c.target, sim::EngineOptions{}, {});
  sim::dataset::Batch current;
  auto labels = [&](model::Bytes& b) {
    const auto bytes = sim::dataset::labelBytes(current.labels, w.loss, w.dataset.classes);
    b.assign(bytes.begin(), bytes.end());
  };
  engine.stream("images").connect([&](model::Bytes& b) { current = deviceBatches.next(), toBytes(b, current); });
  engine.stream("labels").connect(labels);
  engine.stream("validation_images").connect([&](model::Bytes& b) { current = deviceValidation.next(), toBytes(b, current); });
  engine.stream("validation_labels").connect(labels);
  auto outfeed = [](const model::Bytes& b, const std::vector<std::string>& names, std::vector<float>& loss,
                    std::vector<float>* accuracy) {
    std::vector<float> values(b.size() / sizeof(float));
    std::memcpy(values.data(), b.data(), values.size() * sizeof(float));
    for (std::size_t i = 0; i < values.size() && i < names.size(); ++i) {
      if (names[i] == "loss") loss.push_back(values[i]);
      if (names[i] == "accuracy" && accuracy) accuracy->push_back(values[i]);
    }
  };
  engine.stream("loss").connect([&](model::Bytes& b) { outfeed(b, c.outfeed, result.simulatedLoss, nullptr); });
  engine.stream("validation_loss").connect([&](model::Bytes& b) {
    outfeed(b, c.validationOutfeed, result.simulatedValLoss, &result.simulatedValAccuracy);
  });
  const std::uint32_t train = engine.entryIndex("train"), validate = engine.entryIndex("validation");
  Loop loop("fit_loop", [&] {
    for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
      for (std::uint64_t r = 0; r < trainingRunsPerEpoch; ++r) engine.run(train), result.entries.push_back("train");
      if (!validates(epoch)) continue;
      deviceValidation.restart();  // Keras reads the validation data from its start each time
      for (std::uint64_t r = 0; r < validationRuns; ++r) engine.run(validate), result.entries.push_back("validation");
    }
  });
  sc_core::sc_start();
  loop.rethrowFailure();

  std::vector<std::vector<float>> weights;
  for (ir::Id id : c.weightTensors) {
    const std::vector<double> init = ir::initialValues(c.exe.tensors[id]);
    weights.push_back(init.empty() ? std::vector<float>(c.exe.tensors[id].numElements(), 0.0f)
                                   : std::vector<float>(init.begin(), init.end()));
  }
  // With gradient accumulation N (a pipeline's), the reference trains on N
  // batches at once at N x the rate (the summed gradient of N mini-batches
  // is N x their mean's), as training_harness.hpp's does, and validates with
  // a reference of its own on the weights so reached (no moving statistics:
  // refused below).
  const std::uint32_t accumulation = t.gradientAccumulationCount;
  scheduler::Workload merged = w;
  merged.dataset.batchSize = w.dataset.batchSize * accumulation;
  merged.optimizer.learningRate = w.optimizer.learningRate * accumulation;
  merged.training.gradientAccumulationCount = 1;
  merged.pipeline = {};
  for (auto& layer : merged.layers) layer.stage.reset(), layer.shard = 0;
  merged.ipu.numIpus = 1;
  if (accumulation > 1)
    for (const auto& layer : w.layers)
      if (layer.kind == scheduler::layer_kind::kBatchNormalization)
        throw std::invalid_argument("runFitWithValidation: gradient accumulation with batch normalization");
  sim::dataset::BatchSource mergedBatches(sim::dataset::loadExamples(w.dataset), merged.dataset.batchSize,
                                          w.dataset.shuffleSeed);
  CpuReference reference(accumulation > 1 ? merged : w, weights);
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    for (std::uint64_t s = 0; s < t.epochSteps() / accumulation; ++s) {
      const sim::dataset::Batch batch = accumulation > 1 ? mergedBatches.next() : hostBatches.next();
      result.referenceLoss.push_back(reference.step(batch.images, batch.labels));
    }
    if (!validates(epoch)) continue;
    hostValidation.restart();
    scheduler::Workload evaluating = accumulation > 1 ? merged : w;
    evaluating.dataset.batchSize = w.dataset.batchSize;
    CpuReference evaluator(evaluating, reference.weights());
    CpuReference& validator = accumulation > 1 ? evaluator : reference;  // (the reference itself keeps the moving statistics)
    for (std::uint64_t s = 0; s < t.validation.steps; ++s) {
      const sim::dataset::Batch batch = hostValidation.next();
      result.referenceValLoss.push_back(validator.evaluate(batch.images, batch.labels));
      result.referenceValAccuracy.push_back(validator.lastAccuracy());
    }
  }
  return result;
}

}  // namespace ipusim::testing
