#pragma once
// IpuSystem: the SystemC model of one or more IPUs, their exchange fabric,
// sync controller, IPU-Links and host link, running a loaded executable.
//
// Contract:
// - Construct during elaboration (before sc_start), then load() once.
// - run(entry) must be called from an SC_THREAD (the host runtime's thread):
//   it executes the entry program in simulated time and returns when it is
//   done. One run at a time.
// - Functional mode computes every vertex and moves every byte; synthetic
//   mode (functional=false) skips numerics and data but keeps identical timing.
// - Statically timed: a compute set's or exchange's per-tile cycles are
//   computed once at load() and reused; the kernel never ticks idle cycles.
// - Observers are called only as much as their detailFor(run) asks.
#include "model/host_stream.hpp"
#include "model/ir/executable.hpp"
#include "model/ir/tile_memory_usage.hpp"
#include "model/observer.hpp"
#include "model/target.hpp"
#include "model/tile_range.hpp"

#include <functional>
#include <memory>
#include <systemc>
#include <vector>

namespace ipusim::model {

struct LoadOptions {
  bool functional = true;
  // Host threads for the functional work of large phases (1 = sequential);
  // 0 = IPUSIM_WORKER_THREADS if set, else 2 (or 1 on a one-core host).
  // Results do not depend on it.
  std::uint32_t workerThreads = 0;
  // Compute the compiler's matrix products whole, not tile by tile: the same
  // results bit for bit, without writing the lowering's temporaries to tile
  // memory (model/hardware/fused_matmul.hpp). Functional mode only.
  bool fuseMatMuls = true;
  // The tiles whose functional work this process does (functional mode): a
  // replicated run shared by several processes computes a share of the
  // replicas in each (sim/engine/instance_share.hpp). Outside it, compute sets and matrix
  // products are timed as always but not computed (those tiles' memory then
  // holds values nothing of this process reads); Copies move every byte; a
  // collective's programs (ir::Program::collective) compute on every tile,
  // over the bytes beforeCollective brought in. Default: every tile.
  TileRange functionalTiles{};
  // Functional mode: called on the simulation thread right before a
  // collective (a Sequence marked ir::Program::collective) runs, with its
  // program id; it may read and write tensors (readRegion, writeRegion) to
  // bring in the replicas' values this process does not compute. It may
  // throw (the run then fails, or stops on StopRequested, as any step).
  std::function<void(ir::Id program)> beforeCollective{};
};

class IpuSystem : public sc_core::sc_module {
 public:
  IpuSystem(sc_core::sc_module_name name, const Target& target);
  ~IpuSystem() override;

  // Validates the executable against the target, places tensors in tile
  // memory, writes initial values, resolves vertices and precomputes static
  // timings. Throws std::invalid_argument naming the offending element.
  // Keeps `exe` (moved in, or a copy); executable() returns it.
  void load(ir::Executable exe, const LoadOptions& options = {});

  void addObserver(ExecutionObserver* observer);

  // Runs entry point `entry` (index into exe.entryPoints). SC_THREAD context only.
  void run(std::uint32_t entry);

  HostStream& stream(ir::Id id);
  HostStream& stream(const std::string& name);  // throws std::invalid_argument naming it

  // Functional access to tensor data (host-side reads/writes, outside the timing model).
  std::vector<std::uint8_t> readTensor(ir::Id tensor) const;
  void writeTensor(ir::Id tensor, const void* data, std::size_t bytes);
  // Elements [region.begin, region.end) of a tensor, into or from `data`
  // (region.size() elements of its type). Nothing is moved in synthetic mode.
  void readRegion(const ir::TensorRef& region, void* data) const;
  void writeRegion(const ir::TensorRef& region, const void* data);

  const Target& target() const;
  const ir::Executable& executable() const;
  std::uint64_t runsCompleted() const;
  // The tile memory figure of the loaded executable (ir::tileMemoryUsage over
  // the placed addresses: the planner's, plus what load() placed).
  std::vector<ir::TileMemoryUsage> tileMemoryUsage(std::size_t largestPerTile = 5) const;

  // How the host ran the functional work: its threads, the phases large
  // enough to share, and how many of those ran on all of them (the worker
  // pool's adaptive choice, model/hardware/worker_pool.hpp).
  struct HostThreads {
    unsigned threads = 1;
    std::uint64_t largePhases = 0, pooledPhases = 0;
  };
  HostThreads hostThreads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ipusim::model
