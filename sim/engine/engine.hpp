#pragma once
// Engine: Poplar's Engine for the simulated system. Loads an executable onto
// the SystemC model, lets the host connect its streams, runs programs by
// index, and — as the engine options ask — records the execution and writes
// the autoReport outputs (profile.pop, serialized_graph.json).
//
// Lifecycle: construct during elaboration (before sc_start); run() from the
// host runtime's SC_THREAD; finish() after the simulation to commit the
// profile. Destroyed without finish(), it leaves no profile behind.
#include "model/ipu_system.hpp"
#include "sim/engine/instance_share.hpp"
#include "sim/engine/replica_peers.hpp"
#include "sim/options/engine_options.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ipusim::sim {

struct EngineConfig {
  bool functional = true;     // false: --synthetic-data (timing only)
  std::uint32_t workerThreads = 0;  // host threads for the functional work (0: automatic); results do not depend on it
  bool fuseMatMuls = true;    // matrix products computed whole (model::LoadOptions); results do not depend on it
  std::string workloadName;   // recorded in the profile's meta
  nlohmann::json extraMeta;   // more meta keys (object of strings/numbers)
  // Files the command reads (the workload, its Keras model, the dataset, a
  // serialized graph): the reports are never written onto one of them.
  std::vector<std::string> inputs;
  // Several instances (processes) share the replicas (instance_share.hpp):
  // this one computes its share, gathers the rest through `peers`, and names
  // its reports by its index: profile.rankK.pop, serialized_graph.rankK.json
  // (as Poplar writes a profile per process). Null: every replica here.
  ReplicaPeers* peers = nullptr;
};

class Engine {
 public:
  // Keeps `exe` (moved in, or a copy): a replicated graph can be large.
  Engine(ir::Executable exe, const model::Target& target, const EngineOptions& options,
         const EngineConfig& config = {});
  ~Engine();

  model::IpuSystem& system();
  model::HostStream& stream(const std::string& name);
  std::uint32_t entryIndex(const std::string& name) const;  // throws naming the entry and the valid ones

  // Runs entry point `entry`; SC_THREAD context only.
  void run(std::uint32_t entry);
  std::uint64_t runCount() const;

  // Host-side activity and counters (the loss, stamped with the device
  // step that produced it), recorded with the execution.
  void hostEvent(const model::HostEvent& event);
  void counter(const model::CounterSample& sample);
  // An outfeed copy as the host reads it: with several instances, the
  // replicas the others compute filled in (InstanceShare::completeOutfeed).
  void completeOutfeed(model::Bytes& bytes);
  // This instance's share, or null when every replica runs here.
  const InstanceShare* share() const;
  InstanceShare* share();

  // Completes the autoReport outputs: writes the graph profile, meta
  // job_end_cycle (now: call it when the job is over) and commits
  // profile.pop. Returns its path ("" when no profile is written).
  std::string finish();
  // The path profile.pop will have (or "" when none is asked for).
  std::string profilePath() const;
  const EngineOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ipusim::sim
