#include "scheduler/models/keras_weights.hpp"

#include "model/util/input_file.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/keras_archive.hpp"

#include <hdf5.h>

#include <unistd.h>

#include <cctype>
#include <memory>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw std::invalid_argument(path + ": " + what); }

// An HDF5 handle closed with its own function, on every path.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

// Whether every link of `path` ("a/b/c") exists (H5Lexists fails on a missing middle link).
bool pathExists(hid_t file, const std::string& path) {
  for (std::size_t at = path.find('/'); ; at = path.find('/', at + 1)) {
    const std::string prefix = path.substr(0, at);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (at == std::string::npos) return true;
  }
}

// The variables Keras creates for a layer, in its order, as ipusim names them.
std::vector<std::string> kerasVariables(const LayerSpec& l, const std::string& cls, const std::string& path,
                                        const std::string& where) {
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
    fail(path, where + ": reading the trained weights of a " + cls +
                   " layer is not modelled yet (Dense, Conv2D and BatchNormalization are)");
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
  if (start.compare(0, 8, "\x89HDF\r\n\x1a\n") != 0)
    fail(path, "neither a .keras archive (a zip file) nor a .weights.h5 file (HDF5): expected the trained weights "
               "Keras 3's model.save() or model.save_weights() writes");
  return util::readInputFile(path, "Keras weights file", kMaxWeightsFileBytes);
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
  std::string bytes = weightsFileBytes(path);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are ours to report, not printed by the library
  // Opened from memory (the core driver over the file's image), read-only.
  Handle access{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
  if (access.id < 0 || H5Pset_fapl_core(access.id, 1 << 20, 0) < 0 ||
      H5Pset_file_image(access.id, bytes.data(), bytes.size()) < 0)
    fail(path, "the HDF5 library cannot take the weights file's image");
  Handle file{H5Fopen("model.weights.h5", H5F_ACC_RDONLY, access.id), H5Fclose};
  if (file.id < 0) fail(path, "the weights (HDF5) cannot be read: a damaged or truncated file");
  TrainedWeights weights;
  std::map<std::string, int> used;  // Keras's counter per snake-case class name
  std::set<std::string> groups;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    const auto found = classOf.find(l.name);
    const std::string cls = found == classOf.end() ? l.kind : found->second;
    const std::string where = "layer '" + l.name + "' (" + cls + ")";
    if (!l.weightsOf.empty())
      fail(path, where + ": calls a shared layer again; reading the weights of models with shared layers is not modelled");
    std::string group = kerasSnakeCase(cls);
    const auto [at, first] = used.emplace(group, 0);
    if (!first) group += "_" + std::to_string(++at->second);
    group = "layers/" + group;
    groups.insert(group);
    const std::vector<std::string> vars = kerasVariables(l, cls, path, where);
    for (std::size_t v = 0; v < vars.size(); ++v) {
      const std::string dataset = group + "/vars/" + std::to_string(v);
      if (!pathExists(file.id, dataset))
        fail(path, where + ": its " + vars[v] + " is missing (expected the dataset " + dataset +
                       ", as Keras 3 stores the layer's weights: is this file of another model?)");
      Handle data{H5Dopen2(file.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
      Handle space{data.id >= 0 ? H5Dget_space(data.id) : -1, H5Sclose};
      const int rank = space.id >= 0 ? H5Sget_simple_extent_ndims(space.id) : -1;
      if (rank < 0 || rank > 8) fail(path, where + ": " + dataset + ": not a readable array");
      std::vector<hsize_t> dims(std::size_t(rank) + 1, 0);
      H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
      TrainedWeight w;
      long double elements = 1;
      for (int d = 0; d < rank; ++d) w.shape.push_back(dims[std::size_t(d)]), elements *= dims[std::size_t(d)];
      // A dataset holds at least a byte per element unless compressed (Keras
      // does not compress): more elements than the file's bytes is a damaged header.
      if (elements > (long double)bytes.size())
        fail(path, where + ": " + dataset + ": shape " + shapeText(w.shape) + " claims more values than the file holds");
      w.values.resize(std::size_t(elements));
      if (H5Dread(data.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.values.data()) < 0)
        fail(path, where + ": " + dataset + ": its values cannot be read as numbers (damaged or truncated)");
      weights.emplace(l.name + "/" + vars[v], std::move(w));
    }
  }
  // Every layer group of the file belongs to a layer of the model.
  Handle layersGroup{H5Gopen2(file.id, "layers", H5P_DEFAULT), H5Gclose};
  if (layersGroup.id < 0) fail(path, "no 'layers' group: not the weights Keras 3 writes");
  H5G_info_t info{};
  if (H5Gget_info(layersGroup.id, &info) < 0) fail(path, "its 'layers' group cannot be read");
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    char name[256] = {};
    if (H5Lget_name_by_idx(layersGroup.id, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT) < 0) continue;
    const std::string group = std::string("layers/") + name;
    // (An InputLayer of a functional model has a group without variables.)
    if (!groups.count(group) && pathExists(file.id, group + "/vars/0"))
      fail(path, "holds the weights of '" + group + "', which the model has no layer for (" + std::to_string(layers.size()) +
                     " layers): the weights of another model?");
  }
  return weights;
}

}  // namespace ipusim::scheduler
