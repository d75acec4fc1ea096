#include "profiler/analysis/report.hpp"

#include "profiler/analysis/job_cycles.hpp"
#include "profiler/analysis/json_number.hpp"
#include "profiler/analysis/text_format.hpp"

#include <iomanip>

namespace ipusim::profiler::analysis {

ProfileReport buildReport(const traces::ProfileReader& reader, const ReportOptions& options) {
  ProfileReport report;
  report.target = readProfileTarget(reader);
  report.programs = summarizePrograms(reader.programs());
  const auto runs = reader.runs();
  report.runs = summarizeRuns(runs, reader.path());
  report.captured = measureDeviceActivity(reader, capturedRunWindows(runs), report.target.ipusHeld);
  report.hostWait = ipuWaitingForHost(reader);
  report.totalCycles = jobCycles(reader);
  report.memory = summarizeTileMemory(reader.tileMemory(), reader.tileMemoryPeaks(),
                                      report.target.tilesHeld(),
                                      report.target.tileMemoryBytes, options.fullestTiles);
  report.loss = summarizeCounter(reader, "loss");
  report.validationLoss = summarizeCounter(reader, "val_loss");
  return report;
}

nlohmann::json phaseCyclesToJson(const PhaseCycles& c) {
  return {{"compute", c.compute},       {"exchange", c.exchange}, {"ipu_link", c.ipuLink},
          {"collective", c.collective}, {"sync", c.sync},             {"stream_copy", c.streamCopy},
          {"streaming_memory", c.streamingMemory}, {"idle", c.idle}};
}

namespace {

// null when the clock is unknown: seconds cannot be given.
nlohmann::json secondsOrNull(const ProfileTarget& target, std::int64_t cycles) {
  if (target.clockHz <= 0) return nullptr;
  return double(cycles) / target.clockHz;
}

}  // namespace

nlohmann::json reportToJson(const ProfileReport& r) {
  nlohmann::json j;
  j["profile"] = r.target.path;
  j["target"] = {{"arch", r.target.arch},
                 {"workload", r.target.workload},
                 {"task", r.target.task.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.target.task)},
                 {"num_ipus", r.target.numIpus},
                 {"tiles_per_ipu", r.target.tilesPerIpu},
                 {"clock_hz", r.target.clockHz},
                 {"tile_memory_bytes", r.target.tileMemoryBytes},
                 // The IPUs the profile holds: all, or one instance's (instance_profiles.hpp).
                 {"first_ipu_held", r.target.firstIpu},
                 {"ipus_held", r.target.ipusHeld}};
  nlohmann::json roots = nlohmann::json::array();
  for (const auto& root : r.programs.roots)
    roots.push_back({{"id", root.id}, {"kind", root.kind}, {"name", root.name}, {"programs", root.steps}});
  j["programs"] = {{"count", r.programs.programs},
                   {"max_depth", r.programs.maxDepth},
                   {"by_kind", r.programs.byKind},
                   {"roots", roots}};
  j["total_cycles"] = r.totalCycles;
  j["total_seconds"] = secondsOrNull(r.target, r.totalCycles);
  j["ipu_waiting_for_host"] = r.hostWait.share();
  j["host_wait"] = hostWaitToJson(r.hostWait);
  nlohmann::json byEntryPoint = nlohmann::json::array();
  for (const auto& e : r.runs.byEntryPoint)
    byEntryPoint.push_back({{"entry_point", e.name}, {"runs", e.runs}, {"steps", e.steps}});
  j["runs"] = {{"count", r.runs.runs},
               {"by_entry_point", byEntryPoint},
               {"captured", r.runs.capturedRuns},
               {"steps", r.runs.steps},
               {"steps_per_run", r.runs.stepsPerRun()},
               {"min_steps_per_run", r.runs.minStepsPerRun},
               {"max_steps_per_run", r.runs.maxStepsPerRun},
               {"first_start_cycle", r.runs.firstStart},
               {"last_end_cycle", r.runs.lastEnd},
               {"span_cycles", r.runs.spanCycles()},
               {"span_seconds", secondsOrNull(r.target, r.runs.spanCycles())},
               {"run_cycles", r.runs.runCycles},
               {"captured_cycles", r.runs.capturedCycles}};
  nlohmann::json perIpu = nlohmann::json::array();
  for (std::size_t ipu = 0; ipu < r.captured.perIpu.size(); ++ipu) {
    nlohmann::json entry = phaseCyclesToJson(r.captured.perIpu[ipu]);
    entry["idle_share"] = r.captured.idleShare(ipu);
    entry["ipu"] = r.captured.firstIpu + std::int64_t(ipu);
    perIpu.push_back(entry);
  }
  j["captured"] = {{"window_cycles", r.captured.windowCycles},
                   {"cycles_by_phase", perIpu},
                   {"stream_copy_begin_cycles", r.captured.hostWaitCycles},
                   {"host_transfer_cycles", r.captured.hostTransferCycles},
                   {"transfer_overlap_cycles", r.captured.transferOverlapCycles},
                   {"overlap_percent", r.captured.overlapFraction() * 100.0},
                   {"host_io_cycles", r.captured.hostIoCycles},
                   {"host_io_overlap_percent", r.captured.hostIoOverlapFraction() * 100.0},
                   {"bytes_to_device", r.captured.bytesToDevice},
                   {"bytes_to_host", r.captured.bytesToHost}};
  nlohmann::json fullest = nlohmann::json::array();
  for (const auto& t : r.memory.fullest)
    fullest.push_back({{"ipu", t.ipu},
                       {"tile", t.tile},
                       {"bytes", t.bytes},
                       {"always_live_bytes", t.alwaysLiveBytes},
                       {"not_always_live_peak_bytes", t.notAlwaysLivePeakBytes}});
  nlohmann::json perIpuMemory = nlohmann::json::array();
  for (const auto& ipu : r.memory.perIpu)
    perIpuMemory.push_back({{"ipu", ipu.ipu},
                            {"max_bytes", ipu.maxBytes},
                            {"max_not_always_live_peak_bytes", ipu.maxNotAlwaysLivePeakBytes}});
  j["tile_memory"] = {{"tiles", r.memory.tiles},
                      {"capacity_bytes", r.memory.capacityBytes},
                      {"total_bytes", r.memory.totalBytes},
                      {"max_bytes", r.memory.maxBytes},
                      {"mean_bytes", r.memory.meanBytes},
                      {"tiles_over_capacity", r.memory.tilesOverCapacity},
                      {"figure", r.memory.fromPeaks ? "peak" : "category_sum"},
                      {"bytes_by_category", r.memory.bytesByCategory},
                      {"per_ipu", perIpuMemory},
                      {"fullest", fullest}};
  if (r.loss) {
    j["loss"] = {{"samples", r.loss->samples}, {"first", jsonNumber(r.loss->first)}, {"last", jsonNumber(r.loss->last)},
                 {"min", jsonNumber(r.loss->min)}, {"min_cycle", r.loss->minTs}};
  } else {
    j["loss"] = nullptr;
  }
  j["val_loss"] = nullptr;
  if (r.validationLoss)
    j["val_loss"] = {{"samples", r.validationLoss->samples}, {"first", jsonNumber(r.validationLoss->first)},
                     {"last", jsonNumber(r.validationLoss->last)}, {"min", jsonNumber(r.validationLoss->min)},
                     {"min_cycle", r.validationLoss->minTs}};
  return j;
}

namespace {

std::string cyclesAndTime(const ProfileTarget& target, std::int64_t cycles) {
  std::string text = std::to_string(cycles) + " cycles";
  if (target.clockHz > 0) text += " (" + formatSeconds(double(cycles) / target.clockHz) + ")";
  return text;
}

std::string valueOr(const std::string& value, const char* unknown = "unknown") {
  return value.empty() ? unknown : value;
}

void printPhaseTable(const ProfileReport& r, std::ostream& out) {
  const auto& a = r.captured;
  out << "Cycles by phase over the captured runs (" << r.runs.capturedRuns << " runs, "
      << cyclesAndTime(r.target, a.windowCycles) << "):\n";
  if (a.windowCycles == 0) {
    out << "  no captured run\n";
    return;
  }
  // The Streaming Memory column only where a run copied to or from it (offloaded state).
  const bool remote = a.allIpus().streamingMemory > 0;
  std::vector<const char*> names = {"compute", "exchange", "ipu link", "collective", "sync", "stream copy"};
  if (remote) names.push_back("streaming memory");
  names.push_back("idle");
  out << "  " << std::left << std::setw(6) << "IPU";
  for (const char* n : names) out << std::right << std::setw(22) << n;
  out << "\n";
  const auto row = [&](const std::string& label, const PhaseCycles& c, std::int64_t total) {
    out << "  " << std::left << std::setw(6) << label;
    std::vector<std::int64_t> cells = {c.compute, c.exchange, c.ipuLink, c.collective, c.sync, c.streamCopy};
    if (remote) cells.push_back(c.streamingMemory);
    cells.push_back(c.idle);
    for (std::int64_t v : cells) {
      const std::string cell = std::to_string(v) + " " +
                               formatPercent(total > 0 ? double(v) / double(total) : 0.0);
      out << std::right << std::setw(22) << cell;
    }
    out << "\n";
  };
  for (std::size_t ipu = 0; ipu < a.perIpu.size(); ++ipu)
    row(std::to_string(a.firstIpu + std::int64_t(ipu)), a.perIpu[ipu], a.windowCycles);
  if (a.perIpu.size() > 1) {
    row("all", a.allIpus(), a.allIpus().total());
    out << "  idle share outside stream copies (a pipeline's ramp-up and ramp-down):";
    for (std::size_t ipu = 0; ipu < a.perIpu.size(); ++ipu)
      out << (ipu ? ", " : " ") << "IPU " << a.firstIpu + std::int64_t(ipu) << " " << formatPercent(a.idleShare(ipu));
    out << "\n";
  }
  out << "  StreamCopy Begin (device waits for data or space): " << cyclesAndTime(r.target, a.hostWaitCycles)
      << ", " << formatPercent(a.hostWaitFraction()) << "\n";
  out << "  host-link transfer (StreamCopy Mid): " << cyclesAndTime(r.target, a.hostTransferCycles)
      << ", overlapped with compute " << formatPercent(a.overlapFraction()) << "\n";
  out << "  host data work (batches, outfeed): " << cyclesAndTime(r.target, a.hostIoCycles)
      << ", hidden behind device activity " << formatPercent(a.hostIoOverlapFraction()) << "\n";
  out << "  bytes to device " << formatBytes(a.bytesToDevice) << ", to host "
      << formatBytes(a.bytesToHost) << "\n";
}

}  // namespace

void printReport(const ProfileReport& r, std::ostream& out) {
  const auto& t = r.target;
  out << "Profile   " << t.path << "\n";
  out << "Target    " << valueOr(t.arch) << ", " << t.numIpus << " IPU(s) x " << t.tilesPerIpu
      << " tiles, clock " << (t.clockHz > 0 ? formatNumber(t.clockHz / 1e9, 3) + " GHz" : "unknown")
      << ", tile memory "
      << (t.tileMemoryBytes > 0 ? formatBytes(t.tileMemoryBytes) : std::string("unknown")) << "\n";
  if (t.ipusHeld < t.numIpus)
    out << "Instance  IPUs " << t.firstIpu << "-" << t.firstIpu + t.ipusHeld - 1 << " of " << t.numIpus
        << ": one process's profile of a run over several (mpirun); their directory reads as one system\n";
  out << "Workload  " << valueOr(t.workload) << (t.task.empty() ? "" : " (" + t.task + ")") << "\n";

  const auto& p = r.programs;
  out << "Programs  " << p.programs << " in a tree of depth " << p.maxDepth << ":";
  bool first = true;
  for (const auto& [kind, count] : p.byKind) {
    out << (first ? " " : ", ") << count << " " << kind;
    first = false;
  }
  out << "\n";
  for (const auto& root : p.roots)
    out << "  #" << root.id << " " << root.kind << " '" << root.name << "': " << root.steps
        << " programs\n";

  const auto& runs = r.runs;
  out << "Runs      " << runs.runs << " Engine::run calls, " << runs.capturedRuns << " captured; "
      << runs.steps << " steps (" << formatNumber(runs.stepsPerRun(), 2) << " per run, "
      << runs.minStepsPerRun << ".." << runs.maxStepsPerRun << ")\n";
  if (runs.byEntryPoint.size() > 1) {  // fit with validation: which runs trained and which validated
    out << "  by entry point:";
    for (std::size_t i = 0; i < runs.byEntryPoint.size(); ++i)
      out << (i ? "," : "") << " " << runs.byEntryPoint[i].name << " " << runs.byEntryPoint[i].runs << " runs ("
          << runs.byEntryPoint[i].steps << " steps)";
    out << "\n";
  }
  out << "  total (cycle 0 to the job's end): " << cyclesAndTime(t, r.totalCycles) << "; first start to last end "
      << cyclesAndTime(t, runs.spanCycles()) << "; inside runs " << cyclesAndTime(t, runs.runCycles) << "\n";
  const auto& w = r.hostWait;
  if (!w.measured())
    out << "IPU waiting for the host: n/a (no run captured to measure it over, as with "
           "autoReport.executionProfileProgramRunCount 0)\n";
  else
    out << "IPU waiting for the host: " << formatPercent(w.share()) << " of the captured runs and the host time before "
      << "each (" << cyclesAndTime(t, w.waitingCycles) << " of " << cyclesAndTime(t, w.windowCycles)
      << "): outside Engine::run " << cyclesAndTime(t, w.outsideRunCycles) << ", StreamCopy Begin "
      << cyclesAndTime(t, w.beginCycles) << ", host service " << cyclesAndTime(t, w.hostServiceCycles) << "\n";

  printPhaseTable(r, out);

  const auto& m = r.memory;
  out << "Tile memory (" << (m.fromPeaks ? "peak per tile" : "sum of tensors per tile: profile has no peaks")
      << ") over " << m.tiles << " tiles: max " << formatBytes(m.maxBytes) << ", mean "
      << formatBytes(static_cast<std::int64_t>(m.meanBytes + 0.5));
  if (m.capacityBytes > 0)
    out << ", capacity " << formatBytes(m.capacityBytes) << " (max "
        << formatPercent(double(m.maxBytes) / double(m.capacityBytes)) << "), "
        << m.tilesOverCapacity << " tile(s) over capacity";
  out << "\n";
  // What lives on the tiles, by category: not-always-live tensors share bytes,
  // so these can add up to more than the peaks.
  if (!m.bytesByCategory.empty()) out << "  by category (tensors' bytes; not-always-live ones share memory):\n";
  for (const auto& [category, bytes] : m.bytesByCategory)
    out << "    " << category << ": " << formatBytes(bytes) << "\n";
  if (m.perIpu.size() > 1)
    for (const auto& ipu : m.perIpu)
      out << "  IPU " << ipu.ipu << ": fullest tile " << formatBytes(ipu.maxBytes)
          << ", not-always-live peak (activations, gradients, temporaries) up to "
          << formatBytes(ipu.maxNotAlwaysLivePeakBytes) << " a tile\n";
  if (!m.fullest.empty()) {
    out << "  fullest tiles:";
    for (const auto& tile : m.fullest) {
      out << " " << tile.tile << " (IPU " << tile.ipu << ", " << tile.bytes << " B";
      if (m.capacityBytes > 0) out << ", " << formatPercent(double(tile.bytes) / double(m.capacityBytes));
      out << ")";
    }
    out << "\n";
  }

  if (r.loss) {
    out << "Loss      " << r.loss->samples << " samples: first " << numberText(r.loss->first) << ", last "
        << numberText(r.loss->last) << ", min " << numberText(r.loss->min) << " (at cycle " << r.loss->minTs << ")\n";
  } else {
    out << "Loss      no \"loss\" counter in this profile\n";
  }
  if (r.validationLoss)
    out << "Val loss  " << r.validationLoss->samples << " samples: first " << numberText(r.validationLoss->first)
        << ", last " << numberText(r.validationLoss->last) << ", min " << numberText(r.validationLoss->min) << " (at cycle "
        << r.validationLoss->minTs << ")\n";
}

}  // namespace ipusim::profiler::analysis
