#include "model/target_limits.hpp"

#include "model/target.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace ipusim::model {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void overLimit(const std::string& name, const std::string& value, const std::string& limit) {
  throw std::invalid_argument("target parameter '" + name + "' = " + value + " is over the limit: " + limit);
}

// A rate in bytes per second must move one byte in at most kMaxDurationCycles.
void checkRate(const char* name, double bytesPerSecond, double clockHz) {
  const double bytesPerCycle = bytesPerSecond / clockHz;
  if (bytesPerSecond > 0 && !(bytesPerCycle * double(kMaxDurationCycles) >= 1.0))
    throw std::invalid_argument("target parameter '" + std::string(name) + "' = " + number(bytesPerSecond) +
                                " B/s is too slow: one byte would take more than 2^53 cycles (the longest "
                                "duration the simulator counts); expected at least " +
                                number(clockHz / double(kMaxDurationCycles)) + " B/s");
}

// PODs joined by GW-Links: equal PODs of whole IPU-Machines; a loop of 3 or
// more PODs gives each gateway a link to each side.
void checkPods(const Target& t) {
  const std::uint32_t perPod = t.gwLink.ipusPerPod, ipus = t.ipuLink.numIpus;
  if (perPod == 0 || perPod >= ipus) return;
  const std::string pod = "target parameter 'gwLink.ipusPerPod' = " + std::to_string(perPod);
  if (ipus % perPod)
    throw std::invalid_argument(pod + ": ipuLink.numIpus = " + std::to_string(ipus) +
                                " is not a multiple of it (expected PODs of equal size: a divisor of ipuLink.numIpus, "
                                "or 0 for one POD)");
  if (perPod % t.gwLink.ipusPerGateway)
    throw std::invalid_argument(pod + " is not a multiple of gwLink.ipusPerGateway = " +
                                std::to_string(t.gwLink.ipusPerGateway) + " (expected whole IPU-Machines per POD)");
  if (ipus / perPod > 2 && t.gwLink.linksPerGateway < 2)
    throw std::invalid_argument("target parameter 'gwLink.linksPerGateway' = " +
                                std::to_string(t.gwLink.linksPerGateway) + ": a loop of " +
                                std::to_string(ipus / perPod) +
                                " PODs needs 2 or more (a gateway's links go half to each side)");
}

}  // namespace

std::uint64_t durationToCycles(double seconds, double clockHz, const std::string& what) {
  if (!std::isfinite(seconds) || seconds < 0)
    throw std::invalid_argument(what + ": expected a finite duration >= 0 seconds, got " + number(seconds));
  const double cycles = seconds * clockHz;
  if (!(cycles <= double(kMaxDurationCycles)))
    // (1e300 s is no number of cycles a double holds: "inf cycles" said nothing.)
    throw std::invalid_argument(what + " = " + number(seconds) + " s is " +
                                (std::isfinite(cycles) ? number(cycles) : "more than 1.8e+308") + " cycles at " +
                                number(clockHz) + " Hz, over the limit of 2^53 cycles (" +
                                number(double(kMaxDurationCycles) / clockHz) + " s)");
  // A product like 1e-6 s x 1.33e9 Hz lands a hair above 1330; rounding that
  // noise up would add a phantom cycle, so near-integers count as integers.
  const double nearest = std::round(cycles);
  if (std::fabs(cycles - nearest) <= 1e-12 * std::max(1.0, nearest)) return static_cast<std::uint64_t>(nearest);
  return static_cast<std::uint64_t>(std::ceil(cycles));
}

void checkTargetLimits(const Target& t) {
  if (!(t.clockHz >= kMinClockHz && t.clockHz <= kMaxClockHz))
    throw std::invalid_argument("target parameter 'clockHz' = " + number(t.clockHz) + " Hz is out of range: from " +
                                number(kMinClockHz) + " Hz (1 MHz) to " + number(kMaxClockHz) + " Hz (1 THz)");
  if (t.ipuLink.numIpus > kMaxIpus)
    overLimit("ipuLink.numIpus", std::to_string(t.ipuLink.numIpus),
              "at most " + std::to_string(kMaxIpus) + " IPUs (an IPU-POD256)");
  if (t.tile.tilesPerIpu > kMaxTilesPerIpu)
    overLimit("tile.tilesPerIpu", std::to_string(t.tile.tilesPerIpu),
              "at most " + std::to_string(kMaxTilesPerIpu) + " tiles per IPU");
  const std::uint64_t totalTiles = std::uint64_t(t.tile.tilesPerIpu) * t.ipuLink.numIpus;
  if (totalTiles > kMaxTotalTiles)
    overLimit("tile.tilesPerIpu", std::to_string(t.tile.tilesPerIpu),
              "tile.tilesPerIpu x ipuLink.numIpus = " + std::to_string(totalTiles) + " tiles; at most " +
                  std::to_string(kMaxTotalTiles) + " (an IPU-POD256 of Mk2 IPUs)");
  if (t.tile.workerContexts > kMaxWorkerContexts)
    overLimit("tile.workerContexts", std::to_string(t.tile.workerContexts),
              "at most " + std::to_string(kMaxWorkerContexts) + " contexts per tile");
  if (t.tile.memoryBytes > kMaxTileMemoryBytes)
    overLimit("tile.memoryBytes", std::to_string(t.tile.memoryBytes),
              "at most " + std::to_string(kMaxTileMemoryBytes) + " bytes per tile");
  durationToCycles(t.hostLink.latencySeconds, t.clockHz, "target parameter 'hostLink.latencySeconds'");
  checkRate("hostLink.bytesPerSecond", t.hostLink.bytesPerSecond, t.clockHz);
  durationToCycles(t.streamingMemory.latencySeconds, t.clockHz, "target parameter 'streamingMemory.latencySeconds'");
  checkRate("streamingMemory.bytesPerSecond", t.streamingMemory.bytesPerSecond, t.clockHz);
  checkRate("ipuLink.linkBytesPerSecond", t.ipuLink.linkBytesPerSecond, t.clockHz);
  if (t.ipuLink.railsWrap > 1) overLimit("ipuLink.railsWrap", std::to_string(t.ipuLink.railsWrap), "0 (a ladder) or 1 (rails wrap)");
  checkRate("gwLink.linkBytesPerSecond", t.gwLink.linkBytesPerSecond, t.clockHz);
  checkRate("gwLink.ipuBytesPerSecond", t.gwLink.ipuBytesPerSecond, t.clockHz);
  checkPods(t);
}

}  // namespace ipusim::model
