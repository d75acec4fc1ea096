#pragma once
// GraphRunner: the host program for `ipusim run --graph`: runs one entry
// point of a serialized executable a number of times, feeding every
// host-to-device stream with deterministic data (inputValue) and keeping
// everything the device streams back, so results can be checked.
#include "sim/engine/engine.hpp"

#include <exception>
#include <map>
#include <systemc>
#include <vector>

namespace ipusim::sim {

// The value the runner feeds as element `element` of copy `copy` of stream
// `stream`, in [-1, 1]; integer streams get floor((value + 1) * 4.999), in [0, 9].
double inputValue(ir::Id stream, std::uint64_t copy, std::uint64_t element);

class GraphRunner : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(GraphRunner);
  GraphRunner(sc_core::sc_module_name name, Engine& engine, std::uint32_t entry, std::uint64_t runs);

  // Device-to-host copies received, per stream name, in arrival order (as doubles).
  const std::map<std::string, std::vector<std::vector<double>>>& outputs() const { return outputs_; }
  std::uint64_t runsDone() const { return runsDone_; }
  ir::Cycles endCycle() const { return endCycle_; }
  // An error raised inside the simulation is carried out of sc_start() and rethrown here.
  void rethrowFailure() const;

 private:
  void main();

  Engine& engine_;
  std::uint32_t entry_;
  std::uint64_t runs_;
  std::uint64_t runsDone_ = 0;
  ir::Cycles endCycle_ = 0;
  std::exception_ptr failure_;
  std::map<std::string, std::vector<std::vector<double>>> outputs_;
};

}  // namespace ipusim::sim
