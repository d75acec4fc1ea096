// ipusim export: the Chrome trace re-read with nlohmann::json, whose numbers
// are doubles parsed correctly rounded, as JavaScript's JSON.parse does.
#include "profiler/analysis/chrome_trace.hpp"
#include "profiler/analysis/chrome_trace_time.hpp"
#include "tests/profiler/test_analysis_profile.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace test_analysis_chrome_trace {

using namespace ipusim;
using namespace ipusim::profiler::analysis;

namespace {

struct Exported {
  nlohmann::json trace;
  ChromeTraceStats stats;
  std::int64_t profileSlices = 0;
};

Exported exportProfile(const std::string& path) {
  const traces::ProfileReader reader(path);
  std::ostringstream out;
  Exported e;
  e.stats = writeChromeTrace(reader, out);
  e.trace = nlohmann::json::parse(out.str());
  e.profileSlices = reader.sliceCount();
  return e;
}

Exported exportKnown(double clockHz) {
  const std::string path = testing_profiles::temporaryPath("export.pop");
  testing_profiles::writeKnownProfile(path, clockHz);
  return exportProfile(path);
}

// A JSON time or duration back in cycles, as a consumer's reader would.
std::int64_t cycles(const nlohmann::json& micros, double clockHz, double offsetMicros = 0) {
  return std::llround((micros.get<double>() - offsetMicros) * clockHz / 1e6);
}

// What a consumer does with the "X" events of each thread: end = ts + dur in
// doubles, events sorted by start (longest first), a stack of open events.
// `rebased`: first subtract the thread's earliest start from every start, as
// speedscope's importer does.
// Returns the number of events checked inside a parent; every failure is a
// child that ends after its parent, which is also how a partial overlap with
// a sibling shows (the sibling is still open when the next one starts).
int checkNestingAsAConsumer(const nlohmann::json& trace, bool rebased) {
  struct Event { double ts, end; std::string name; };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Event>> byThread;
  for (const auto& ev : trace["traceEvents"])
    if (ev["ph"] == "X") {
      const double ts = ev["ts"].get<double>(), dur = ev["dur"].get<double>();
      byThread[{ev["pid"].get<std::int64_t>(), ev["tid"].get<std::int64_t>()}].push_back(
          {ts, ts + dur, ev["name"].get<std::string>()});
    }
  int nested = 0;
  for (auto& [thread, events] : byThread) {
    if (rebased) {
      double first = events.front().ts;
      for (const auto& ev : events) first = std::min(first, ev.ts);
      for (auto& ev : events) {
        const double dur = ev.end - ev.ts;  // exact: both are the file's numbers
        ev.ts -= first;
        ev.end = ev.ts + dur;
      }
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
      return x.ts != y.ts ? x.ts < y.ts : x.end > y.end;
    });
    std::vector<Event> open;
    for (const auto& ev : events) {
      while (!open.empty() && open.back().end <= ev.ts) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(ev.end, open.back().end) << ev.name << " at " << ev.ts << " ends after " << open.back().name
                                           << " on tid " << thread.second;
        ++nested;
      }
      open.push_back(ev);
    }
  }
  return nested;
}

}  // namespace

TEST(AnalysisChromeTrace, EverySliceIsAnEventWithoutArgsAndWithItsExactCycles) {
  const auto e = exportKnown(1.33e9);
  ASSERT_TRUE(e.trace["traceEvents"].is_array());
  std::multiset<std::string> names;
  for (const auto& ev : e.trace["traceEvents"])
    if (ev["ph"] == "X" || ev["ph"] == "I") {
      names.insert(ev["name"].get<std::string>());
      EXPECT_FALSE(ev.contains("args")) << ev.dump();  // speedscope would fold them into the frame's name
    }
  EXPECT_EQ(static_cast<std::int64_t>(names.size()), e.profileSlices);
  EXPECT_EQ(e.stats.slices + e.stats.instants, e.profileSlices);
  EXPECT_EQ(e.profileSlices, 25);
  EXPECT_EQ(names.count("Engine::run #1"), 1u);
  EXPECT_EQ(names.count("dense/matmul"), 5u);
  // The first infeed's Mid: cycles [200, 280), behind the 1 us offset.
  bool foundMid = false;
  for (const auto& ev : e.trace["traceEvents"]) {
    if (ev["ph"] != "X" || ev["cat"] != "stream_copy_mid" || cycles(ev["ts"], 1.33e9, 1.0) != 200) continue;
    foundMid = true;
    EXPECT_EQ(cycles(ev["dur"], 1.33e9), 80);
    EXPECT_EQ(ev["name"], "Mid");
  }
  EXPECT_TRUE(foundMid);
  EXPECT_EQ(e.trace["otherData"]["ts_offset_us"], 1);
}

TEST(AnalysisChromeTrace, NoEventButMetadataSitsAtTimeZero) {
  const auto e = exportKnown(1e9);
  for (const auto& ev : e.trace["traceEvents"]) {
    if (ev["ph"] == "M") continue;
    EXPECT_GT(ev["ts"].get<double>(), 0.0) << ev.dump();
  }
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

// At 1.33 GHz cycles do not map to whole nanoseconds: nesting must survive
// the conversion and the consumer's double arithmetic on every thread.
TEST(AnalysisChromeTrace, NestedSlicesStayInsideTheirParentsInDoubles) {
  const auto e = exportKnown(1.33e9);
  // engine: 2 steps; stream: 8 phases; programs: 2 computes.
  EXPECT_EQ(checkNestingAsAConsumer(e.trace, false), 12);
  EXPECT_EQ(checkNestingAsAConsumer(e.trace, true), 12);
}

// Runs of steps of stream copies far from time zero (seconds of device time,
// where a microsecond's decimals are not exact doubles), back to back, at the
// Mk2 clock: the shape of the tutorial's export, which overlapped by an ulp
// 388 times when its times were decimal microseconds.
TEST(AnalysisChromeTrace, BackToBackSlicesLateInATraceNeverOverlapInDoubles) {
  const std::string path = testing_profiles::temporaryPath("late.pop");
  {
    traces::ProfileWriter w(path);
    w.setMeta("clock_hz", "1330000000");
    const auto engine = w.addTrack({0, -1, "engine", "Engine", -1, -1, 0});
    const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
    std::uint64_t state = 12345;
    auto next = [&state](std::int64_t bound) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return std::int64_t((state >> 33) % std::uint64_t(bound));
    };
    std::int64_t at = 10'000'000'000;  // 7.5 s
    for (std::int64_t run = 0; run < 40; ++run) {
      const std::int64_t runStart = at;
      std::vector<std::pair<std::int64_t, std::int64_t>> steps;
      for (int step = 0; step < 10; ++step) {
        const std::int64_t dur = 4000 + next(20000);  // longer than its stream copies
        steps.push_back({at, dur});
        std::int64_t copy = at;
        for (const std::int64_t part : {next(3), 1 + next(500), 1 + next(3000), next(40)}) {
          if (part) testing_profiles::slice(w, stream, run, copy, part, "Mid", "stream_copy_mid");
          copy += part;
        }
        at += dur;
      }
      const auto runSlice = testing_profiles::slice(w, engine, run, runStart, at - runStart, "Engine::run #" + std::to_string(run),
                                                    "engine_run");
      for (std::size_t s = 0; s < steps.size(); ++s)
        testing_profiles::slice(w, engine, run, steps[s].first, steps[s].second, "Step " + std::to_string(s), "step",
                                runSlice, 1);
      at += next(3000);
    }
    w.commit();
  }
  const auto e = exportProfile(path);
  EXPECT_EQ(checkNestingAsAConsumer(e.trace, false), 400);
  EXPECT_EQ(checkNestingAsAConsumer(e.trace, true), 400);
}

TEST(AnalysisChromeTrace, ASliceOfZeroCyclesIsAnInstantAndOneCycleASlice) {
  const std::string path = testing_profiles::temporaryPath("short.pop");
  testing_profiles::writeShortSlicesProfile(path);  // Begin of 0 cycles, End of 1
  const auto e = exportProfile(path);
  EXPECT_EQ(e.stats.slices, 3);
  EXPECT_EQ(e.stats.instants, 1);
  for (const auto& ev : e.trace["traceEvents"]) {
    if (ev["name"] == "Begin") {
      EXPECT_EQ(ev["ph"], "I");
      EXPECT_EQ(ev["s"], "t");
    }
    if (ev["name"] == "End") {
      EXPECT_EQ(cycles(ev["dur"], 1.33e9), 1);
    }
  }
}

TEST(AnalysisChromeTraceTime, NanosecondsAreTheRoundedCycleTimeAndMonotonic) {
  EXPECT_EQ(cyclesToNanoseconds(1330, 1.33e9), 1000);
  EXPECT_EQ(cyclesToNanoseconds(2, 1.33e9), 2);   // 1.504 ns
  EXPECT_EQ(cyclesToNanoseconds(3, 1.33e9), 2);   // 2.256 ns
  EXPECT_EQ(cyclesToNanoseconds(1, 2e9), 1);      // 0.5 ns: halves away from zero
  EXPECT_EQ(cyclesToNanoseconds(-1, 2e9), -1);
  EXPECT_EQ(cyclesToNanoseconds(1'330'000'000'000'000, 1.33e9), 1'000'000'000'000'000);
  std::int64_t previous = -1;
  for (std::int64_t c = 0; c < 100000; ++c) {
    const std::int64_t ns = cyclesToNanoseconds(c, 1.6e9);
    ASSERT_GE(ns, previous);
    previous = ns;
  }
  EXPECT_THROW(cyclesToNanoseconds(1, 0), std::range_error);
  EXPECT_THROW(cyclesToNanoseconds(INT64_MAX, 1.0), std::range_error);
}

TEST(AnalysisChromeTraceTime, TraceTimesAreExactBinaryFractionsWrittenExactly) {
  EXPECT_EQ(traceUnitsAsMicroseconds(4096), "1");
  EXPECT_EQ(traceUnitsAsMicroseconds(1), "0.000244140625");
  EXPECT_EQ(traceUnitsAsMicroseconds(-6144), "-1.5");
  EXPECT_EQ(cyclesToTraceUnits(1330, 1.33e9), 4096);
  std::uint64_t state = 7;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double clockHz = i % 2 ? 1.33e9 : 1.6e9;
    const std::int64_t begin = std::int64_t((state >> 20) % 2'000'000'000'000ULL);  // up to 25 minutes
    const std::int64_t dur = 1 + std::int64_t((state >> 7) % 50000);
    const std::int64_t b = cyclesToTraceUnits(begin, clockHz), e = cyclesToTraceUnits(begin + dur, clockHz);
    const double ts = std::strtod(traceUnitsAsMicroseconds(b).c_str(), nullptr);
    const double d = std::strtod(traceUnitsAsMicroseconds(e - b).c_str(), nullptr);
    ASSERT_EQ(ts * 4096, double(b));  // exact
    ASSERT_EQ(ts + d, std::strtod(traceUnitsAsMicroseconds(e).c_str(), nullptr));
    ASSERT_EQ(std::llround(d * clockHz / 1e6), dur) << begin << " + " << dur << " at " << clockHz;
  }
}

}  // namespace test_analysis_chrome_trace
