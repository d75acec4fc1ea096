#include "scheduler/models/hdf5_image.hpp"

#include "scheduler/models/layer_spec.hpp"

#include <stdexcept>
#include <utility>

namespace ipusim::scheduler {
namespace {

// An HDF5 handle closed with its own function, on every path.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

// A dataset holds at most this many dimensions here (Keras's weights have
// at most 5: a Conv3D kernel); more is a damaged or hostile header.
constexpr int kMaxRank = 8;

}  // namespace

Hdf5Image::Hdf5Image(std::string bytes, std::string path) : bytes_(std::move(bytes)), path_(std::move(path)) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are ours to report, not printed by the library
  // An external link would make the library open another file from disk
  // when it is traversed: a FIFO named by a hostile file blocked the read
  // forever. Keras's files hold their objects themselves: the external link
  // class is unregistered (the process reads HDF5 only here), so no
  // traversal, even through a soft link, opens a file (exists() names a
  // direct external link).
  static const bool noExternalLinks = H5Lunregister(H5L_TYPE_EXTERNAL) >= 0 || H5Lis_registered(H5L_TYPE_EXTERNAL) == 0;
  if (!noExternalLinks) fail("the HDF5 library cannot turn off external links");
  // Opened from memory (the core driver over the file's image), read-only.
  Handle access{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
  if (access.id < 0 || H5Pset_fapl_core(access.id, 1 << 20, 0) < 0 ||
      H5Pset_file_image(access.id, bytes_.data(), bytes_.size()) < 0)
    fail("the HDF5 library cannot take the file's image");
  file_ = H5Fopen("image.h5", H5F_ACC_RDONLY, access.id);
  if (file_ < 0) fail("the HDF5 file cannot be read: a damaged or truncated file");
}

Hdf5Image::~Hdf5Image() {
  if (file_ >= 0) H5Fclose(file_);
}

void Hdf5Image::fail(const std::string& what) const { throw std::invalid_argument(path_ + ": " + what); }

bool Hdf5Image::exists(const std::string& object) const {
  if (object.empty() || object == "/") return true;
  // One link at a time, each looked up in the group before it: asking the
  // library for each prefix from the root cost d^2 lookups for a path of d
  // links (a legacy weight_names entry 2,000 groups deep took 47 s).
  Handle at{H5Oopen(file_, "/", H5P_DEFAULT), H5Oclose};
  for (std::size_t begin = 0;;) {
    const std::size_t slash = object.find('/', begin);
    const bool last = slash == std::string::npos;
    const std::string name = object.substr(begin, last ? std::string::npos : slash - begin);
    const std::string prefix = object.substr(0, last ? std::string::npos : slash);
    begin = slash + 1;
    if (name.empty() || name == ".") {  // "a//b", a trailing '/' and "." name the group itself, as for the library
      if (last) return true;
      continue;
    }
    if (at.id < 0 || H5Lexists(at.id, name.c_str(), H5P_DEFAULT) <= 0) return false;
    H5L_info_t link{};
    if (H5Lget_info(at.id, name.c_str(), &link, H5P_DEFAULT) >= 0 && link.type != H5L_TYPE_HARD &&
        link.type != H5L_TYPE_SOFT)
      fail("'" + prefix + "' is " + (link.type == H5L_TYPE_EXTERNAL ? "an external link (to another file)" : "a user-defined link") +
           ": expected the object in this file, as Keras writes it");
    if (last) return H5Oexists_by_name(at.id, name.c_str(), H5P_DEFAULT) > 0;
    Handle next{H5Oopen(at.id, name.c_str(), H5P_DEFAULT), H5Oclose};
    if (next.id < 0) return false;  // a dangling soft link
    std::swap(at.id, next.id);
  }
}

bool Hdf5Image::isGroup(const std::string& object) const {
  if (!exists(object)) return false;
  H5O_info_t info{};
  return H5Oget_info_by_name(file_, object.empty() ? "/" : object.c_str(), &info, H5P_DEFAULT) >= 0 &&
         info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> Hdf5Image::members(const std::string& group) const {
  Handle g{H5Gopen2(file_, group.empty() ? "/" : group.c_str(), H5P_DEFAULT), H5Gclose};
  if (g.id < 0) fail("its group '" + group + "' cannot be read");
  // One pass over the links: asking for the k-th name walks the group's
  // links up to k each time (40,000 extra groups under layers/ took 28 s).
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  if (H5Literate(g.id, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names) < 0)
    fail("its group '" + group + "' cannot be read");
  return names;
}

bool Hdf5Image::hasAttribute(const std::string& object, const std::string& name) const {
  return exists(object) && H5Aexists_by_name(file_, object.empty() ? "/" : object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::optional<std::vector<std::string>> Hdf5Image::stringListAttribute(const std::string& object,
                                                                       const std::string& name) const {
  if (!hasAttribute(object, name)) return std::nullopt;
  const std::string where = (object.empty() ? std::string("the file") : "'" + object + "'") + "'s attribute '" + name + "'";
  Handle attribute{H5Aopen_by_name(file_, object.empty() ? "/" : object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose};
  Handle type{attribute.id >= 0 ? H5Aget_type(attribute.id) : -1, H5Tclose};
  Handle space{attribute.id >= 0 ? H5Aget_space(attribute.id) : -1, H5Sclose};
  if (type.id < 0 || space.id < 0) fail(where + " cannot be read");
  const hssize_t count = H5Sget_simple_extent_npoints(space.id);
  if (count < 0) fail(where + " cannot be read");
  const H5T_class_t cls = H5Tget_class(type.id);
  // h5py stores an empty list as an empty float array.
  if (cls != H5T_STRING) {
    if (count == 0) return std::vector<std::string>{};
    fail(where + ": expected a string or a list of strings");
  }
  // An attribute is at most 64 KiB in HDF5's compact storage (Keras splits
  // longer lists into name0, name1, ...); more from a header is damage.
  const bool variable = H5Tis_variable_str(type.id) > 0;
  const std::size_t size = variable ? sizeof(char*) : H5Tget_size(type.id);
  if (size == 0 || std::uint64_t(count) * size > bytes_.size())
    fail(where + ": " + std::to_string(count) + " strings of " + std::to_string(size) + " bytes: more than the file holds");
  std::vector<std::string> strings;
  if (variable) {
    Handle memory{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(memory.id, H5T_VARIABLE);
    H5Tset_cset(memory.id, H5Tget_cset(type.id));  // ASCII or UTF-8 (h5py's str): the library converts neither into the other
    std::vector<char*> pointers(std::size_t(count), nullptr);
    if (H5Aread(attribute.id, memory.id, pointers.data()) < 0) fail(where + " cannot be read as text");
    for (char* p : pointers) {
      strings.emplace_back(p ? p : "");
      if (p) H5free_memory(p);
    }
  } else {
    std::string buffer(std::size_t(count) * size, '\0');
    Handle memory{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(memory.id, size);
    H5Tset_strpad(memory.id, H5T_STR_NULLPAD);
    H5Tset_cset(memory.id, H5Tget_cset(type.id));
    if (H5Aread(attribute.id, memory.id, buffer.data()) < 0) fail(where + " cannot be read as text");
    for (hssize_t i = 0; i < count; ++i) {
      std::string s = buffer.substr(std::size_t(i) * size, size);
      s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
      strings.push_back(std::move(s));
    }
  }
  return strings;
}

std::optional<std::string> Hdf5Image::stringAttribute(const std::string& object, const std::string& name) const {
  const auto list = stringListAttribute(object, name);
  if (!list) return std::nullopt;
  if (list->size() != 1)
    fail((object.empty() ? std::string("the file") : "'" + object + "'") + "'s attribute '" + name + "': " +
         std::to_string(list->size()) + " strings where one was expected");
  return list->front();
}

Hdf5Image::Array Hdf5Image::readArray(const std::string& dataset, const std::string& where) const {
  Handle data{H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), H5Dclose};
  Handle space{data.id >= 0 ? H5Dget_space(data.id) : -1, H5Sclose};
  const int rank = space.id >= 0 ? H5Sget_simple_extent_ndims(space.id) : -1;
  if (rank < 0 || rank > kMaxRank) fail(where + dataset + ": not a readable array");
  // Its values must be in this file. HDF5 lets a dataset keep them in raw
  // files of its own (external storage) or map them from datasets of other
  // files (a virtual dataset), which the library opens from disk when the
  // values are read: a FIFO named there blocked the read forever, /dev/zero
  // or any other file was read as weights. Keras writes neither.
  Handle create{H5Dget_create_plist(data.id), H5Pclose};
  if (create.id < 0) fail(where + dataset + ": not a readable array");
  if (H5Pget_layout(create.id) == H5D_VIRTUAL)
    fail(where + dataset + ": a virtual dataset (its values mapped from other files); expected its values stored in "
                           "this file, as Keras writes them");
  if (H5Pget_external_count(create.id) != 0)
    fail(where + dataset + ": its values are stored in external raw files; expected them stored in this file, as Keras "
                           "writes them");
  std::vector<hsize_t> dims(std::size_t(rank) + 1, 0);
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  Array a;
  long double elements = 1;
  for (int d = 0; d < rank; ++d) a.shape.push_back(dims[std::size_t(d)]), elements *= dims[std::size_t(d)];
  // A dataset holds at least a byte per element unless compressed (Keras
  // does not compress): more elements than the file's bytes is a damaged header.
  if (elements > (long double)bytes_.size())
    fail(where + dataset + ": shape " + shapeText(a.shape) + " claims more values than the file holds");
  a.values.resize(std::size_t(elements));
  if (H5Dread(data.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()) < 0)
    fail(where + dataset + ": its values cannot be read as numbers (damaged or truncated)");
  return a;
}

}  // namespace ipusim::scheduler
