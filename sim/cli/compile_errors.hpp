#pragma once
// The compiler's errors about a whole model — it cannot fit the tiles (the
// up-front estimate's or the memory plan's "out of memory"), its IPU count is
// not the target's — named by the workload (or Keras) file, as every other
// workload error is: "w.json: out of memory: ...". The compiler itself does
// not know the file (a Workload is parsed data).
#include <stdexcept>
#include <string>
#include <utility>

namespace ipusim::sim {

template <class Compile>
auto namingWorkloadFile(const std::string& file, Compile&& compile) {
  try {
    return std::forward<Compile>(compile)();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (file.empty() || what.rfind(file + ":", 0) == 0) throw;  // already named
    throw std::invalid_argument(file + ": " + what);
  }
}

}  // namespace ipusim::sim
