#include "sim/dataset/batch_source.hpp"

#include "sim/dataset/idx_file.hpp"
#include "sim/dataset/npy_file.hpp"
#include "model/codelets/vector_loop.hpp"
#include "model/numeric/regression_target.hpp"

#include <cstring>
#include <random>
#include <stdexcept>

namespace ipusim::sim::dataset {
namespace {

// out[i] = in[i] / divisor (255: pixels to [0, 1]; 1: as they are), in a loop GCC vectorises.
IPUSIM_KERNEL void toFloats(const std::uint8_t* __restrict in, float* __restrict out, std::uint64_t n, float divisor) {
  model::vec::forEach(n, [=](std::uint64_t i) { out[i] = float(in[i]) / divisor; });
}

}  // namespace

Examples loadIdxExamples(const std::string& images, const std::string& labels, std::uint32_t features,
                         std::uint32_t classes) {
  IdxArray img = readIdx(images);
  IdxArray lab = readIdx(labels);
  if (img.dims.empty()) throw std::invalid_argument(images + ": an IDX image file needs at least one dimension");
  if (lab.dims.size() != 1) throw std::invalid_argument(labels + ": expected a one-dimensional IDX label file");
  if (img.dims[0] != lab.dims[0])
    throw std::invalid_argument(images + " has " + std::to_string(img.dims[0]) + " images but " + labels + " has " +
                                std::to_string(lab.dims[0]) + " labels");
  std::uint64_t perImage = 1;
  for (std::size_t d = 1; d < img.dims.size(); ++d) perImage *= img.dims[d];
  if (perImage != features)
    throw std::invalid_argument(images + ": images have " + std::to_string(perImage) + " pixels, the workload's " +
                                "dataset.features is " + std::to_string(features));
  for (std::size_t i = 0; i < lab.data.size(); ++i)
    if (lab.data[i] >= classes)
      throw std::invalid_argument(labels + ": label " + std::to_string(lab.data[i]) + " of example " + std::to_string(i) +
                                  " is outside [0, " + std::to_string(classes) + ")");
  Examples e;
  e.count = img.dims[0];
  e.features = features;
  e.pixels = std::move(img.data);
  e.labels.assign(lab.data.begin(), lab.data.end());
  return e;
}

Examples syntheticExamples(std::uint64_t count, std::uint32_t features, std::uint32_t classes, std::uint64_t seed,
                           std::uint64_t vocabulary, std::uint64_t labelSteps) {
  // (Each kind of data its own stream: the pixels' and the ids' draws never move one another.)
  std::mt19937_64 rng(seed ^ (vocabulary ? 0x70c3e5ull : 0x5eed5eed5eedull));
  Examples e;
  e.count = count;
  e.features = features;
  e.labelSteps = labelSteps;
  if (vocabulary) {
    e.tokens.resize(count * features);
    for (auto& t : e.tokens) t = std::int32_t(rng() % vocabulary);
  } else {
    e.pixels.resize(count * features);
    for (auto& p : e.pixels) p = std::uint8_t(rng() >> 56);
  }
  e.labels.resize(count * labelSteps);
  for (auto& l : e.labels) l = std::uint16_t(rng() % classes);
  return e;
}

Examples loadNpyTokenExamples(const scheduler::DatasetSpec& spec) {
  auto fail = [](const std::string& path, const std::string& what) { throw std::invalid_argument(path + ": " + what); };
  auto shapeText = [](const std::vector<std::uint64_t>& shape) {
    std::string t = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + (shape.size() == 1 ? ",)" : ")");
  };
  const NpyArray ids = readNpyIntegers(spec.images, "token ids");
  const NpyArray labels = readNpyIntegers(spec.labels, "labels");
  if (ids.shape.empty() || ids.shape[0] == 0)
    fail(spec.images, "shape " + shapeText(ids.shape) + ": expected token ids of shape (examples, " +
                          std::to_string(spec.features) + ")");
  const std::uint64_t n = ids.shape[0], per = ids.values.size() / n;
  // Each example's shape is the model input's, not only its size: (16, 4, 2)
  // is not 16 examples of 8 steps.
  const std::vector<std::uint64_t> example(ids.shape.begin() + 1, ids.shape.end());
  const std::vector<std::uint64_t> input =
      spec.inputShape.empty() ? std::vector<std::uint64_t>{spec.features} : spec.inputShape;
  if (per != spec.features || example != input) {
    std::vector<std::uint64_t> expected{n};
    expected.insert(expected.end(), input.begin(), input.end());
    fail(spec.images, "shape " + shapeText(ids.shape) + ": expected token ids of shape " + shapeText(expected) +
                          ", examples of the model's input");
  }
  const bool oneLabel = spec.labelSteps == 1;
  const bool labelsFit = !labels.shape.empty() && labels.shape[0] == n && labels.values.size() == n * spec.labelSteps &&
                         (oneLabel ? labels.shape.size() <= 2 : labels.shape.size() == 2);
  if (!labelsFit)
    fail(spec.labels, "shape " + shapeText(labels.shape) + ": expected " +
                          (oneLabel ? "(" + std::to_string(n) + ",), a label per example of " + spec.images
                                    : "(" + std::to_string(n) + ", " + std::to_string(spec.labelSteps) +
                                          "), a label per step of each example of " + spec.images));
  Examples e;
  e.count = n;
  e.features = spec.features;
  e.labelSteps = spec.labelSteps;
  e.tokens.resize(ids.values.size());
  for (std::size_t i = 0; i < ids.values.size(); ++i) {
    const std::int64_t id = ids.values[i];
    if (id < 0 || std::uint64_t(id) >= spec.vocabulary)
      fail(spec.images, "example " + std::to_string(i / per) + ", position " + std::to_string(i % per) + ": token id " +
                            std::to_string(id) + " is outside [0, " + std::to_string(spec.vocabulary) +
                            ") (the vocabulary: the smallest input_dim of the embeddings reading the input)");
    e.tokens[i] = std::int32_t(id);
  }
  e.labels.resize(labels.values.size());
  for (std::size_t i = 0; i < labels.values.size(); ++i) {
    const std::int64_t label = labels.values[i];
    if (label < 0 || std::uint64_t(label) >= spec.classes || label > 0xffff)
      fail(spec.labels, "example " + std::to_string(i / spec.labelSteps) +
                            (oneLabel ? "" : ", step " + std::to_string(i % spec.labelSteps)) + ": label " +
                            std::to_string(label) + " is outside [0, " + std::to_string(spec.classes) +
                            ") (dataset.classes" + (spec.classes > 0x10000 ? "; labels above 65,535 are not modelled)" : ")"));
    e.labels[i] = std::uint16_t(label);
  }
  return e;
}

Examples loadExamples(const scheduler::DatasetSpec& spec) {
  if (spec.format == "npy") return loadNpyTokenExamples(spec);
  Examples e;
  if (spec.vocabulary || spec.format == "synthetic") {
    e = syntheticExamples(spec.syntheticExamples, spec.features, spec.classes, spec.shuffleSeed, spec.vocabulary,
                          spec.labelSteps);
  } else {
    if (spec.labelSteps != 1) throw std::logic_error("loadExamples: per-step labels from a labels file");
    e = loadIdxExamples(spec.images, spec.labels, spec.features, spec.classes);
  }
  e.pixelDivisor = spec.preprocessing == "none" ? 1.0f : 255.0f;
  return e;
}

scheduler::DatasetSpec validationDataset(const scheduler::Workload& w) {
  scheduler::DatasetSpec spec = w.dataset;
  spec.images = w.training.validation.images;
  spec.labels = w.training.validation.labels;
  ++spec.shuffleSeed;
  return spec;
}

std::vector<std::uint8_t> labelBytes(const std::vector<std::int32_t>& labels, const scheduler::LossSpec& loss,
                                     std::uint32_t classes) {
  std::vector<std::uint8_t> bytes;
  if (loss.classIndexLabels()) {
    bytes.resize(labels.size() * sizeof(std::int32_t));
    std::memcpy(bytes.data(), labels.data(), bytes.size());
    return bytes;
  }
  const std::size_t width = loss.targetWidth(classes);
  std::vector<float> oneHot(labels.size() * width, 0.0f);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (loss.labelIsTarget) oneHot[r] = float(labels[r]);
    else if (loss.targetElements)
      for (std::size_t e = 0; e < width; ++e) oneHot[r * width + e] = numeric::regressionTarget(labels[r], e);
    else oneHot[r * width + std::size_t(labels[r])] = 1.0f;
  }
  bytes.resize(oneHot.size() * sizeof(float));
  std::memcpy(bytes.data(), oneHot.data(), bytes.size());
  return bytes;
}

BatchSource::BatchSource(Examples examples, std::uint32_t batchSize, std::uint64_t shuffleSeed, bool shuffled)
    : examples_(std::move(examples)), batchSize_(batchSize), seed_(shuffleSeed), shuffled_(shuffled) {
  if (batchSize_ == 0) throw std::invalid_argument("BatchSource: batch size must be positive");
  if (examples_.count < batchSize_)
    throw std::invalid_argument("BatchSource: " + std::to_string(examples_.count) + " examples cannot fill one batch of " +
                                std::to_string(batchSize_));
  shuffle();
}

// Fisher-Yates with mt19937_64 draws (no std distribution: identical on every
// standard library).
void BatchSource::shuffle() {
  order_.resize(examples_.count);
  for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  position_ = 0;
  if (!shuffled_) return;
  std::mt19937_64 rng(seed_ * 0x9e3779b97f4a7c15ull + epoch_);
  for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng() % i]);
}

Batch BatchSource::next() {
  Batch b;
  b.images.resize(std::size_t(batchSize_) * examples_.features);
  b.labels.resize(std::size_t(batchSize_) * examples_.labelSteps);
  if (!holdsTokens()) {
    nextInto(b.images.data(), b.labels.data());
    return b;
  }
  b.tokens.resize(b.images.size());
  nextTokensInto(b.tokens.data(), b.labels.data());
  for (std::size_t i = 0; i < b.tokens.size(); ++i) b.images[i] = float(b.tokens[i]);
  return b;
}

void BatchSource::copyLabels(std::uint32_t example, std::int32_t* labels) const {
  const std::uint16_t* from = &examples_.labels[std::size_t(example) * examples_.labelSteps];
  for (std::uint64_t s = 0; s < examples_.labelSteps; ++s) labels[s] = from[s];
}

const std::uint32_t* BatchSource::nextOrder() {
  if (position_ + batchSize_ > examples_.count) ++epoch_, shuffle();  // drop the remainder
  const std::uint32_t* order = &order_[position_];
  position_ += batchSize_;
  ++served_;
  return order;
}

void BatchSource::nextTokensInto(std::int32_t* tokens, std::int32_t* labels) {
  const std::uint32_t* order = nextOrder();
  const std::size_t f = examples_.features;
  for (std::uint32_t r = 0; r < batchSize_; ++r) {
    std::memcpy(tokens + r * f, &examples_.tokens[std::size_t(order[r]) * f], f * sizeof(std::int32_t));
    copyLabels(order[r], labels + std::size_t(r) * examples_.labelSteps);
  }
}

void BatchSource::nextInto(float* images, std::int32_t* labels) {
  const std::uint32_t* order = nextOrder();
  // The images are scattered over the dataset (tens of MB): ask for all their
  // cache lines first, so the misses overlap instead of coming one by one.
  for (std::uint32_t r = 0; r < batchSize_; ++r) {
    const std::uint8_t* image = &examples_.pixels[std::size_t(order[r]) * examples_.features];
    for (std::uint64_t byte = 0; byte < examples_.features; byte += 64) __builtin_prefetch(image + byte);
  }
  for (std::uint32_t r = 0; r < batchSize_; ++r) {
    const std::uint32_t ex = order[r];
    toFloats(&examples_.pixels[std::size_t(ex) * examples_.features], images + std::size_t(r) * examples_.features,
             examples_.features, examples_.pixelDivisor);
    copyLabels(ex, labels + std::size_t(r) * examples_.labelSteps);
  }
}

}  // namespace ipusim::sim::dataset
