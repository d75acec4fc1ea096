// IPU waiting for the host and the job's total cycles: their one definitions
// (profiler/analysis/host_wait.hpp, job_cycles.hpp), exact cycles.
#include "profiler/analysis/host_wait.hpp"
#include "profiler/analysis/job_cycles.hpp"
#include "profiler/analysis/report.hpp"
#include "profiler/analysis/text_format.hpp"
#include "test_analysis_profile.hpp"
#include "traces/profile_error.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace ipusim::profiler::analysis::test_analysis_host_wait {
namespace {

using testing_profiles::slice;
using testing_profiles::temporaryPath;

TEST(HostWait, CapturedRunCyclesTakeTheHostTimeBeforeEachCapturedRun) {
  const std::vector<traces::RunRow> runs = {{0, 0, "r", 100, 1000, 1, true},
                                            {1, 0, "r", 1200, 2000, 1, false},
                                            {2, 0, "r", 2500, 3000, 1, true}};
  const IntervalSet windows = capturedRunCycles(runs);
  ASSERT_EQ(windows.intervals().size(), 2u);
  EXPECT_EQ(windows.intervals()[0].begin, 0);     // the first run's dispatch counts from cycle 0
  EXPECT_EQ(windows.intervals()[0].end, 1000);
  EXPECT_EQ(windows.intervals()[1].begin, 2000);  // from the end of the (uncaptured) run before
  EXPECT_EQ(windows.intervals()[1].end, 3000);
}

// The known profile: captured runs [0,1000) and [1200,2000) -> windows [0,2000);
// outside runs [1000,1200) = 200; Begins 200 + 10 + 50 = 260; no host service.
TEST(HostWait, KnownProfileCountsTimeOutsideRunsAndBegins) {
  const std::string path = temporaryPath("host-wait-known.pop");
  testing_profiles::writeKnownProfile(path);
  traces::ProfileReader reader(path);
  const HostWaitBreakdown w = ipuWaitingForHost(reader);
  EXPECT_EQ(w.windowCycles, 2000);
  EXPECT_EQ(w.outsideRunCycles, 200);
  EXPECT_EQ(w.beginCycles, 260);
  EXPECT_EQ(w.hostServiceCycles, 0);
  EXPECT_EQ(w.waitingCycles, 460);
  EXPECT_DOUBLE_EQ(w.share(), 0.23);
  EXPECT_EQ(jobCycles(reader), 3000);  // no job_end_cycle: the last run's end
}

// Host service counts, the transfer does not, overlapping sources count once.
TEST(HostWait, HostServiceCountsAndTheTransferDoesNot) {
  const std::string path = temporaryPath("host-wait-service.pop");
  {
    traces::ProfileWriter w(path);
    w.setMeta("clock_hz", "1e9");
    w.setMeta("job_end_cycle", "1500");
    w.addRun({0, 0, "train", 300, 1300, 10, true});
    const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
    const auto other = w.addTrack({0, -1, "stream", "StreamCopy 2", 0, -1, 21});
    slice(w, stream, 0, 300, 100, "Begin", "stream_copy_begin");
    slice(w, stream, 0, 400, 400, "Mid: host service", "stream_copy_host_service");
    slice(w, stream, 0, 800, 50, "Mid", "stream_copy_mid");
    slice(w, other, 0, 350, 100, "Begin", "stream_copy_begin");  // overlaps both of the above
    w.commit();
  }
  traces::ProfileReader reader(path);
  const HostWaitBreakdown w = ipuWaitingForHost(reader);
  EXPECT_EQ(w.windowCycles, 1300);        // [0, 1300): the dispatch before the run and the run
  EXPECT_EQ(w.outsideRunCycles, 300);     // [0, 300)
  EXPECT_EQ(w.beginCycles, 150);          // [300, 450)
  EXPECT_EQ(w.hostServiceCycles, 400);    // [400, 800)
  EXPECT_EQ(w.waitingCycles, 300 + 500);  // [0, 800): the union
  EXPECT_DOUBLE_EQ(w.share(), 800.0 / 1300.0);
  EXPECT_EQ(jobCycles(reader), 1500);     // meta job_end_cycle: the drain after the last run counts
  // A window of its own (the viewer's selection): [350, 900).
  IntervalSet selection;
  selection.add(350, 900);
  EXPECT_EQ(ipuWaitingForHost(reader, selection).waitingCycles, 800 - 350);
}

// No captured run (autoReport.executionProfileProgramRunCount 0): nothing
// to measure over. The share read 0.0 ("the IPU never waits") in `run`,
// `report`, `compare`, `insights` and their --json (adversarial pass 23):
// NaN now, "n/a" in the texts and null in JSON.
TEST(HostWait, NoCapturedRunMeasuresNothing) {
  const std::string path = temporaryPath("host-wait-uncaptured.pop");
  {
    traces::ProfileWriter w(path);
    w.setMeta("clock_hz", "1e9");
    w.addRun({0, 0, "train", 300, 1300, 10, false});
    w.addRun({1, 0, "train", 1500, 2500, 10, false});
    w.commit();
  }
  traces::ProfileReader reader(path);
  const HostWaitBreakdown w = ipuWaitingForHost(reader);
  EXPECT_FALSE(w.measured());
  EXPECT_TRUE(std::isnan(w.share()));
  EXPECT_EQ(formatPercent(w.share()), "n/a");
  const ProfileReport report = buildReport(reader);
  EXPECT_EQ(reportToJson(report)["ipu_waiting_for_host"].dump(), "null");  // (NaN, which JSON writes as null)
  std::ostringstream text;
  printReport(report, text);
  EXPECT_NE(text.str().find("IPU waiting for the host: n/a (no run captured to measure it over"), std::string::npos)
      << text.str();
}

TEST(HostWait, AMalformedJobEndIsAProfileErrorNamingTheKey) {
  const std::string path = temporaryPath("host-wait-bad.pop");
  {
    traces::ProfileWriter w(path);
    w.setMeta("job_end_cycle", "soon");
    w.commit();
  }
  // Refused on open, by the meta rules (traces/profile_rules.hpp) ...
  try {
    traces::ProfileReader reader(path);
    FAIL() << "expected a ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("meta 'job_end_cycle' is 'soon'"), std::string::npos) << e.what();
  }
  // ... and by jobCycles itself, for a text read elsewhere.
  try {
    jobCycles("soon", {}, path);
    FAIL() << "expected a ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("job_end_cycle is 'soon'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::profiler::analysis::test_analysis_host_wait
