// ipusim export: the Chrome trace re-read with nlohmann::json.
#include "profiler/analysis/chrome_trace.hpp"
#include "tests/profiler/test_analysis_profile.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <vector>

using namespace ipusim;
using namespace ipusim::profiler::analysis;

namespace {

struct Exported {
  nlohmann::json trace;
  ChromeTraceStats stats;
  std::int64_t profileSlices = 0;
};

Exported exportKnown(double clockHz) {
  const std::string path = testing_profiles::temporaryPath("export.pop");
  testing_profiles::writeKnownProfile(path, clockHz);
  const traces::ProfileReader reader(path);
  std::ostringstream out;
  Exported e;
  e.stats = writeChromeTrace(reader, out);
  e.trace = nlohmann::json::parse(out.str());
  e.profileSlices = reader.sliceCount();
  return e;
}

std::int64_t picos(const nlohmann::json& micros) { return std::llround(micros.get<double>() * 1e6); }

}  // namespace

TEST(AnalysisChromeTrace, EverySliceIsACompleteEventWithExactCycles) {
  const auto e = exportKnown(1e9);
  ASSERT_TRUE(e.trace["traceEvents"].is_array());
  std::multiset<std::pair<std::int64_t, std::int64_t>> cycles;
  for (const auto& ev : e.trace["traceEvents"])
    if (ev["ph"] == "X") cycles.insert({ev["args"]["ts_cycles"].get<std::int64_t>(), ev["args"]["dur_cycles"].get<std::int64_t>()});
  EXPECT_EQ(static_cast<std::int64_t>(cycles.size()), e.profileSlices);
  EXPECT_EQ(e.stats.slices, e.profileSlices);
  EXPECT_EQ(e.profileSlices, 25);
  // The first infeed's Mid: cycles [200, 280) at 1 GHz = 0.2 us for 0.08 us, 400 bytes.
  bool foundMid = false;
  for (const auto& ev : e.trace["traceEvents"]) {
    if (ev["ph"] != "X" || ev["cat"] != "stream_copy_mid" || ev["args"]["ts_cycles"] != 200) continue;
    foundMid = true;
    EXPECT_EQ(picos(ev["ts"]), 200000);
    EXPECT_EQ(picos(ev["dur"]), 80000);
    EXPECT_EQ(ev["args"]["bytes"], 400);
    EXPECT_EQ(ev["args"]["run"], 0);
    EXPECT_EQ(ev["name"], "Mid");
  }
  EXPECT_TRUE(foundMid);
}

TEST(AnalysisChromeTrace, MetadataNamesTracksAndCountersAreEvents) {
  const auto e = exportKnown(1e9);
  std::set<std::string> threads, processes;
  int counters = 0;
  for (const auto& ev : e.trace["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "thread_name") threads.insert(ev["args"]["name"].get<std::string>());
    if (ev["ph"] == "M" && ev["name"] == "process_name") processes.insert(ev["args"]["name"].get<std::string>());
    if (ev["ph"] == "C") {
      ++counters;
      EXPECT_EQ(ev["name"], "loss");
      EXPECT_TRUE(ev["args"].contains("loss"));
    }
  }
  EXPECT_EQ(threads, (std::set<std::string>{"Engine", "dataset", "StreamCopy", "IPU 0", "IPU 0 programs", "IPU 0 BSP"}));
  EXPECT_EQ(processes, (std::set<std::string>{"Host and engine", "IPU 0"}));
  EXPECT_EQ(counters, 4);
  EXPECT_EQ(e.trace["otherData"]["workload"], "known");
}

// At 1.33 GHz cycles do not map to whole picoseconds: nesting must survive
// the conversion on every thread.
TEST(AnalysisChromeTrace, NestedSlicesStayInsideTheirParentsPerThread) {
  const auto e = exportKnown(1.33e9);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> byThread;
  for (const auto& ev : e.trace["traceEvents"])
    if (ev["ph"] == "X")
      byThread[{ev["pid"].get<std::int64_t>(), ev["tid"].get<std::int64_t>()}].push_back(
          {picos(ev["ts"]), picos(ev["ts"]) + picos(ev["dur"])});
  int nestedChecked = 0;
  for (auto& [thread, events] : byThread) {
    std::sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    std::vector<std::pair<std::int64_t, std::int64_t>> open;
    for (const auto& ev : events) {
      while (!open.empty() && open.back().second <= ev.first) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(ev.second, open.back().second) << "slice overlaps its parent's end on tid " << thread.second;
        ++nestedChecked;
      }
      open.push_back(ev);
    }
  }
  // engine: 2 steps; stream: 8 phases; programs: 2 computes.
  EXPECT_EQ(nestedChecked, 12);
}

TEST(AnalysisChromeTrace, PicosecondConversionIsMonotonic) {
  std::int64_t previous = -1;
  for (std::int64_t cycles = 0; cycles < 100000; ++cycles) {
    const std::int64_t ps = cyclesToPicoseconds(cycles, 1.33e9);
    ASSERT_GE(ps, previous);
    previous = ps;
  }
  EXPECT_EQ(cyclesToPicoseconds(1330, 1.33e9), 1000000);
}
