#include "sim/engine/entry_runs.hpp"

namespace ipusim::sim {

EntryRuns::EntryRuns(sc_core::sc_module_name name, Engine& engine, std::string entry, std::uint64_t runs)
    : sc_module(name), engine_(engine), entry_(std::move(entry)), runs_(runs) {
  SC_THREAD(main);
}

void EntryRuns::rethrowFailure() const {
  if (failure_) std::rethrow_exception(failure_);
}

void EntryRuns::main() {
  try {
    const std::uint32_t entry = engine_.entryIndex(entry_);
    for (std::uint64_t r = 0; r < runs_; ++r) engine_.run(entry);
  } catch (...) {
    failure_ = std::current_exception();
  }
  sc_core::sc_stop();
}

}  // namespace ipusim::sim
