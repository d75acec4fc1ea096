#include "scheduler/models/keras_archive.hpp"

#include "model/util/input_file.hpp"
#include "scheduler/models/keras_h5_model.hpp"
#include "scheduler/models/keras_weights.hpp"

#include <zip.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::scheduler {
namespace {

// Keras 3's saving_lib writes these three; only the first is read.
constexpr const char* kConfigEntry = "config.json";

[[noreturn]] void archiveFail(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

std::string zipErrorText(zip_error_t* error) { return zip_error_strerror(error); }

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // read-only: nothing to write back
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

// Entry `entry` of the archive `source` (taken over, freed on every path),
// at most `maxBytes` (`limitWhat` says what may be that large).
std::string entryOf(zip_source_t* source, const std::string& path, const std::string& entry, std::uint64_t maxBytes,
                    const std::string& limitWhat) {
  zip_error_t error;
  zip_error_init(&error);
  std::unique_ptr<zip_t, ZipCloser> archive(zip_open_from_source(source, ZIP_RDONLY, &error));
  if (!archive) {
    zip_source_free(source);
    const std::string why = zipErrorText(&error);
    zip_error_fini(&error);
    archiveFail(path, "starts as a zip archive (a .keras file) but libzip cannot read it: " + why);
  }
  zip_error_fini(&error);
  const zip_int64_t index = zip_name_locate(archive.get(), entry.c_str(), 0);
  if (index < 0)
    archiveFail(path, "a zip archive without " + entry + ": not a .keras file (Keras 3's model.save() writes "
                      "config.json, metadata.json and model.weights.h5)");
  // Two entries of that name: Keras reads the archive with Python's zipfile,
  // which takes the last, libzip's lookup the first; a model Keras would
  // not read was simulated without a word.
  zip_int64_t named = 0;
  for (zip_int64_t i = 0, entries = zip_get_num_entries(archive.get(), 0); i < entries; ++i) {
    const char* name = zip_get_name(archive.get(), zip_uint64_t(i), 0);
    named += name && name == entry ? 1 : 0;  // config.json, or model.weights.h5 (read the first, Keras the last)
  }
  if (named > 1)
    archiveFail(path, entry + ": " + std::to_string(named) + " entries of that name (expected one; Keras's zipfile "
                      "would read the last)");
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive.get(), zip_uint64_t(index), 0, &stat) != 0)
    archiveFail(path, entry + ": cannot read its entry: " + zip_strerror(archive.get()));
  const std::string limit = std::to_string(maxBytes);
  if ((stat.valid & ZIP_STAT_SIZE) && stat.size > maxBytes)
    archiveFail(path, entry + ": " + std::to_string(stat.size) + " bytes; " + limitWhat + " may have at most " + limit);
  std::unique_ptr<zip_file_t, ZipFileCloser> file(zip_fopen_index(archive.get(), zip_uint64_t(index), 0));
  if (!file) archiveFail(path, entry + ": cannot open it: " + zip_strerror(archive.get()));
  // Read whatever the header claims, up to one byte over the limit: an entry
  // that inflates beyond it (a zip bomb, a header that lies) stops there.
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const zip_int64_t n = zip_fread(file.get(), buffer, sizeof buffer);
    if (n < 0) archiveFail(path, entry + ": cannot read it (damaged archive): " + zip_file_strerror(file.get()));
    if (n == 0) break;
    text.append(buffer, std::size_t(n));
    if (text.size() > maxBytes)
      archiveFail(path, entry + ": inflates to more than " + limit + " bytes, the most " + limitWhat + " may have");
  }
  return text;
}

std::string configOf(zip_source_t* source, const std::string& path, std::uint64_t maxBytes) {
  return entryOf(source, path, kConfigEntry, maxBytes, "a Keras model's JSON");
}

zip_source_t* fileSource(const std::string& path) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_file_create(path.c_str(), 0, -1, &error);
  if (!source) {
    const std::string why = zipErrorText(&error);
    zip_error_fini(&error);
    archiveFail(path, "cannot open the .keras archive: " + why);
  }
  zip_error_fini(&error);
  return source;
}

// The first bytes of the regular file at `path` (a FIFO or a directory is refused by name).
std::string headOf(const std::string& path) {
  const int fd = util::openRegularInputFile(path, "Keras model file", std::numeric_limits<std::uint64_t>::max());
  char head[8];
  ssize_t n;
  do n = ::read(fd, head, sizeof head);
  while (n < 0 && errno == EINTR);
  const int readErrno = errno;
  ::close(fd);
  if (n < 0) archiveFail(path, std::string("cannot read Keras model file: ") + std::strerror(readErrno));
  return std::string(head, std::size_t(n));
}

}  // namespace

bool looksLikeHdf5(const std::string& bytes) { return bytes.compare(0, 8, "\x89HDF\r\n\x1a\n") == 0; }

bool looksLikeZip(const std::string& bytes) {
  return bytes.compare(0, 4, "PK\x03\x04") == 0 || bytes.compare(0, 4, "PK\x05\x06") == 0;
}

std::string kerasArchiveConfig(const std::string& bytes, const std::string& path, std::uint64_t maxJsonBytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) {
    const std::string why = zipErrorText(&error);
    zip_error_fini(&error);
    archiveFail(path, "cannot read the archive: " + why);
  }
  zip_error_fini(&error);
  return configOf(source, path, maxJsonBytes);
}

std::string readKerasModelText(const std::string& path, std::uint64_t maxJsonBytes) {
  const std::string head = headOf(path);
  // A legacy whole-model file (model.save("m.h5")): its model_config attribute.
  // (Read whole, as its weights are: the file is at most kMaxWeightsFileBytes.)
  if (looksLikeHdf5(head))
    return kerasH5ModelText(util::readInputFile(path, "Keras model file", kMaxWeightsFileBytes), path, maxJsonBytes);
  if (!looksLikeZip(head)) return util::readInputFile(path, "Keras model file", maxJsonBytes);
  // The archive itself may be large (its weights); only config.json is read.
  return configOf(fileSource(path), path, maxJsonBytes);
}

std::string kerasArchiveWeights(const std::string& path, std::uint64_t maxBytes) {
  ::close(util::openRegularInputFile(path, "Keras weights file", std::numeric_limits<std::uint64_t>::max()));  // a FIFO or a directory refused by name
  return entryOf(fileSource(path), path, "model.weights.h5", maxBytes, "a model's weights file");
}

}  // namespace ipusim::scheduler
