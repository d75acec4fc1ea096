#pragma once
// LivenessSummary: PopVision's Liveness report — per program step of an entry
// point, the bytes always live and the bytes of not-always-live tensors live
// at that step, the peak step and what is live there.
//
// Definitions (the memory planner's rule, applied to the executable the
// engine ran, see profiler/recorder/program_liveness.hpp):
// - always-live bytes: the sum over the tensors with always_live = 1 (live
//   the whole time, used in this entry point or not);
// - not-always-live bytes at position p: the sum over tensors with
//   always_live = 0 whose first use <= p <= last use in program_order;
// - bytes are over all tiles of all IPUs (tensors.bytes);
// - the peak is the first position with the largest total.
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct LivenessStep {
  std::int64_t position = 0;
  std::int64_t programId = 0;
  std::string kind, name, layer, op;
  std::int64_t notAlwaysLiveBytes = 0;
  std::int64_t liveTensors = 0;  // not-always-live tensors live here
};

struct LiveTensor {
  std::int64_t id = 0;
  std::string name, category;
  std::int64_t bytes = 0;
  std::int64_t firstPosition = 0, lastPosition = 0;
};

struct LivenessSummary {
  std::string profile;
  bool available = false;               // false: the profile has no program_order table
  std::int64_t entryPoint = 0;
  std::string entryName;
  std::int64_t alwaysLiveBytes = 0;
  std::vector<LivenessStep> steps;      // by position
  std::int64_t peakPosition = -1;       // -1 when there are no steps
  std::vector<LiveTensor> liveAtPeak;   // not-always-live tensors at the peak, largest first
  std::vector<std::pair<std::string, std::int64_t>> alwaysLiveByCategory;  // largest first

  std::int64_t peakBytes() const {
    return peakPosition < 0 ? alwaysLiveBytes : alwaysLiveBytes + steps[peakPosition].notAlwaysLiveBytes;
  }
};

// `entryPoint` < 0: the entry point with the most Engine::run calls (the
// training loop), else entry point 0. Throws std::invalid_argument when an
// entry point is named that the profile does not have.
LivenessSummary summarizeLiveness(const traces::ProfileReader& reader, std::int64_t entryPoint = -1);

nlohmann::json livenessToJson(const LivenessSummary& summary);
// `maxSteps`: at most that many steps are listed (evenly spaced, the peak
// always among them); 0 lists them all.
void printLiveness(const LivenessSummary& summary, std::ostream& out, std::size_t maxSteps = 40,
                   std::size_t maxTensors = 10);

}  // namespace ipusim::profiler::analysis
