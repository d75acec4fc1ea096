#include "profiler/analysis/profile_target.hpp"

#include "model/target_limits.hpp"

#include <cerrno>
#include <cmath>
#include <string>
#include <cstdlib>

namespace ipusim::profiler::analysis {
namespace {

[[noreturn]] void malformed(const std::string& path, const std::string& key,
                            const std::string& value, const std::string& expected) {
  throw traces::ProfileError(path + ": meta '" + key + "' is '" + value + "', expected " +
                             expected);
}

// `max` bounds what an analysis may allocate or loop over from this value.
std::int64_t parseCount(const traces::ProfileReader& reader, const std::string& key, long long max) {
  const std::string text = reader.metaValue(key);
  if (text.empty()) return 0;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value < 0 || value > max || errno == ERANGE)
    malformed(reader.path(), key, text, "an integer in [0, " + std::to_string(max) + "]");
  return value;
}

double parsePositive(const traces::ProfileReader& reader, const std::string& key) {
  const std::string text = reader.metaValue(key);
  if (text.empty()) return 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value <= 0)
    malformed(reader.path(), key, text, "a positive number");
  return value;
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
  // Far above any system ipusim simulates (model/target_limits.hpp), yet bounded.
  target.numIpus = parseCount(reader, "num_ipus", 65536);
  target.tilesPerIpu = parseCount(reader, "tiles_per_ipu", 1ll << 24);
  target.clockHz = parsePositive(reader, "clock_hz");
  if (target.clockHz > 0 && !(target.clockHz >= model::kMinClockHz && target.clockHz <= model::kMaxClockHz))
    malformed(reader.path(), "clock_hz", reader.metaValue("clock_hz"),
              "a clock rate from 1e6 Hz (1 MHz) to 1e12 Hz (1 THz) (model/target_limits.hpp)");
  target.tileMemoryBytes = parseCount(reader, "tile_memory_bytes", 1ll << 40);
  target.replicas = parseCount(reader, "replicas", 65536);
  target.batchSize = parseCount(reader, "batch_size", 1ll << 32);
  return target;
}

}  // namespace ipusim::profiler::analysis
