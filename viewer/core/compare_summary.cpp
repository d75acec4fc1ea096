#include "viewer/core/compare_summary.hpp"

#include "profiler/analysis/range_stats.hpp"
#include "viewer/core/memory_summary.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace ipusim::viewer {

namespace {

struct Totals {
  double cycles = 0, seconds = 0, runs = 0, steps = 0, capturedRuns = 0, waitingForHost = 0, fullestTile = 0;
  profiler::RangeStats stats;
};

Totals totalsOf(const ProfileSession& s) {
  Totals t;
  t.cycles = double(s.jobCycles());
  t.waitingForHost = s.hostWait().share();
  t.seconds = s.clockHz() > 0 ? t.cycles / s.clockHz() : 0;
  t.runs = double(s.runs().size());
  for (const auto& r : s.runs()) t.steps += double(r.steps);
  const auto [from, to] = statisticsWindow(s);
  t.stats = profiler::computeRangeStats(s.reader(), from, to);
  for (const auto& r : s.runs()) t.capturedRuns += r.captured ? 1 : 0;
  // The memory view's figure (the tiles' peaks, as `report` prints them).
  const MemorySummary memory = summarizeMemory(s.tileMemory(), s.tileMemoryPeaks(), s.ipusHeld() * s.tilesPerIpu(), 0);
  t.fullestTile = double(memory.maxTotal);
  return t;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> statisticsWindow(const ProfileSession& s) {
  std::optional<std::pair<std::int64_t, std::int64_t>> window;
  for (const auto& r : s.runs()) {
    if (!r.captured) continue;
    if (!window) window = std::make_pair(r.startCycle, r.endCycle);
    window->first = std::min(window->first, r.startCycle);
    window->second = std::max(window->second, r.endCycle);
  }
  return window ? *window : std::make_pair(s.startCycle(), s.endCycle());
}

std::vector<CompareRow> compareProfiles(const ProfileSession& a, const ProfileSession& b) {
  const Totals ta = totalsOf(a), tb = totalsOf(b);
  // The shares of the captured runs: NaN ("n/a") for a profile that captured
  // none (they read 0.0% each, as its host wait did).
  const auto captured = [](const Totals& t, double share) {
    return t.capturedRuns > 0 ? share : std::numeric_limits<double>::quiet_NaN();
  };
  std::vector<CompareRow> rows = {
      {"Total cycles", ta.cycles, tb.cycles},
      {"Total time (s)", ta.seconds, tb.seconds},
      {"Engine::run calls", ta.runs, tb.runs},
      {"Steps", ta.steps, tb.steps},
      {"Steps per run", ta.runs > 0 ? ta.steps / ta.runs : 0, tb.runs > 0 ? tb.steps / tb.runs : 0},
      {"Cycles per step", ta.steps > 0 ? ta.cycles / ta.steps : 0, tb.steps > 0 ? tb.cycles / tb.steps : 0},
      {"Captured runs (shares below are over them)", ta.capturedRuns, tb.capturedRuns},
      {"IPU waiting for the host", ta.waitingForHost, tb.waitingForHost, true},
      {"StreamCopy Begin", captured(ta, ta.stats.share(ta.stats.hostWaitCycles)),
       captured(tb, tb.stats.share(tb.stats.hostWaitCycles)), true},
      {"Compute/IO overlap", captured(ta, ta.stats.computeIoOverlap()), captured(tb, tb.stats.computeIoOverlap()),
       true},
      {"Fullest tile (peak bytes)", ta.fullestTile, tb.fullestTile},
  };
  const std::size_t ipus = std::max(ta.stats.ipus.size(), tb.stats.ipus.size());
  for (std::size_t i = 0; i < ipus; ++i) {
    auto share = [i, &captured](const Totals& t, std::int64_t profiler::IpuRangeStats::*field) {
      const profiler::RangeStats& s = t.stats;
      return captured(t, i < s.ipus.size() ? s.share(s.ipus[i].*field) : 0.0);
    };
    const std::string prefix = "IPU " + std::to_string(i) + " ";
    const std::pair<const char*, std::int64_t profiler::IpuRangeStats::*> phases[] = {
        {"compute", &profiler::IpuRangeStats::compute},
        {"exchange", &profiler::IpuRangeStats::exchange},
        {"IPU link", &profiler::IpuRangeStats::ipuLink},
        {"collective", &profiler::IpuRangeStats::collective},
        {"sync", &profiler::IpuRangeStats::sync},
        {"stream copy", &profiler::IpuRangeStats::streamCopy},
        {"Streaming Memory", &profiler::IpuRangeStats::streamingMemory},
        {"idle", &profiler::IpuRangeStats::idle}};
    for (const auto& [phase, field] : phases) rows.push_back({prefix + phase, share(ta, field), share(tb, field), true});
  }
  return rows;
}

}  // namespace ipusim::viewer
