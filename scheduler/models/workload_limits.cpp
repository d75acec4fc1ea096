#include "scheduler/models/workload_limits.hpp"

#include "model/target_limits.hpp"

#include "model/hardware/renamed_plans_limit.hpp"

#include "model/target.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/layers/layer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim::scheduler {
namespace {

[[noreturn]] void overLimit(const std::string& source, const std::string& key, const std::string& what) {
  throw std::invalid_argument(source + ": " + key + ": " + what);
}

std::string str(std::uint64_t v) { return std::to_string(v); }

using Wide = WideCount;
std::string wide(Wide v) { return wideText(v); }

// A convolution's kernel (LayerSpec::window: kernel_size) against kMaxKernelTaps.
template <typename Fail>
void checkKernelTaps(const LayerSpec& l, const Fail& fail) {
  if (l.kind.find("conv") == std::string::npos) return;  // pooling windows are bounded by their input
  const std::uint64_t taps = std::uint64_t(l.window[0]) * l.window[1];
  if (taps > kMaxKernelTaps)
    fail("kernel_size", str(l.window[0]) + "x" + str(l.window[1]) + " is " + str(taps) +
                            " kernel taps, over the limit of " + str(kMaxKernelTaps) +
                            " (a 64x64 kernel; scheduler/models/workload_limits.hpp)");
}

}  // namespace

std::string wideText(WideCount v) {
  std::string digits;
  do digits.insert(digits.begin(), char('0' + int(v % 10))); while ((v /= 10) != 0);
  return digits;
}

void checkLayoutVertices(const std::string& key, std::uint64_t copies, const std::string& what,
                         std::uint64_t vertices, const std::string& hint) {
  const Wide total = Wide(copies) * vertices;
  if (total <= kMaxLaidOutVertices) return;
  throw std::invalid_argument(key + ": " + str(copies) + " " + what + " of " + str(vertices) + " vertices each lay out " +
                              wide(total) + " vertices, over the limit of " + str(kMaxLaidOutVertices) +
                              " (scheduler/models/workload_limits.hpp: host memory grows with them): at most " +
                              str(kMaxLaidOutVertices / std::max<std::uint64_t>(1, vertices)) + hint);
}

void checkPipelineCopies(const std::string& key, std::uint64_t miniBatches, std::uint64_t tensorIntervals,
                         std::uint64_t tensorRenames, std::uint64_t tensors, std::uint64_t programs) {
  // (Each count is at most the graph's, far below 2^64 / kPipelineItemsPerObject.)
  const std::uint64_t items = tensorIntervals + tensorRenames + (tensors + programs) * kPipelineItemsPerObject;
  const Wide total = Wide(miniBatches > 0 ? miniBatches - 1 : 0) * items;
  if (total <= kMaxPipelineCopyItems) return;
  throw std::invalid_argument(
      key + ": " + str(miniBatches) + " mini-batches in flight, each after the first laying out " +
      str(tensorIntervals) + " tensor intervals, " + str(tensorRenames) + " tensor renames, " + str(tensors) +
      " tensors and " + str(programs) + " programs of its own (a tensor or program counted as " +
      str(kPipelineItemsPerObject) + " items), lay out " + wide(total) +
      " items, over the limit of " + str(kMaxPipelineCopyItems) +
      " (scheduler/models/workload_limits.hpp: host memory grows with them): at most " +
      str(kMaxPipelineCopyItems / std::max<std::uint64_t>(1, items) + 1) + " mini-batches per weight update");
}

void checkFunctionalPipeline(const std::string& key, std::uint64_t miniBatches, std::uint64_t renamedWork,
                             std::uint32_t replicas) {
  using model::hardware::kMaxRenamedPlanItems;
  const Wide each = Wide(renamedWork) * std::max<std::uint32_t>(1, replicas);
  const Wide total = Wide(miniBatches > 0 ? miniBatches - 1 : 0) * each;
  if (total <= kMaxRenamedPlanItems) return;
  throw std::invalid_argument(
      key + ": " + str(miniBatches) + " mini-batches in flight, each after the first planning " + str(renamedWork) +
      " vertices and copy regions of its own" + (replicas > 1 ? " on each of " + str(replicas) + " replicas" : "") +
      " in functional mode, plan " + wide(total) + ", over the limit of " + str(kMaxRenamedPlanItems) +
      " (model/hardware/renamed_plans_limit.hpp: host memory grows with them): at most " +
      wide(Wide(kMaxRenamedPlanItems) / each + 1) +
      " mini-batches per weight update, or run timing only (--synthetic-data)");
}

std::string tensorLimitText() { return "the limit for one tensor is " + std::to_string(kMaxTensorBytes) + " bytes"; }

void checkLayerCount(const Workload& w, const std::string& source) {
  if (w.layers.size() <= kMaxLayers) return;
  const bool keras = !w.kerasModel.empty();
  overLimit(keras ? w.kerasModel : source, keras ? "layers" : "model.layers",
            str(w.layers.size()) + " layer calls are over the limit of " + str(kMaxLayers) +
                " (scheduler/models/workload_limits.hpp: the compile's time grows faster than the layer count)");
}

namespace {
std::string quoted(const std::string& name) { return "'" + (name.size() > 40 ? name.substr(0, 40) + "..." : name) + "'"; }
}  // namespace

std::string overlongReference(const std::string& name) {
  if (name.size() <= kMaxNameBytes) return "";
  return quoted(name) + " is " + str(name.size()) + " bytes long: it names no layer (a layer's name is at most " +
         str(kMaxNameBytes) + " bytes, scheduler/models/workload_limits.hpp)";
}

void checkNames(const Workload& w, const std::string& source) {
  const auto tooLong = [](const std::string& name) {
    return str(name.size()) + " bytes long, over the limit of " + str(kMaxNameBytes) +
           " (scheduler/models/workload_limits.hpp: names are copied into the executable's tensors, compute sets "
           "and programs, and into the profile's slices)";
  };
  // A control character (a newline, an escape sequence) in a name: every
  // summary and report prints the names, and such a name split their lines
  // and drove the terminal ("workload evil<ESC>[31m..." turned it red).
  const auto control = [](const std::string& name) {
    return util::oneLineText(name.size() > 40 ? name.substr(0, 40) + "..." : name) +
           " holds a control character (a newline would split the lines of the summaries and reports that print "
           "it, an escape sequence drive the terminal): expected a name of printable text";
  };
  // (A workload that gives no name is named after `source` while it is
  // parsed, until parseWorkloadFile names it after its file: that default,
  // which holds a sweep's --vary values, is no name the user gave.)
  if (w.name != source) {
    if (w.name.size() > kMaxNameBytes) overLimit(source, "name", quoted(w.name) + " is " + tooLong(w.name));
    if (util::holdsControlCharacter(w.name)) overLimit(source, "name", control(w.name));
  }
  const bool keras = !w.kerasModel.empty();
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const std::string& name = w.layers[i].name;
    const std::string key = "model.layers[" + std::to_string(i) + "].name";
    if (name.size() > kMaxNameBytes) {
      if (keras) overLimit(w.kerasModel, "layer " + quoted(name), "its name is " + tooLong(name));
      overLimit(source, key, quoted(name) + " is " + tooLong(name));
    }
    if (util::holdsControlCharacter(name)) {
      if (keras) overLimit(w.kerasModel, "a layer's name", control(name));
      overLimit(source, key, control(name));
    }
  }
}

void checkWorkloadLimits(const Workload& w, const std::string& source) {
  const model::Target preset = model::Target::preset(w.ipu.arch);
  const std::uint64_t tiles = w.ipu.tiles ? w.ipu.tiles : preset.tile.tilesPerIpu;
  if (tiles > preset.tile.tilesPerIpu)
    overLimit(source, "ipu.tiles", str(tiles) + " is more than an " + w.ipu.arch + " IPU has (" +
                                       str(std::uint64_t(preset.tile.tilesPerIpu)) + ")");
  if (w.ipu.numIpus > model::kMaxIpus)
    overLimit(source, "ipu.num_ipus", str(std::uint64_t(w.ipu.numIpus)) + " is more than the " +
                                          str(std::uint64_t(model::kMaxIpus)) + " IPUs of the largest system (an IPU-POD256)");
  const DatasetSpec& d = w.dataset;
  constexpr std::uint64_t kFloat = 4;  // bytes per float element
  const std::string limit = tensorLimitText();

  if (d.classes > kMaxClasses)
    overLimit(source, "dataset.classes", str(std::uint64_t(d.classes)) + " is over the limit of " + str(std::uint64_t(kMaxClasses)) +
                                             " (labels are 16-bit class indices)");
  const Wide batchBytes = Wide(d.batchSize) * d.features * kFloat;
  if (batchBytes > kMaxTensorBytes)
    overLimit(source, "dataset.batch_size", str(std::uint64_t(d.batchSize)) + " batches of " + str(std::uint64_t(d.features)) +
                                                " features are " + wide(batchBytes) + " bytes of float input; " + limit +
                                                ": at most " + str(kMaxTensorBytes / (std::uint64_t(d.features) * kFloat)));
  if (d.format == "synthetic") {
    const std::uint64_t maxExamples = kMaxHostDatasetBytes / d.features;
    if (d.syntheticExamples > maxExamples)
      overLimit(source, "dataset.examples", str(d.syntheticExamples) + " examples of " + str(std::uint64_t(d.features)) +
                                                " bytes are over the host dataset limit of " +
                                                str(kMaxHostDatasetBytes) + " bytes: at most " + str(maxExamples));
  }

  // Each layer's tensors (Layer::checkLimits), named as the Keras file names
  // the layer and its key when the model came from one.
  const bool keras = !w.kerasModel.empty() && w.kerasLayers.size() == w.layers.size();
  checkLayerCount(w, source);
  checkNames(w, source);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const auto fail = [&](const std::string& key, const std::string& what) {
      if (keras) overLimit(w.kerasModel, w.kerasLayers[i] + (key.empty() ? "" : ": " + key), what);
      overLimit(source, "model.layers[" + std::to_string(i) + "]" + (key.empty() ? "" : "." + key), what);
    };
    checkKernelTaps(w.layers[i], fail);
    layerOfKind(w.layers[i].kind).checkLimits(w.layers[i], d.batchSize, fail);
  }

  const TrainingSpec& t = w.training;
  if (t.steps > kMaxSteps)
    overLimit(source, "training.steps", str(t.steps) + " is over the limit of " + str(kMaxSteps));
  const std::uint64_t hostBatch = std::uint64_t(d.batchSize) * (std::uint64_t(d.features) * kFloat + 4);
  const std::uint64_t maxDepth = std::max<std::uint64_t>(1, kMaxHostDatasetBytes / hostBatch);
  if (t.prefetchDepth > maxDepth)
    overLimit(source, "training.infeed.prefetch_depth", str(std::uint64_t(t.prefetchDepth)) + " batches of " + str(hostBatch) +
                                                             " bytes are over the host buffer limit of " +
                                                             str(kMaxHostDatasetBytes) + " bytes: at most " + str(maxDepth));
  if (t.outfeedBufferDepth > kMaxOutfeedDepth)
    overLimit(source, "training.outfeed.buffer_depth",
              str(std::uint64_t(t.outfeedBufferDepth)) + " is over the limit of " + str(std::uint64_t(kMaxOutfeedDepth)) + " losses");
}

}  // namespace ipusim::scheduler
