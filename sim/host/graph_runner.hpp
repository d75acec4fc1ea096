#pragma once
// GraphRunner: the host program for `ipusim run --graph`: runs one entry
// point of a serialized executable a number of times, feeding every
// host-to-device stream with deterministic data (inputValue) and keeping
// what the device streams back, so results can be checked. Host memory stays
// bounded however many runs or Repeat iterations there are: per stream only
// the first copies are kept, up to kKeptBytesPerStream; the rest are counted.
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
  // Host bytes kept per stream: each copy's doubles plus its vector's own
  // footprint (a one-element copy costs 40 bytes, not 8).
  static constexpr std::uint64_t kKeptBytesPerStream = 1ull << 20;
  SC_HAS_PROCESS(GraphRunner);
  GraphRunner(sc_core::sc_module_name name, Engine& engine, std::uint32_t entry, std::uint64_t runs);

  // Device-to-host copies kept, per stream name, in arrival order (as
  // doubles): the first ones, up to kKeptBytesPerStream per stream.
  const std::map<std::string, std::vector<std::vector<double>>>& outputs() const { return outputs_; }
  // Every device-to-host copy received on `stream`, kept or not.
  std::uint64_t copiesReceived(const std::string& stream) const;
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
  std::map<std::string, std::uint64_t> received_;
};

}  // namespace ipusim::sim
