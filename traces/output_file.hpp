#pragma once
// OutputFile: how every command writes a file the user named (an exported
// trace, a screenshot): never destroying data.
//   - The path must not be one of the command's inputs (same file, through
//     any link or spelling), nor a directory, device, FIFO or socket.
//   - An existing regular file is replaced only when the user asked (force),
//     and never when it is read-only.
//   - The bytes go to "<path>.tmp-<pid>" in the same directory, created anew
//     (never written through a link of that name) and registered for
//     removal on interrupt; commit() checks that every write succeeded and
//     renames it onto the path. Destroyed without commit(), nothing is left.
// Every refusal throws OutputFileError naming the path and the reason.
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::traces {

class OutputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputPolicy {
  bool force = false;               // replace an existing regular file
  std::vector<std::string> inputs;  // files (or directories) the command reads
};

// The checks alone (OutputFile's constructor runs them).
void checkOutputPath(const std::string& path, const OutputPolicy& policy);

class OutputFile {
 public:
  OutputFile(std::string path, const OutputPolicy& policy);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  // Where a library that writes by file name (stb's PNG writer) should write.
  const std::string& temporaryPath() const { return temporary_; }
  // Flushes, closes, checks every write succeeded, renames onto the path.
  void commit();

 private:
  std::string path_, temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace ipusim::traces
