#pragma once
// EntryRuns: a SystemC thread that calls Engine::run(entry) `runs` times,
// then stops the simulation; the simplest host (no dataset process, no
// feeds' timing): for tests and tools that drive a compiled workload's
// "train" entry with their own stream callbacks. A failure in a run is kept
// for the caller to rethrow after sc_start() returns.
#include "sim/engine/engine.hpp"

#include <systemc>

#include <exception>
#include <string>

namespace ipusim::sim {

class EntryRuns : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EntryRuns);
  EntryRuns(sc_core::sc_module_name name, Engine& engine, std::string entry, std::uint64_t runs);
  // Rethrows what a run threw, if anything.
  void rethrowFailure() const;

 private:
  void main();
  Engine& engine_;
  std::string entry_;
  std::uint64_t runs_;
  std::exception_ptr failure_;
};

}  // namespace ipusim::sim
