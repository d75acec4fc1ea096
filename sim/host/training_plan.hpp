#pragma once
// What the host runtime needs to know to drive a compiled job: fit's
// training, or evaluate's or predict's batches (scheduler::Workload::task).
#include "model/host_stream.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim {

enum class OutfeedMode { All, Last };

// Fit with validation (scheduler::ValidationSpec): after every
// `everyTrainingRuns` training runs (an epoch times validation_freq),
// `runsEach` runs of entry point `entry` (stepsPerRun steps each), fed from
// the validation data on their own streams; their outfeed's values are
// recorded as counters named "val_" + `outfeed`'s.
struct ValidationPlan {
  std::uint64_t everyTrainingRuns = 0;  // 0: no validation
  std::uint64_t runsEach = 0;
  std::uint32_t stepsPerRun = 1;
  std::uint32_t entry = 0;
  std::string imagesStream = "validation_images", labelsStream = "validation_labels", lossStream = "validation_loss";
  std::vector<std::string> outfeed;  // loss, accuracy, ... (CompiledWorkload::validationOutfeed)
  bool enabled() const { return everyTrainingRuns > 0; }
};

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

  ValidationPlan validation;

  std::uint64_t runs() const { return feeds ? steps / stepsPerExecution : steps; }  // training runs
  std::uint64_t stepsPerRun() const { return feeds ? stepsPerExecution : 1; }
  std::uint64_t validations() const { return validation.enabled() ? runs() / validation.everyTrainingRuns : 0; }
  std::uint64_t validationSteps() const { return validations() * validation.runsEach * validation.stepsPerRun; }
  // The Engine::run index of training run k (validation runs come between).
  std::uint64_t runIndexOfTrainingRun(std::uint64_t k) const {
    return validation.enabled() ? k + k / validation.everyTrainingRuns * validation.runsEach : k;
  }
};

// The dataset as the host runtime sees it: the next training batch, as the
// raw bytes of the images and labels tensors. Synthetic runs use none.
class BatchProvider {
 public:
  virtual ~BatchProvider() = default;
  virtual void next(model::Bytes& images, model::Bytes& labels) = 0;
};

}  // namespace ipusim::sim
