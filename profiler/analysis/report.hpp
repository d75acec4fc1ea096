#pragma once
// ProfileReport: what `ipusim report` shows about one profile — the target,
// the program tree, the runs, device cycles by phase per IPU over the
// captured runs, tile memory and the training loss. Built once, printed as
// text for people or as JSON for scripts.
#include "profiler/analysis/counter_summary.hpp"
#include "profiler/analysis/device_activity.hpp"
#include "profiler/analysis/host_wait.hpp"
#include "profiler/analysis/profile_target.hpp"
#include "profiler/analysis/program_summary.hpp"
#include "profiler/analysis/run_summary.hpp"
#include "profiler/analysis/tile_memory_summary.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>

namespace ipusim::profiler::analysis {

struct ReportOptions {
  std::size_t fullestTiles = 5;  // how many of the fullest tiles to list
};

struct ProfileReport {
  ProfileTarget target;
  ProgramSummary programs;
  RunSummary runs;
  DeviceActivity captured;       // over the captured runs' windows
  HostWaitBreakdown hostWait;    // ipuWaitingForHost(reader)
  std::int64_t totalCycles = 0;  // jobCycles(reader)
  TileMemorySummary memory;
  std::optional<CounterSummary> loss;
  std::optional<CounterSummary> validationLoss;  // fit with validation: the "val_loss" counter
};

// Throws traces::ProfileError (malformed meta) or std::invalid_argument
// (an inconsistent program tree).
ProfileReport buildReport(const traces::ProfileReader& reader, const ReportOptions& options = {});

nlohmann::json reportToJson(const ProfileReport& report);
void printReport(const ProfileReport& report, std::ostream& out);

// JSON of one phase breakdown: {"compute": cycles, ..., "idle": cycles}.
nlohmann::json phaseCyclesToJson(const PhaseCycles& cycles);

}  // namespace ipusim::profiler::analysis
