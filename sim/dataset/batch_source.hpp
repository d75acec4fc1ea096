#pragma once
// BatchSource: the training batches of a workload's dataset, as
// tf.data.Dataset.shuffle(...).batch(drop_remainder=True).repeat() would give
// them, deterministically: each epoch is a permutation of the examples drawn
// from shuffle_seed and the epoch number; a partial last batch is dropped.
// Images are floats ([batch, features]: in [0, 1], or 0-255 as the
// dataset's preprocessing says), labels ints ([batch], or
// [batch, steps] for a sequence's per-step classes).
#include "scheduler/models/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim::dataset {

struct Batch {
  std::vector<float> images;   // batch x features (token ids as floats, exactly)
  std::vector<std::int32_t> labels;
  std::vector<std::int32_t> tokens;  // batch x features token ids, when the examples are ids (else empty)
};

// The examples of a dataset: pixels (bytes, scaled on batching) and labels.
struct Examples {
  std::uint64_t count = 0;
  std::uint32_t features = 0;
  std::vector<std::uint8_t> pixels;  // count x features
  std::vector<std::uint16_t> labels;  // count x labelSteps (IDX files hold bytes; synthetic data up to 65,536 classes)
  std::uint64_t labelSteps = 1;       // labels per example (a sequence's, one per step: DatasetSpec::labelSteps)
  std::vector<std::int32_t> tokens;   // count x features token ids instead of pixels (DatasetSpec::vocabulary)
  float pixelDivisor = 255.0f;        // a pixel is fed as pixel / this (DatasetSpec::preprocessing)
  bool holdsTokens() const { return !tokens.empty(); }
};

// IDX images + labels. Errors name the file: counts that differ, an image
// size other than `features`, a label outside [0, classes).
Examples loadIdxExamples(const std::string& images, const std::string& labels, std::uint32_t features,
                         std::uint32_t classes);
// Seeded random pixels (with a vocabulary: token ids, uniform in [0,
// vocabulary)) and labels, `labelSteps` per example.
Examples syntheticExamples(std::uint64_t count, std::uint32_t features, std::uint32_t classes, std::uint64_t seed,
                           std::uint64_t vocabulary = 0, std::uint64_t labelSteps = 1);
// Token ids and their labels from NumPy .npy files of integers (dataset
// format "npy": spec.images, spec.labels): ids of shape (examples, features)
// (or any shape whose trailing sizes multiply to features), each in [0,
// vocabulary); labels (examples,), or (examples, labelSteps) for a class per
// step. Errors name the file, the example (and position) and the value.
Examples loadNpyTokenExamples(const scheduler::DatasetSpec& spec);
// As the workload's dataset section says.
Examples loadExamples(const scheduler::DatasetSpec& spec);
// Fit's validation data (scheduler::ValidationSpec) as a dataset: the
// dataset's own spec on the validation files; synthetic examples drawn from
// the seed after the training's (other examples than the training's).
scheduler::DatasetSpec validationDataset(const scheduler::Workload& w);

// The labels as the compiled step reads them (scheduler::LossSpec::
// classIndexLabels, labelIsTarget): class indices as int32, the label itself
// as one float (a binary classifier's target), one-hot float rows of
// `classes` (categorical, binary and regression targets alike), or a
// regression output's own targets (LossSpec::targetElements: each row its
// label's pattern, numeric::regressionTarget).
std::vector<std::uint8_t> labelBytes(const std::vector<std::int32_t>& labels, const scheduler::LossSpec& loss,
                                     std::uint32_t classes);

class BatchSource {
 public:
  // `shuffled` false: every epoch in the examples' own order (Keras's
  // evaluate and predict, which do not shuffle).
  BatchSource(Examples examples, std::uint32_t batchSize, std::uint64_t shuffleSeed, bool shuffled = true);
  Batch next();                       // the next batch (a new epoch reshuffles)
  // The same, written into the caller's buffers (batchSize() x features()
  // floats, batchSize() x labelSteps() labels): a training loop's per-step buffer, without
  // a Batch allocated, zeroed and copied each step.
  void nextInto(float* images, std::int32_t* labels);
  // The same for examples of token ids: batchSize() x features() int32 ids.
  void nextTokensInto(std::int32_t* tokens, std::int32_t* labels);
  // Back to the first batch, as a new iterator over the same dataset (Keras
  // reads its validation data from the start at each validation).
  void restart() { epoch_ = 0, shuffle(); }
  bool holdsTokens() const { return examples_.holdsTokens(); }
  std::uint64_t batchesPerEpoch() const { return examples_.count / batchSize_; }
  std::uint64_t batchesServed() const { return served_; }
  std::uint32_t batchSize() const { return batchSize_; }
  std::uint32_t features() const { return examples_.features; }
  std::uint64_t labelSteps() const { return examples_.labelSteps; }

 private:
  void shuffle();
  // The examples of the next batch (a new epoch reshuffles), advancing.
  const std::uint32_t* nextOrder();
  void copyLabels(std::uint32_t example, std::int32_t* labels) const;
  Examples examples_;
  std::uint32_t batchSize_;
  std::uint64_t seed_;
  bool shuffled_;
  std::uint64_t epoch_ = 0, position_ = 0, served_ = 0;
  std::vector<std::uint32_t> order_;
};

}  // namespace ipusim::sim::dataset
