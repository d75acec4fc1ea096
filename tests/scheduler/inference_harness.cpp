#include "inference_harness.hpp"

#include "cpu_reference.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/entry_runs.hpp"

#include <systemc>

#include <cstring>
#include <stdexcept>

namespace ipusim::testing {

InferenceResults runInference(const scheduler::Workload& w, std::uint64_t steps) {
  if (w.ipu.numIpus != scheduler::ipusPerReplica(w)) throw std::invalid_argument("runInference: one replica");
  const bool predict = w.task == scheduler::Task::Predict;
  InferenceResults result;
  result.compiled = scheduler::compile(w);
  const scheduler::CompiledWorkload& c = result.compiled;
  sim::dataset::BatchSource deviceBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize,
                                          w.dataset.shuffleSeed, false);
  sim::dataset::BatchSource hostBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize,
                                        w.dataset.shuffleSeed, false);
  sim::Engine engine(c.exe, c.target, sim::EngineOptions{}, {});
  sim::dataset::Batch current;
  engine.stream("images").connect([&](model::Bytes& b) {
    current = deviceBatches.next();
    const void* data = current.tokens.empty() ? static_cast<const void*>(current.images.data()) : current.tokens.data();
    b.resize(current.images.size() * 4);  // floats, or int32 token ids
    std::memcpy(b.data(), data, b.size());
  });
  if (!predict)
    engine.stream("labels").connect([&](model::Bytes& b) {
      const auto bytes = sim::dataset::labelBytes(current.labels, w.loss, w.dataset.classes);
      b.assign(bytes.begin(), bytes.end());
    });
  engine.stream(predict ? "predictions" : "loss").connect([&](model::Bytes& b) {
    std::vector<float> values(b.size() / sizeof(float));
    std::memcpy(values.data(), b.data(), values.size() * sizeof(float));
    if (predict) {
      result.simulatedPredictions.insert(result.simulatedPredictions.end(), values.begin(), values.end());
      return;
    }
    for (std::size_t i = 0; i < values.size() && i < c.outfeed.size(); ++i) {
      if (c.outfeed[i] == "loss") result.simulatedLoss.push_back(values[i]);
      if (c.outfeed[i] == "accuracy") result.simulatedAccuracy.push_back(values[i]);
    }
  });
  sim::EntryRuns loop("inference_loop", engine, scheduler::entryPointOf(w.task), steps / c.stepsPerRun);
  sc_core::sc_start();
  loop.rethrowFailure();

  std::vector<std::vector<float>> weights;
  for (ir::Id t : c.weightTensors) {
    const std::vector<double> init = ir::initialValues(c.exe.tensors[t]);
    weights.push_back(init.empty() ? std::vector<float>(c.exe.tensors[t].numElements(), 0.0f)
                                   : std::vector<float>(init.begin(), init.end()));
  }
  CpuReference reference(w, weights);
  for (std::uint64_t s = 0; s < steps; ++s) {
    const sim::dataset::Batch batch = hostBatches.next();
    if (predict) {
      const std::vector<float> rows = reference.predict(batch.images);
      result.referencePredictions.insert(result.referencePredictions.end(), rows.begin(), rows.end());
    } else {
      result.referenceLoss.push_back(reference.evaluate(batch.images, batch.labels));
      result.referenceAccuracy.push_back(reference.lastAccuracy());
    }
  }
  return result;
}

}  // namespace ipusim::testing
