#include "profiler/analysis/profile_target.hpp"

#include "traces/profile_rules.hpp"

#include <string>

namespace ipusim::profiler::analysis {
namespace {

// A meta key's value checked against profile_rules.json (the Python reader
// applies the same rule); absent: 0, unknown. The bounds also bound what an
// analysis may allocate or loop over from the value.
double metaNumber(const traces::ProfileReader& reader, const std::string& key) {
  const std::string text = reader.metaValue(key);
  if (text.empty()) return 0;
  return traces::checkMetaValue(reader.path(), traces::metaRule(key), text);
}

std::int64_t metaCount(const traces::ProfileReader& reader, const std::string& key) {
  return static_cast<std::int64_t>(metaNumber(reader, key));
}

}  // namespace

double ProfileTarget::requireClockHz() const {
  if (clockHz <= 0)
    throw traces::ProfileError(path + ": meta 'clock_hz' is missing; it is needed to convert cycles to time");
  return clockHz;
}

ProfileTarget readProfileTarget(const traces::ProfileReader& reader) {
  ProfileTarget target;
  target.path = reader.path();
  target.arch = reader.metaValue("arch");
  target.workload = reader.metaValue("workload");
  target.task = reader.metaValue("task");
  target.numIpus = metaCount(reader, "num_ipus");
  target.ipusHeld = target.numIpus;
  if (!reader.metaValue("instance_ipus").empty()) {
    target.firstIpu = metaCount(reader, "instance_first_ipu");
    target.ipusHeld = metaCount(reader, "instance_ipus");
    if (target.firstIpu + target.ipusHeld > target.numIpus)
      throw traces::ProfileError(reader.path() + ": meta instance_first_ipu " + std::to_string(target.firstIpu) +
                                 " and instance_ipus " + std::to_string(target.ipusHeld) +
                                 ": expected IPUs within num_ipus (" + std::to_string(target.numIpus) + ")");
  }
  target.tilesPerIpu = metaCount(reader, "tiles_per_ipu");
  target.clockHz = metaNumber(reader, "clock_hz");
  target.tileMemoryBytes = metaCount(reader, "tile_memory_bytes");
  target.replicas = metaCount(reader, "replicas");
  target.batchSize = metaCount(reader, "batch_size");
  return target;
}

}  // namespace ipusim::profiler::analysis
