#include "training_harness.hpp"

#include "cpu_reference.hpp"
#include "model/clock.hpp"
#include "model/ir/tile_memory_usage.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/entry_runs.hpp"

#include <gtest/gtest.h>
#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace ipusim::testing {
namespace {

template <class T>
void toBytes(model::Bytes& bytes, const std::vector<T>& v) {
  bytes.resize(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
}

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

void expectSameLosses(const TrainingLosses& r, std::uint64_t steps) {
  ASSERT_EQ(r.simulated.size(), steps);
  ASSERT_EQ(r.reference.size(), steps);
  for (std::size_t s = 0; s < steps; ++s) {
    ASSERT_TRUE(std::isfinite(r.simulated[s])) << "step " << s;
    EXPECT_NEAR(r.simulated[s], r.reference[s], 1e-4 * std::fabs(r.reference[s])) << "step " << s;
  }
}

void expectSameWeights(const TrainingLosses& r) {
  ASSERT_FALSE(r.simulatedWeights.empty());
  ASSERT_EQ(r.simulatedWeights[0].size(), r.referenceWeights.size());
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t) {
    const auto& ref = r.referenceWeights[t];
    ASSERT_EQ(r.simulatedWeights[0][t].size(), ref.size()) << "tensor " << t;
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(r.simulatedWeights[0][t][i], ref[i], 1e-5 + 1e-4 * std::fabs(ref[i])) << "tensor " << t << " [" << i << "]";
  }
}

void expectHalfTracksFloat32(const TrainingLosses& r, std::uint64_t steps, const std::string& label) {
  ASSERT_EQ(r.simulated.size(), steps) << label;
  ASSERT_EQ(r.reference.size(), steps) << label;
  double worst = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    ASSERT_TRUE(std::isfinite(r.simulated[s])) << label << " step " << s;
    worst = std::max(worst, std::fabs(double(r.simulated[s]) - r.reference[s]) / r.reference[s]);
  }
  EXPECT_LT(worst, 0.01) << label;
  EXPECT_GT(worst, 0.0) << label << ": no rounding at all would mean half arithmetic is not happening";
}

nlohmann::json smallJob(const char* layers, const nlohmann::json& inputShape, const nlohmann::json& optimizer,
                        std::uint64_t seed) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "shuffle_seed": 7, "classes": 10, "examples": 32},
    "training": {"steps": 20, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}})");
  j["dataset"]["input_shape"] = inputShape;
  j["model"]["layers"] = nlohmann::json::parse(layers);
  j["optimizer"] = optimizer;
  j["seed"] = seed;
  return j;
}

void expectSameTraining(const nlohmann::json& j, const std::string& source, std::uint64_t steps) {
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, source), steps);
  expectSameLosses(r, steps);
  expectSameWeights(r);
}

void expectHalfTracksFloat32(nlohmann::json j, const std::string& dtype, const std::string& source, std::uint64_t steps) {
  j["model"]["dtype"] = dtype;
  expectHalfTracksFloat32(runTraining(scheduler::parseWorkload(j, source), steps), steps, dtype);
}

void expectTrainsAsAccumulation(const TrainingLosses& r, std::uint32_t accumulation, std::uint64_t steps) {
  ASSERT_EQ(r.simulated.size(), steps);
  ASSERT_EQ(r.reference.size(), steps / accumulation);
  for (std::size_t u = 0; u < r.reference.size(); ++u) {
    double mean = 0;  // the N mini-batches of one update ran on the same weights
    for (std::uint32_t i = 0; i < accumulation; ++i) mean += r.simulated[u * accumulation + i];
    mean /= accumulation;
    EXPECT_NEAR(mean, r.reference[u], 1e-4 * std::fabs(r.reference[u])) << "update " << u;
  }
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t)
    for (std::size_t i = 0; i < r.referenceWeights[t].size(); ++i)
      ASSERT_NEAR(r.simulatedWeights[0][t][i], r.referenceWeights[t][i], 1e-5 + 1e-4 * std::fabs(r.referenceWeights[t][i]))
          << "tensor " << t << " [" << i << "]";
}

std::string sourcePath(const std::string& relative) { return std::string(IPUSIM_SOURCE_DIR) + "/" + relative; }

TrainingLosses runTraining(const scheduler::Workload& w, std::uint64_t steps, bool withReference) {
  TrainingLosses result;
  result.compiled = scheduler::compile(w);
  const auto& c = result.compiled;
  const std::uint64_t runs = steps / c.stepsPerRun;

  // Both sides see the same batches: two sources from the same seed. With
  // replicas, the device's global batch is R batches (replica r the r-th).
  const std::uint32_t replicas = scheduler::replicasOf(w);
  // With gradient accumulation N, the reference takes N of those at once
  // (the summed gradient of N mini-batches is N x the mean over them: its
  // learning rate is N x the device's).
  const std::uint32_t globalBatch = w.dataset.batchSize * replicas;
  const std::uint32_t accumulation = w.training.gradientAccumulationCount;
  sim::dataset::BatchSource deviceBatches(sim::dataset::loadExamples(w.dataset), globalBatch, w.dataset.shuffleSeed);
  sim::dataset::BatchSource hostBatches(sim::dataset::loadExamples(w.dataset), globalBatch * accumulation,
                                        w.dataset.shuffleSeed);

  sim::Engine engine(c.exe, c.target, sim::EngineOptions{}, {});
  sim::dataset::Batch current;
  engine.stream("images").connect([&](model::Bytes& b) { 
    current = deviceBatches.next();
    if (current.tokens.empty()) toBytes(b, current.images);
    else toBytes(b, current.tokens);  // int32 token ids
  });
  engine.stream("labels").connect([&](model::Bytes& b) {
    const auto bytes = sim::dataset::labelBytes(current.labels, w.loss, w.dataset.classes);
    b.assign(bytes.begin(), bytes.end());
  });
  engine.stream("loss").connect([&](model::Bytes& b) {
    // Per replica: its loss (and accuracy, learning rate: CompiledWorkload::outfeed);
    // the global batch's figures are the replicas' means.
    const std::size_t perReplica = b.size() / sizeof(float) / replicas;
    std::vector<double> sums(perReplica, 0.0);
    for (std::uint32_t r = 0; r < replicas; ++r)
      for (std::size_t i = 0; i < perReplica; ++i) {
        float v;
        std::memcpy(&v, b.data() + (r * perReplica + i) * sizeof v, sizeof v);
        sums[i] += v;
      }
    for (std::size_t i = 0; i < perReplica && i < c.outfeed.size(); ++i) {
      const double mean = sums[i] / replicas;
      if (c.outfeed[i] == "loss") result.simulated.push_back(float(mean));
      if (c.outfeed[i] == "accuracy") result.simulatedAccuracy.push_back(float(mean));
      if (c.outfeed[i] == "learning_rate") result.simulatedLearningRate.push_back(mean);
      if (c.outfeed[i] == "regularization") result.simulatedRegularization.push_back(float(mean));
      for (const std::string& metric : w.loss.metrics)
        if (c.outfeed[i] == metric) result.simulatedMetrics[metric].push_back(float(mean));
    }
  });
  sim::EntryRuns loop("training_loop", engine, "train", runs);
  sc_core::sc_start();
  loop.rethrowFailure();
  result.cycles = model::nowCycles();
  result.simulatedWeights.resize(replicas);
  for (ir::Id t : c.weightTensors) {
    std::vector<float> all(c.exe.tensors[t].numElements());
    const model::Bytes bytes = engine.system().readTensor(t);
    std::memcpy(all.data(), bytes.data(), std::min(bytes.size(), all.size() * sizeof(float)));
    const std::size_t n = all.size() / replicas;
    for (std::uint32_t r = 0; r < replicas; ++r)
      result.simulatedWeights[r].emplace_back(all.begin() + r * n, all.begin() + (r + 1) * n);
  }
  for (const auto& layer : w.layers) {
    if (layer.kind != scheduler::layer_kind::kBatchNormalization) continue;
    for (const char* name : {"/moving_mean", "/moving_variance"})
      for (ir::Id id = 0; id < c.exe.tensors.size(); ++id)
        if (const ir::Tensor& t = c.exe.tensors[id]; t.name == layer.name + name) {
          std::vector<float> all(t.numElements());
          const model::Bytes bytes = engine.system().readTensor(id);
          std::memcpy(all.data(), bytes.data(), std::min(bytes.size(), all.size() * sizeof(float)));
          result.simulatedMoving.emplace_back(all.begin(), all.begin() + all.size() / replicas);
        }
  }
  if (!withReference) return result;

  std::vector<std::vector<float>> weights;
  for (ir::Id t : c.weightTensors) {
    const auto& tensor = c.exe.tensors[t];
    const std::vector<double> init = ir::initialValues(tensor);
    const std::uint64_t n = tensor.numElements() / replicas;  // replica 0's copy
    weights.push_back(init.empty() ? std::vector<float>(n, 0.0f) : floats({init.begin(), init.begin() + n}));
  }
  scheduler::Workload oneIpu = w;
  oneIpu.ipu.numIpus = 1;
  for (auto& layer : oneIpu.layers) layer.shard = 0;
  oneIpu.dataset.batchSize = globalBatch * accumulation;
  // SGD (with momentum, a constant rate) on N times the mean gradient is SGD
  // at N times the rate; other rules (and weight decay) have no such equivalent.
  if (accumulation > 1 && (w.optimizer.rule() != "sgd" || w.optimizer.weightDecay != 0))
    throw std::logic_error("runTraining: no one-IPU reference of '" + w.optimizer.type + "' with gradient accumulation");
  oneIpu.optimizer.learningRate = w.optimizer.learningRate * accumulation;
  oneIpu.training.gradientAccumulationCount = 1;
  CpuReference reference(oneIpu, weights);
  for (std::uint64_t s = 0; s < runs * c.stepsPerRun / accumulation; ++s) {
    const auto batch = hostBatches.next();
    result.reference.push_back(reference.step(batch.images, batch.labels));
    result.referenceAccuracy.push_back(reference.lastAccuracy());
    result.referenceLearningRate.push_back(reference.lastLearningRate());
    result.referenceRegularization.push_back(reference.lastRegularization());
    for (const auto& [metric, value] : reference.lastMetrics()) result.referenceMetrics[metric].push_back(value);
  }
  result.referenceWeights = reference.weights();
  result.referenceMoving = reference.movingStatistics();
  return result;
}

std::string workloadRefusal(const nlohmann::json& j) {
  try {
    scheduler::parseWorkload(j, "w.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

std::vector<std::uint64_t> notAlwaysLivePeakPerIpu(const scheduler::CompiledWorkload& c) {
  std::vector<std::uint64_t> peak(c.target.numIpus(), 0);
  for (const ir::TileMemoryUsage& u : ir::tileMemoryUsage(c.exe.tensors, c.target.totalTiles())) {
    auto& p = peak[c.target.ipuOf(u.tile)];
    p = std::max(p, u.notAlwaysLivePeakBytes);
  }
  return peak;
}

}  // namespace ipusim::testing
