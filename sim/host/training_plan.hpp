#pragma once
// What the host runtime needs to know to drive a compiled job: fit's
// training, or evaluate's or predict's batches (scheduler::Workload::task).
#include "model/host_stream.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim {

enum class OutfeedMode { All, Last };

struct TrainingPlan {
  std::uint64_t steps = 0;
  std::uint32_t stepsPerExecution = 1;  // steps per Engine::run (with feeds)
  bool feeds = true;                    // infeed/outfeed queues; false: one step per run
  std::uint32_t entry = 0;              // entry point running one execution
  // The streams (labelsStream empty: none, as in predict; lossStream is
  // predict's "predictions").
  std::string imagesStream = "images", labelsStream = "labels", lossStream = "loss";
  // Predict: the outfeed holds predictions, a row of this many floats per
  // example (each replica's batch in turn), handed to TrainingHost's
  // prediction sink instead of being read as the loss; 0: loss and metrics.
  std::uint64_t predictionWidth = 0;
  std::uint32_t replicas = 1;  // the outfeed holds each replica's values in turn
  // The counter each value of a replica's outfeed copy is recorded as
  // (CompiledWorkload::outfeed: loss, accuracy, learning_rate); empty: the
  // loss, then the accuracy when there are two.
  std::vector<std::string> outfeed;
  OutfeedMode outfeedMode = OutfeedMode::All;

  std::uint64_t runs() const { return feeds ? steps / stepsPerExecution : steps; }
  std::uint64_t stepsPerRun() const { return feeds ? stepsPerExecution : 1; }
};

// The dataset as the host runtime sees it: the next training batch, as the
// raw bytes of the images and labels tensors. Synthetic runs use none.
class BatchProvider {
 public:
  virtual ~BatchProvider() = default;
  virtual void next(model::Bytes& images, model::Bytes& labels) = 0;
};

}  // namespace ipusim::sim
