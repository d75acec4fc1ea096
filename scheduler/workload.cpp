#include "scheduler/workload.hpp"

#include <algorithm>

#include "model/util/input_file.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/workload_limits.hpp"

#include <limits>
#include <unistd.h>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// A workload is a few hundred bytes of JSON (design choice: 16 MiB is room for
// any hand-written file, and refuses a mistaken path to a large file at once).
constexpr std::uint64_t kMaxWorkloadFileBytes = 16ull << 20;

using nlohmann::json;

// Reads one JSON object, checking keys and types; every error names the
// source file and the key path.
class Reader {
 public:
  Reader(const json& j, std::string source, std::string path)
      : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_.empty() ? "(document)" : path_, "expected an object");
  }
  void allowOnly(const std::set<std::string>& keys) const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!keys.count(it.key())) {
        std::string valid;
        for (const auto& k : keys) valid += (valid.empty() ? "" : ", ") + k;
        fail(key(it.key()), "unknown key (valid keys here: " + valid + ")");
      }
  }
  bool has(const std::string& k) const { return j_.contains(k); }
  Reader object(const std::string& k) const {
    static const json empty = json::object();
    return Reader(has(k) ? j_.at(k) : empty, source_, key(k));
  }
  std::string string(const std::string& k, const std::string& def, const std::set<std::string>& allowed = {}) const {
    if (!has(k)) return def;
    const json& v = j_.at(k);
    if (!v.is_string()) fail(key(k), "expected a string");
    std::string s = v.get<std::string>();
    if (!allowed.empty() && !allowed.count(s)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : " | ") + a;
      fail(key(k), "'" + s + "' is not one of " + list);
    }
    return s;
  }
  std::uint64_t count(const std::string& k, std::uint64_t def, bool positive) const {
    if (!has(k)) return def;
    const json& v = j_.at(k);
    if (!v.is_number_integer() || (v.is_number_integer() && v.get<std::int64_t>() < 0) ||
        (positive && v.get<std::int64_t>() == 0))
      fail(key(k), positive ? "expected a positive integer" : "expected a non-negative integer");
    return v.get<std::uint64_t>();
  }
  std::uint32_t count32(const std::string& k, std::uint32_t def, bool positive) const {
    std::uint64_t v = count(k, def, positive);
    if (v > 0xffffffffull) fail(key(k), "value too large");
    return std::uint32_t(v);
  }
  double number(const std::string& k, double def) const {
    if (!has(k)) return def;
    if (!j_.at(k).is_number()) fail(key(k), "expected a number");
    return j_.at(k).get<double>();
  }
  bool boolean(const std::string& k, bool def) const {
    if (!has(k)) return def;
    if (!j_.at(k).is_boolean()) fail(key(k), "expected true or false");
    return j_.at(k).get<bool>();
  }
  const json& raw() const { return j_; }
  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  [[noreturn]] void fail(const std::string& keyPath, const std::string& what) const {
    throw std::invalid_argument(source_ + ": " + keyPath + ": " + what);
  }
  const std::string& source() const { return source_; }

 private:
  const json& j_;
  std::string source_, path_;
};

void requireFile(const Reader& r, const std::string& keyPath, const std::string& file) {
  try {
    // A regular file (not a FIFO, a directory, a device), checked without reading it.
    ::close(util::openRegularInputFile(file, "dataset file", std::numeric_limits<std::uint64_t>::max()));
  } catch (const std::invalid_argument& e) {
    r.fail(keyPath, e.what());
  }
}

DatasetSpec parseDataset(const Reader& r) {
  r.allowOnly({"format", "images", "labels", "batch_size", "shuffle_seed", "features", "classes", "examples"});
  DatasetSpec d;
  d.format = r.string("format", d.format, {"idx", "synthetic"});
  d.images = r.string("images", d.images);
  d.labels = r.string("labels", d.labels);
  d.batchSize = r.count32("batch_size", d.batchSize, true);
  d.shuffleSeed = r.count("shuffle_seed", d.shuffleSeed, false);
  d.features = r.count32("features", d.features, true);
  d.classes = r.count32("classes", d.classes, true);
  d.syntheticExamples = r.count("examples", d.syntheticExamples, true);
  if (d.format == "idx") {
    requireFile(r, r.key("images"), d.images);
    requireFile(r, r.key("labels"), d.labels);
  } else if (d.syntheticExamples < d.batchSize) {
    r.fail(r.key("examples"), "must be at least batch_size (" + std::to_string(d.batchSize) + ")");
  }
  return d;
}

std::vector<LayerSpec> parseLayers(const Reader& top) {
  if (!top.has("model")) top.fail("model", "missing (expected {\"layers\": [...]})");
  Reader model = top.object("model");
  model.allowOnly({"layers", "dtype"});
  if (!model.has("layers") || !model.raw().at("layers").is_array() || model.raw().at("layers").empty())
    model.fail("model.layers", "expected a non-empty array of layers");
  std::vector<LayerSpec> layers;
  int denseCount = 0, flattenCount = 0;
  const json& arr = model.raw().at("layers");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    Reader l(arr[i], top.source(), "model.layers[" + std::to_string(i) + "]");
    LayerSpec spec;
    spec.kind = l.string("type", "", {"flatten", "dense"});
    if (spec.kind.empty()) l.fail(l.key("type"), "missing (expected flatten or dense)");
    if (spec.kind == "flatten") {
      l.allowOnly({"type", "name", "shard"});
      spec.name = l.string("name", flattenCount ? "flatten_" + std::to_string(flattenCount) : "flatten");
      ++flattenCount;
    } else {
      l.allowOnly({"type", "name", "units", "activation", "shard"});
      if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
      spec.units = l.count32("units", 0, true);
      const std::string act = l.string("activation", "linear", {"linear", "relu", "softmax"});
      spec.activation = act == "relu" ? Activation::Relu : act == "softmax" ? Activation::Softmax : Activation::Linear;
      spec.name = l.string("name", denseCount ? "dense_" + std::to_string(denseCount) : "dense");
      ++denseCount;
    }
    spec.shard = l.count32("shard", 0, false);
    layers.push_back(spec);
  }
  if (!denseCount) model.fail("model.layers", "needs at least one dense layer");
  for (std::size_t i = 0; i + 1 < layers.size(); ++i)
    if (layers[i].activation == Activation::Softmax)
      model.fail("model.layers[" + std::to_string(i) + "].activation",
                 "softmax is supported on the last layer only (fused with the loss)");
  return layers;
}

}  // namespace

std::uint32_t ipusPerReplica(const Workload& w) {
  std::uint32_t highest = 0;
  for (const LayerSpec& l : w.layers) highest = std::max(highest, l.shard);
  return highest + 1;
}

const char* toString(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Softmax: return "softmax";
    default: return "linear";
  }
}

Workload parseWorkload(const json& j, const std::string& source) {
  Reader top(j, source, "");
  top.allowOnly({"name", "dataset", "model", "loss", "optimizer", "training", "ipu", "compile", "seed"});
  Workload w;
  w.name = top.string("name", source);
  w.dataset = parseDataset(top.object("dataset"));
  w.layers = parseLayers(top);
  // Keras's dtype policy names: float32 variables and compute; float16 both;
  // mixed_float16 float32 variables and float16 compute.
  w.dtype = top.object("model").string("dtype", w.dtype, {"float32", "float16", "mixed_float16"});
  w.loss = top.string("loss", w.loss, {"sparse_categorical_crossentropy"});

  Reader opt = top.object("optimizer");
  opt.allowOnly({"type", "learning_rate"});
  w.optimizer = opt.string("type", w.optimizer, {"sgd"});
  w.learningRate = opt.number("learning_rate", w.learningRate);
  if (!(w.learningRate > 0)) opt.fail("optimizer.learning_rate", "expected a positive number");

  Reader tr = top.object("training");
  tr.allowOnly({"steps", "steps_per_execution", "feeds", "infeed", "outfeed", "gradient_accumulation_count"});
  w.training.steps = tr.count("steps", w.training.steps, true);
  w.training.stepsPerExecution = tr.count32("steps_per_execution", w.training.stepsPerExecution, true);
  w.training.feeds = tr.boolean("feeds", w.training.feeds);
  Reader in = tr.object("infeed");
  in.allowOnly({"prefetch_depth"});
  w.training.prefetchDepth = in.count32("prefetch_depth", w.training.prefetchDepth, true);
  Reader out = tr.object("outfeed");
  out.allowOnly({"mode", "buffer_depth"});
  w.training.outfeedMode = out.string("mode", w.training.outfeedMode, {"ALL", "LAST"});
  w.training.outfeedBufferDepth = out.count32("buffer_depth", w.training.outfeedBufferDepth, true);
  if (!w.training.feeds) w.training.stepsPerExecution = 1;  // one step per Engine::run
  if (w.training.steps % w.training.stepsPerExecution)
    tr.fail("training.steps", "must be a multiple of steps_per_execution (" +
                                  std::to_string(w.training.stepsPerExecution) + ")");
  w.training.gradientAccumulationCount =
      tr.count32("gradient_accumulation_count", w.training.gradientAccumulationCount, true);
  if (w.training.stepsPerExecution % w.training.gradientAccumulationCount)
    tr.fail("training.gradient_accumulation_count",
            std::to_string(w.training.gradientAccumulationCount) + " must divide steps_per_execution (" +
                std::to_string(w.training.stepsPerExecution) +
                (w.training.feeds ? ")" : ", 1 without feeds)") + ": the weights are updated within one execution");

  Reader ipu = top.object("ipu");
  ipu.allowOnly({"arch", "tiles", "available_memory_proportion", "num_ipus"});
  w.ipu.arch = ipu.string("arch", w.ipu.arch, {"ipu1", "ipu2"});
  w.ipu.tiles = ipu.count32("tiles", 0, false);
  w.ipu.numIpus = ipu.count32("num_ipus", w.ipu.numIpus, true);
  const std::uint32_t perReplica = ipusPerReplica(w);
  if (w.ipu.numIpus % perReplica)
    ipu.fail("ipu.num_ipus", std::to_string(w.ipu.numIpus) + " is not a multiple of the " +
                                 std::to_string(perReplica) + " IPUs one replica needs (model.layers[i].shard up to " +
                                 std::to_string(perReplica - 1) + ")");
  w.ipu.availableMemoryProportion = ipu.number("available_memory_proportion", w.ipu.availableMemoryProportion);
  if (!(w.ipu.availableMemoryProportion > 0 && w.ipu.availableMemoryProportion <= 1))
    ipu.fail("ipu.available_memory_proportion", "expected a number in (0, 1]");

  Reader comp = top.object("compile");
  comp.allowOnly({"scheduling", "allow_out_of_memory"});
  w.scheduling = comp.string("scheduling", w.scheduling,
                             {"post_order", "look_ahead", "shortest_path", "clustering", "choose_best"});
  w.allowOutOfMemory = comp.boolean("allow_out_of_memory", w.allowOutOfMemory);
  w.seed = top.count("seed", w.seed, false);
  checkWorkloadLimits(w, source);
  return w;
}

Workload loadWorkload(const std::string& path) {
  const std::string text = util::readInputFile(path, "workload file", kMaxWorkloadFileBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range
    throw std::invalid_argument(path + ": not valid JSON: " + util::jsonErrorText(e.what()));
  }
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  Workload w = parseWorkload(j, path);
  if (!j.contains("name")) w.name = stem;
  return w;
}

}  // namespace ipusim::scheduler
