#include "viewer/core/compare_summary.hpp"

#include "profiler/analysis/range_stats.hpp"
#include "viewer/core/memory_summary.hpp"

#include <algorithm>
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
  std::vector<CompareRow> rows = {
      {"Total cycles", ta.cycles, tb.cycles},
      {"Total time (s)", ta.seconds, tb.seconds},
      {"Engine::run calls", ta.runs, tb.runs},
      {"Steps", ta.steps, tb.steps},
      {"Steps per run", ta.runs > 0 ? ta.steps / ta.runs : 0, tb.runs > 0 ? tb.steps / tb.runs : 0},
      {"Cycles per step", ta.steps > 0 ? ta.cycles / ta.steps : 0, tb.steps > 0 ? tb.cycles / tb.steps : 0},
      {"Captured runs (shares below are over them)", ta.capturedRuns, tb.capturedRuns},
      {"IPU waiting for the host", ta.waitingForHost, tb.waitingForHost, true},
      {"StreamCopy Begin", ta.stats.share(ta.stats.hostWaitCycles), tb.stats.share(tb.stats.hostWaitCycles), true},
      {"Compute/IO overlap", ta.stats.computeIoOverlap(), tb.stats.computeIoOverlap(), true},
      {"Fullest tile (peak bytes)", ta.fullestTile, tb.fullestTile},
  };
  const std::size_t ipus = std::max(ta.stats.ipus.size(), tb.stats.ipus.size());
  for (std::size_t i = 0; i < ipus; ++i) {
    auto share = [i](const profiler::RangeStats& s, std::int64_t profiler::IpuRangeStats::*field) {
      return i < s.ipus.size() ? s.share(s.ipus[i].*field) : 0.0;
    };
    const std::string prefix = "IPU " + std::to_string(i) + " ";
    rows.push_back({prefix + "compute", share(ta.stats, &profiler::IpuRangeStats::compute),
                    share(tb.stats, &profiler::IpuRangeStats::compute), true});
    rows.push_back({prefix + "exchange", share(ta.stats, &profiler::IpuRangeStats::exchange),
                    share(tb.stats, &profiler::IpuRangeStats::exchange), true});
    rows.push_back({prefix + "IPU link", share(ta.stats, &profiler::IpuRangeStats::ipuLink),
                    share(tb.stats, &profiler::IpuRangeStats::ipuLink), true});
    rows.push_back({prefix + "collective", share(ta.stats, &profiler::IpuRangeStats::collective),
                    share(tb.stats, &profiler::IpuRangeStats::collective), true});
    rows.push_back({prefix + "sync", share(ta.stats, &profiler::IpuRangeStats::sync),
                    share(tb.stats, &profiler::IpuRangeStats::sync), true});
    rows.push_back({prefix + "stream copy", share(ta.stats, &profiler::IpuRangeStats::streamCopy),
                    share(tb.stats, &profiler::IpuRangeStats::streamCopy), true});
    rows.push_back({prefix + "Streaming Memory", share(ta.stats, &profiler::IpuRangeStats::streamingMemory),
                    share(tb.stats, &profiler::IpuRangeStats::streamingMemory), true});
    rows.push_back({prefix + "idle", share(ta.stats, &profiler::IpuRangeStats::idle),
                    share(tb.stats, &profiler::IpuRangeStats::idle), true});
  }
  return rows;
}

}  // namespace ipusim::viewer
