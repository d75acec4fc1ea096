#pragma once
// PredictionsFile: predict's outputs written where the user asked
// (`ipusim predict --predictions FILE`), a row per example in the dataset's
// order (evaluate and predict do not shuffle), a column per output value,
// as Keras's model.predict returns them:
//   - FILE.npy: a NumPy array, float32 little-endian, shape (rows, width)
//     (format 1.0: numpy.lib.format), read by numpy.load;
//   - FILE.csv: one line per row, the values comma-separated, each printed
//     with 9 significant digits (a float32 read back exactly).
// Written through traces::OutputFile: never over an input, an existing file
// only with --force, complete (commit()) or absent.
#include "traces/output_file.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace ipusim::sim {

class PredictionsFile {
 public:
  // `rows` the run will write in all, of `width` values each. Throws
  // std::invalid_argument for an extension other than .npy and .csv, and
  // traces::OutputFileError for a path OutputFile refuses.
  PredictionsFile(const std::string& path, std::uint64_t rows, std::uint64_t width, const traces::OutputPolicy& policy);
  // The extension's check alone, for a run to make before its compile
  // (std::invalid_argument for an extension other than .npy and .csv).
  static void checkName(const std::string& path);
  // The next `count` rows (count x width floats).
  void append(const float* values, std::uint64_t count);
  // Every row announced written: renames the file into place (std::logic_error otherwise).
  void commit();
  std::uint64_t rowsWritten() const { return written_; }

 private:
  bool csv_;
  std::uint64_t rows_, width_, written_ = 0;
  std::unique_ptr<traces::OutputFile> file_;
};

}  // namespace ipusim::sim
