#include "scheduler/models/keras_weights.hpp"

#include "model/util/input_file.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/hdf5_image.hpp"
#include "scheduler/models/keras_archive.hpp"
#include "scheduler/models/workload_limits.hpp"

#include <unistd.h>

#include <cctype>
#include <optional>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw std::invalid_argument(path + ": " + what); }

// A layer's Keras class (its kind when the model names none), and how errors name it.
std::string classOfLayer(const LayerSpec& l, const std::map<std::string, std::string>& classOf) {
  const auto found = classOf.find(l.name);
  return found == classOf.end() ? l.kind : found->second;
}
std::string whereOf(const LayerSpec& l, const std::string& cls) { return "layer '" + l.name + "' (" + cls + ")"; }

// The variables Keras creates for a layer, in its order, as ipusim names them.
std::vector<std::string> kerasVariables(const LayerSpec& l, const std::string& cls, const Hdf5Image& file) {
  if (cls == "Dense" || cls == "Conv2D" || cls == "Conv1D") {  // the kernel as Keras stores it
    if (l.useBias) return {"kernel", "bias"};
    return {"kernel"};
  }
  if (cls == "BatchNormalization") {
    std::vector<std::string> vars;
    if (l.scale) vars.push_back("gamma");
    if (l.center) vars.push_back("beta");
    vars.insert(vars.end(), {"moving_mean", "moving_variance"});
    return vars;
  }
  if (layerOfKind(l.kind).hasWeights(l))
    file.fail(whereOf(l, cls) + ": reading the trained weights of a " + cls +
              " layer is not modelled yet (Dense, Conv1D, Conv2D and BatchNormalization are)");
  return {};
}

// The bytes of the HDF5 file: the .weights.h5 itself, or a .keras archive's entry.
std::string weightsFileBytes(const std::string& path) {
  const int fd = util::openRegularInputFile(path, "Keras weights file", kMaxWeightsFileBytes);
  char head[8] = {};
  const ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  const std::string start(head, n > 0 ? std::size_t(n) : 0);
  if (looksLikeZip(start)) return kerasArchiveWeights(path, kMaxWeightsFileBytes);
  if (!looksLikeHdf5(start))
    fail(path, "neither a .keras archive (a zip file) nor a .weights.h5 file (HDF5): expected the trained weights "
               "Keras's model.save() or model.save_weights() writes");
  return util::readInputFile(path, "Keras weights file", kMaxWeightsFileBytes);
}

// Keras 3 (saving_lib): a group per layer of model.layers, named by its class.
TrainedWeights readKeras3Weights(const Hdf5Image& file, const std::vector<LayerSpec>& layers,
                                 const std::map<std::string, std::string>& classOf) {
  TrainedWeights weights;
  std::map<std::string, int> used;  // Keras's counter per snake-case class name
  std::set<std::string> groups;
  for (const LayerSpec& l : layers) {
    const std::string cls = classOfLayer(l, classOf);
    const std::string where = whereOf(l, cls);
    std::string group = kerasSnakeCase(cls);
    const auto [at, first] = used.emplace(group, 0);
    if (!first) group += "_" + std::to_string(++at->second);
    group = "layers/" + group;
    groups.insert(group);
    const std::vector<std::string> vars = kerasVariables(l, cls, file);
    for (std::size_t v = 0; v < vars.size(); ++v) {
      const std::string dataset = group + "/vars/" + std::to_string(v);
      if (!file.exists(dataset))
        file.fail(where + ": its " + vars[v] + " is missing (expected the dataset " + dataset +
                  ", as Keras 3 stores the layer's weights: is this file of another model?)");
      Hdf5Image::Array a = file.readArray(dataset, where + ": ");
      weights.emplace(l.name + "/" + vars[v], TrainedWeight{std::move(a.shape), std::move(a.values)});
    }
    // As many as the layer has, as Keras's load_own_variables requires: a
    // Dense without a bias read a file's kernel and dropped its bias unsaid.
    if (!vars.empty()) {
      const std::size_t held = file.members(group + "/vars").size();
      if (held != vars.size()) {
        std::string list;
        for (const std::string& v : vars) list += (list.empty() ? "" : ", ") + v;
        file.fail(where + ": " + group + "/vars holds " + std::to_string(held) + " weights but the layer has " +
                  std::to_string(vars.size()) + " (" + list + "): the weights of another model? (Keras: expected " +
                  std::to_string(vars.size()) + " variables, received " + std::to_string(held) + ")");
      }
    }
  }
  // Every layer group of the file belongs to a layer of the model.
  for (const std::string& name : file.members("layers")) {
    const std::string group = "layers/" + name;
    // (An InputLayer of a functional model has a group without variables.)
    if (!groups.count(group) && file.exists(group + "/vars/0"))
      file.fail("holds the weights of '" + group + "', which the model has no layer for (" + std::to_string(layers.size()) +
                " layers): the weights of another model?");
  }
  return weights;
}

// A list attribute as Keras's legacy load_attributes_from_hdf5_group reads
// it: `name` itself, or the chunks name0, name1, ... a long list was split into.
// Keras cuts a list into chunks of at most 64,512 bytes (HDF5_OBJECT_HEADER_LIMIT
// in legacy_h5_format.py); 256 chunks hold 16 MB of names, twice the 8,192
// layers (kMaxLayers) of 1,024-byte names (kMaxNameBytes) a model may have.
// Each chunk is looked up among the object's attributes (a linear search in
// HDF5's object header): 40,000 chunks took 19 s, and more grew as the square.
constexpr int kMaxListChunks = 256;

std::optional<std::vector<std::string>> kerasListAttribute(const Hdf5Image& file, const std::string& object,
                                                           const std::string& name) {
  if (auto list = file.stringListAttribute(object, name)) return list;
  std::optional<std::vector<std::string>> joined;
  for (int chunk = 0;; ++chunk) {
    if (chunk == kMaxListChunks && file.hasAttribute(object, name + std::to_string(chunk)))
      file.fail((object.empty() ? std::string("the file") : "'" + object + "'") + "'s attribute '" + name +
                std::to_string(chunk) + "': more than " + std::to_string(kMaxListChunks) + " chunks of '" + name +
                "' (Keras cuts a list into chunks of 64,512 bytes; " + std::to_string(kMaxListChunks) +
                " hold more names than a model of " + std::to_string(kMaxLayers) + " layers has)");
    const auto part = file.stringListAttribute(object, name + std::to_string(chunk));
    if (!part) return joined;
    if (!joined) joined.emplace();
    joined->insert(joined->end(), part->begin(), part->end());
  }
}

// Keras 2, tf.keras and Keras 3's legacy `.h5` (legacy_h5_format): a group
// per layer named by its config name, listed in `layer_names`, each listing
// its weights' paths (relative to the group) in `weight_names`: the file's
// layers with weights are matched to the model's in order, as Keras's
// load_weights_from_hdf5_group matches them, a weight to a variable by position.
TrainedWeights readLegacyWeights(const Hdf5Image& file, const std::vector<LayerSpec>& layers,
                                 const std::map<std::string, std::string>& classOf) {
  // A whole-model file (model.save("m.h5")) holds them in model_weights; model.save_weights("w.h5") at the root.
  const std::string root = file.isGroup("model_weights") ? "model_weights/" : "";
  const auto layerNames = kerasListAttribute(file, root.empty() ? "" : "model_weights", "layer_names");
  struct FileLayer {
    std::string name;
    std::vector<std::string> weightNames;
  };
  std::vector<FileLayer> fileLayers;
  for (const std::string& name : *layerNames) {
    if (!file.isGroup(root + name))
      file.fail("its layer_names lists '" + name + "' but it holds no group '" + root + name + "'");
    auto weightNames = kerasListAttribute(file, root + name, "weight_names");
    if (!weightNames) file.fail("the group '" + root + name + "' has no weight_names attribute (a damaged file)");
    if (!weightNames->empty()) fileLayers.push_back({name, std::move(*weightNames)});
  }
  struct ModelLayer {
    const LayerSpec* layer;
    std::string where;
    std::vector<std::string> vars;
  };
  std::vector<ModelLayer> modelLayers;
  for (const LayerSpec& l : layers) {
    const std::string cls = classOfLayer(l, classOf);
    std::vector<std::string> vars = kerasVariables(l, cls, file);
    if (!vars.empty()) modelLayers.push_back({&l, whereOf(l, cls), std::move(vars)});
  }
  auto names = [](auto& list, auto nameOf) {
    std::string text;
    for (std::size_t i = 0; i < list.size() && i < 8; ++i) text += (i ? ", " : "") + nameOf(list[i]);
    return list.size() > 8 ? text + ", ..." : text;
  };
  if (fileLayers.size() != modelLayers.size())
    file.fail("holds the weights of " + std::to_string(fileLayers.size()) + " layers (" +
              names(fileLayers, [](const FileLayer& f) { return f.name; }) + ") but the model has " +
              std::to_string(modelLayers.size()) + " layers with weights (" +
              names(modelLayers, [](const ModelLayer& m) { return m.layer->name; }) +
              "): the weights of another model? (Keras matches them in order)");
  TrainedWeights weights;
  for (std::size_t i = 0; i < fileLayers.size(); ++i) {
    const FileLayer& f = fileLayers[i];
    const ModelLayer& m = modelLayers[i];
    if (f.weightNames.size() != m.vars.size())
      file.fail(m.where + ": the file's layer '" + f.name + "' holds " + std::to_string(f.weightNames.size()) +
                " weights (" + names(f.weightNames, [](const std::string& n) { return n; }) + "), the layer has " +
                std::to_string(m.vars.size()) + " (" + names(m.vars, [](const std::string& n) { return n; }) + ")");
    for (std::size_t v = 0; v < m.vars.size(); ++v) {
      const std::string dataset = root + f.name + "/" + f.weightNames[v];
      if (!file.exists(dataset))
        file.fail(m.where + ": its " + m.vars[v] + " is missing: the file's layer '" + f.name + "' names '" +
                  f.weightNames[v] + "' but holds no dataset " + dataset);
      Hdf5Image::Array a = file.readArray(dataset, m.where + ": ");
      weights.emplace(m.layer->name + "/" + m.vars[v], TrainedWeight{std::move(a.shape), std::move(a.values)});
    }
  }
  return weights;
}

}  // namespace

std::string kerasSnakeCase(const std::string& className) {
  // naming.to_snake_case: drop non-word characters; "(.)([A-Z][a-z]+)" ->
  // "\1_\2"; "([a-z])([A-Z])" -> "\1_\2"; lower case.
  std::string name;
  for (char c : className)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') name += c;
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  std::string first;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i > 0 && upper(name[i]) && i + 1 < name.size() && lower(name[i + 1])) first += '_';
    first += name[i];
  }
  std::string second;
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (i > 0 && lower(first[i - 1]) && upper(first[i])) second += '_';
    second += char(std::tolower(static_cast<unsigned char>(first[i])));
  }
  return second;
}

TrainedWeights readKerasWeights(const std::string& path, const std::vector<LayerSpec>& layers,
                                const std::map<std::string, std::string>& classOf) {
  for (const LayerSpec& l : layers)
    if (!l.weightsOf.empty())
      throw std::invalid_argument(path + ": " + whereOf(l, classOfLayer(l, classOf)) +
                                  ": calls a shared layer again; reading the weights of models with shared layers is not modelled");
  const Hdf5Image file(weightsFileBytes(path), path);
  if (file.isGroup("layers")) return readKeras3Weights(file, layers, classOf);
  const std::string legacyRoot = file.isGroup("model_weights") ? "model_weights" : "";
  if (file.hasAttribute(legacyRoot, "layer_names") || file.hasAttribute(legacyRoot, "layer_names0"))
    return readLegacyWeights(file, layers, classOf);
  file.fail("holds neither Keras 3's weights (a 'layers' group) nor a legacy Keras file's (a 'model_weights' group, "
            "or layer groups at the root, listed in 'layer_names'): not the weights Keras writes");
}

}  // namespace ipusim::scheduler
