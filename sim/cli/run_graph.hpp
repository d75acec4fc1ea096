#pragma once
// `ipusim run --graph FILE`: runs a serialized executable (compile once, run
// many what-ifs) in this process.
#include "sim/cli/target_flags.hpp"

#include <string>

namespace ipusim::sim {

struct RunGraphArgs {
  std::string graphPath;
  std::string entry;            // empty: the first entry point
  std::uint64_t runs = 1;
  std::string engineOptions;    // --engine-options JSON
  bool synthetic = false;
  bool json = false;
  std::uint32_t threads = 0;
  TargetFlags target;
};

// Returns the process exit code; throws on bad input (message names the culprit).
int runGraph(const RunGraphArgs& args);

}  // namespace ipusim::sim
