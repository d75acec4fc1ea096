#pragma once
// ProfileTarget: the target facts an analysis needs, read from a profile's
// meta table (arch, num_ipus, tiles_per_ipu, clock_hz, tile_memory_bytes,
// workload). Absent keys stay at their "unknown" value (empty / 0); a value
// that is present but malformed is a ProfileError naming the file, the key,
// the value and what was expected.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <string>

namespace ipusim::profiler::analysis {

struct ProfileTarget {
  std::string path;            // the profile file, for messages
  std::string arch;
  std::string workload;
  // The task of a workload's run (meta task: fit, evaluate or predict); empty
  // for a graph run or a profile written before tasks.
  std::string task;
  std::int64_t numIpus = 0;
  // The IPUs whose rows (tracks, tile cycles, tile memory) the profile holds:
  // every IPU, or an instance's (meta instance_first_ipu, instance_ipus: one
  // rank's profile of a run over several processes).
  std::int64_t firstIpu = 0;
  std::int64_t ipusHeld = 0;
  std::int64_t tilesPerIpu = 0;
  double clockHz = 0;          // 0 = unknown
  std::int64_t tileMemoryBytes = 0;  // capacity per tile, 0 = unknown
  // Training runs (`ipusim run` meta): 0 = unknown (a graph run).
  std::int64_t replicas = 0;         // meta replicas
  std::int64_t batchSize = 0;        // meta batch_size, per replica
  // Examples one step trains (batch_size x replicas); 0 = unknown.
  std::int64_t tilesHeld() const { return ipusHeld * tilesPerIpu; }
  std::int64_t examplesPerStep() const { return batchSize * (replicas > 0 ? replicas : 1); }

  // Throws traces::ProfileError when clock_hz is absent (times in seconds
  // need it).
  double requireClockHz() const;
  double cyclesToSeconds(std::int64_t cycles) const { return double(cycles) / requireClockHz(); }
};

ProfileTarget readProfileTarget(const traces::ProfileReader& reader);

}  // namespace ipusim::profiler::analysis
