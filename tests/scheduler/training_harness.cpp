#include "training_harness.hpp"

#include "cpu_reference.hpp"
#include "model/clock.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/engine/engine.hpp"

#include <systemc>

#include <cstring>
#include <exception>

namespace ipusim::testing {
namespace {

class TrainingLoop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(TrainingLoop);
  TrainingLoop(sc_core::sc_module_name name, sim::Engine& engine, std::uint64_t runs)
      : sc_module(name), engine_(engine), runs_(runs) {
    SC_THREAD(main);
  }
  std::exception_ptr failure;

 private:
  void main() {
    try {
      const std::uint32_t entry = engine_.entryIndex("train");
      for (std::uint64_t r = 0; r < runs_; ++r) engine_.run(entry);
    } catch (...) {
      failure = std::current_exception();
    }
    sc_core::sc_stop();
  }
  sim::Engine& engine_;
  std::uint64_t runs_;
};

template <class T>
void toBytes(model::Bytes& bytes, const std::vector<T>& v) {
  bytes.resize(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
}

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::string sourcePath(const std::string& relative) { return std::string(IPUSIM_SOURCE_DIR) + "/" + relative; }

TrainingLosses runTraining(const scheduler::Workload& w, std::uint64_t steps) {
  TrainingLosses result;
  result.compiled = scheduler::compile(w);
  const auto& c = result.compiled;
  const std::uint64_t runs = steps / c.stepsPerRun;

  // Both sides see the same batches: two sources from the same seed.
  sim::dataset::BatchSource deviceBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize, w.dataset.shuffleSeed);
  sim::dataset::BatchSource hostBatches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize, w.dataset.shuffleSeed);

  sim::Engine engine(c.exe, c.target, sim::EngineOptions{}, {});
  sim::dataset::Batch current;
  engine.stream("images").connect([&](model::Bytes& b) { current = deviceBatches.next(); toBytes(b, current.images); });
  engine.stream("labels").connect([&](model::Bytes& b) {
    const auto bytes = sim::dataset::labelBytes(current.labels, w.loss.classIndexLabels(), w.dataset.classes);
    b.assign(bytes.begin(), bytes.end());
  });
  engine.stream("loss").connect([&](model::Bytes& b) {
    float v;
    std::memcpy(&v, b.data(), sizeof v);
    result.simulated.push_back(v);
    if (b.size() >= 2 * sizeof v) {
      std::memcpy(&v, b.data() + sizeof v, sizeof v);
      result.simulatedAccuracy.push_back(v);
    }
  });
  TrainingLoop loop("training_loop", engine, runs);
  sc_core::sc_start();
  if (loop.failure) std::rethrow_exception(loop.failure);
  result.cycles = model::nowCycles();

  std::vector<std::vector<float>> weights;
  for (ir::Id t : c.weightTensors) {
    const auto& tensor = c.exe.tensors[t];
    const std::vector<double> init = ir::initialValues(tensor);
    weights.push_back(init.empty() ? std::vector<float>(tensor.numElements(), 0.0f) : floats(init));
  }
  CpuReference reference(w, weights);
  for (std::uint64_t s = 0; s < runs * c.stepsPerRun; ++s) {
    const auto batch = hostBatches.next();
    result.reference.push_back(reference.step(batch.images, batch.labels));
    result.referenceAccuracy.push_back(reference.lastAccuracy());
  }
  return result;
}

}  // namespace ipusim::testing
