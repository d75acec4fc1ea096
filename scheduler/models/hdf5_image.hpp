#pragma once
// An HDF5 file held in memory (libhdf5's core driver over the file's bytes),
// read-only: the few reads Keras's files need — whether a path exists, a
// group's members, a string or a list of strings stored as an attribute
// (fixed- or variable-length, as h5py writes them), and a numeric dataset as
// doubles with its shape. Every error is std::invalid_argument naming the
// file (`path`) and the object. Internal to scheduler/.
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class Hdf5Image {
 public:
  // `bytes` (the whole file) is kept for the image's lifetime; `path` names it in errors.
  Hdf5Image(std::string bytes, std::string path);
  ~Hdf5Image();
  Hdf5Image(const Hdf5Image&) = delete;
  Hdf5Image& operator=(const Hdf5Image&) = delete;

  // Whether every link of `object` ("a/b/c") exists.
  bool exists(const std::string& object) const;
  bool isGroup(const std::string& object) const;
  // The names of a group's members, in name order.
  std::vector<std::string> members(const std::string& group) const;
  bool hasAttribute(const std::string& object, const std::string& name) const;
  // A string attribute (h5py's str or bytes); nullopt when absent.
  std::optional<std::string> stringAttribute(const std::string& object, const std::string& name) const;
  // A list of strings stored as an attribute (an empty list, which h5py
  // stores as an empty float array, included); nullopt when absent.
  std::optional<std::vector<std::string>> stringListAttribute(const std::string& object, const std::string& name) const;

  struct Array {
    std::vector<std::uint64_t> shape;
    std::vector<double> values;  // row-major
  };
  // A numeric dataset; `where` prefixes its errors ("layer 'dense' (Dense): ").
  Array readArray(const std::string& dataset, const std::string& where) const;

  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string bytes_;
  std::string path_;
  hid_t file_ = -1;
};

}  // namespace ipusim::scheduler
