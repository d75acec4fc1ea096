// The views beyond the timeline on real runs of the tutorial: the operations
// summary adds up to the steps' compute + exchange + sync exactly, the
// liveness report and the insights name what a user expects, and a sweep
// writes its files even when a point fails.
#include "cli_helpers.hpp"
#include "profiler/analysis/device_activity.hpp"
#include "profiler/analysis/operations_summary.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace ipusim::test::test_profile_views {
namespace {

namespace analysis = profiler::analysis;

// Writes a profile of `workload` (synthetic data, `steps` steps, everything
// captured at tile level) into `dir`; extra run arguments may follow.
void writeProfile(const ScratchDir& dir, const std::string& workload, int steps, const std::string& extra = "") {
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() + " run " + workload +
                            " --synthetic-data --steps " + std::to_string(steps) + " --engine-options " +
                            quote(options) + " " + extra);
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

nlohmann::json commandJson(const std::string& args) {
  const auto r = runCommand(ipusimBinary() + " " + args);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

TEST(OperationsSummary, AddsUpExactlyToTheStepsComputeExchangeAndSync) {
  ScratchDir dir("ops-feeds");
  writeProfile(dir, "workloads/mnist_with_feeds.json", 40);
  const traces::ProfileReader reader(dir.str());
  const auto ops = analysis::summarizeOperations(reader);
  ASSERT_TRUE(ops.byStep);
  EXPECT_EQ(ops.windows, 20);  // two captured runs of ten steps

  // The steps' windows, read here independently, measured by the report's definition.
  analysis::IntervalSet steps;
  for (const auto& track : reader.tracks())
    if (track.kind == "engine")
      reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
        if (s.category == "step") steps.add(s.ts, s.ts + s.dur);
      });
  const auto activity = analysis::measureDeviceActivity(reader, steps, 1);
  const auto all = activity.allIpus();
  std::int64_t sum = 0, compute = 0, exchange = 0, sync = 0;
  for (const auto& row : ops.rows) {
    sum += row.cycles();
    compute += row.compute;
    exchange += row.exchange;
    sync += row.sync;
  }
  EXPECT_EQ(compute, all.compute);
  EXPECT_EQ(exchange, all.exchange + all.ipuLink);
  EXPECT_EQ(sync, all.sync);
  EXPECT_EQ(sum, all.compute + all.exchange + all.ipuLink + all.sync);
  EXPECT_EQ(ops.busyCycles, sum);
  EXPECT_GT(sum, 0);

  // The top rows are the ops a user expects: the first dense layer (784 x 128
  // of the 784 x 128 + 128 x 10 weights) takes the most cycles, and by FLOPs
  // its matrix product or weight gradient leads with 32 x 784 x 128
  // multiply-accumulates per step plus the additions of its partial sums
  // (at most 10% more).
  const auto& top = ops.rows.at(0);
  EXPECT_EQ(top.layer, "dense");
  auto byFlops = ops;
  analysis::sortOperations(byFlops, analysis::OperationSort::Flops);
  const auto& mostFlops = byFlops.rows.at(0);
  EXPECT_EQ(mostFlops.layer, "dense");
  EXPECT_TRUE(mostFlops.op == "matmul" || mostFlops.op == "kernel_grad") << mostFlops.op;
  const std::int64_t macFlops = 2LL * 32 * 784 * 128 * ops.windows;
  EXPECT_GE(mostFlops.flops, macFlops);
  EXPECT_LE(mostFlops.flops, macFlops + macFlops / 10);
  EXPECT_GT(mostFlops.tiles, 0);
  EXPECT_GT(mostFlops.memoryBytes, 0);
}

TEST(OperationsSummary, ReportOpsJsonIsSortableAndNamesEveryRow) {
  ScratchDir dir("ops-json");
  writeProfile(dir, "workloads/mnist_with_feeds.json", 20);
  const auto byFlops = commandJson("report " + dir.str() + " --ops --sort flops --json");
  const auto& rows = byFlops["operations"];
  ASSERT_GT(rows.size(), 5u);
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1]["flops"], rows[i]["flops"]);
  double share = 0;
  for (const auto& r : rows) share += r["share"].get<double>();
  EXPECT_GT(share, 0.0);
  EXPECT_LE(share, 1.0 + 1e-9);
  const auto bad = runCommand(ipusimBinary() + " report " + dir.str() + " --ops --sort speed");
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.output.find("sort key 'speed': expected cycles, flops, memory or name"), std::string::npos) << bad.output;
}

TEST(Liveness, PeakStepHoldsTheMostBytesAndNamesWhatIsLive) {
  ScratchDir dir("liveness");
  writeProfile(dir, "workloads/mnist_with_feeds.json", 20);
  const auto l = commandJson("report " + dir.str() + " --liveness --json");
  ASSERT_TRUE(l["available"].get<bool>());
  EXPECT_EQ(l["entry_name"], "train");
  const auto& steps = l["steps"];
  ASSERT_GT(steps.size(), 10u);
  std::int64_t most = 0;
  for (const auto& s : steps) most = std::max<std::int64_t>(most, s["not_always_live_bytes"]);
  const std::int64_t peak = l["peak_position"];
  EXPECT_EQ(steps[peak]["not_always_live_bytes"].get<std::int64_t>(), most);
  EXPECT_EQ(l["peak_bytes"].get<std::int64_t>(), l["always_live_bytes"].get<std::int64_t>() + most);
  std::int64_t live = 0;
  for (const auto& t : l["live_at_peak"]) {
    EXPECT_LE(t["first_position"].get<std::int64_t>(), peak);
    EXPECT_GE(t["last_position"].get<std::int64_t>(), peak);
    live += t["bytes"].get<std::int64_t>();
  }
  EXPECT_EQ(live, most);
  EXPECT_GT(l["always_live_by_category"]["weights"].get<std::int64_t>(), 784 * 128 * 4);
}

std::string insightsText(const ScratchDir& dir) {
  const auto r = runCommand(ipusimBinary() + " insights " + dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return r.output;
}

TEST(Insights, WithoutFeedsTheHostIsTheBottleneckAndFeedsAreTheKnob) {
  ScratchDir dir("insights-nofeeds");
  writeProfile(dir, "workloads/mnist_without_feeds.json", 40);
  const std::string text = insightsText(dir);
  EXPECT_NE(text.find("the IPU waits for the host"), std::string::npos) << text;
  EXPECT_NE(text.find("knob: use infeed/outfeed queues (training.feeds = true) with steps_per_execution 10"),
            std::string::npos)
      << text;
}

TEST(Insights, WithFeedsTheHostIsTheBottleneckAndStepsPerExecutionIsTheKnob) {
  ScratchDir dir("insights-feeds");
  writeProfile(dir, "workloads/mnist_with_feeds.json", 40);
  const std::string text = insightsText(dir);
  EXPECT_NE(text.find("the IPU waits for the host"), std::string::npos) << text;
  // (Ten times 10, but the 40 steps are run whole at most: adversarial pass 16.)
  EXPECT_NE(text.find("knob: raise steps_per_execution (10 -> 40)"), std::string::npos) << text;
}

TEST(Insights, ADeviceBoundWorkloadDoesNotBlameTheHost) {
  // Host costs at zero and a thousand steps per run: the device is all there is.
  ScratchDir dir("insights-device");
  writeProfile(dir, "workloads/mnist_with_feeds.json", 40,
               "--steps-per-execution 40 --set host.streamServiceSeconds=0 --set host.streamStartupSeconds=0 "
               "--set host.runDispatchSeconds=0 --set host.batchPrepareSeconds=0");
  const std::string text = insightsText(dir);
  EXPECT_EQ(text.find("waits for the host"), std::string::npos) << text;
  EXPECT_NE(text.find("the device is busy"), std::string::npos) << text;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Sweep, RunsEveryPointInParallelAndReportsAFailingOne) {
  ScratchDir dir("sweep");
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() +
                            " sweep workloads/mnist_with_feeds.json --vary steps_per_execution=1,4,5 --steps 12 "
                            "--synthetic-data -j 2 -o " + quote(dir.str()));
  // 12 steps are not a multiple of 5 steps per execution: that point fails, the others run.
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("sweep: point 2 (5) failed: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("must be a multiple of training.steps_per_execution (5)"), std::string::npos) << r.output;
  const std::string csv = readFile(dir.path() / "sweep.csv");
  std::istringstream lines(csv);
  std::string header, one, four, five;
  std::getline(lines, header);
  std::getline(lines, one);
  std::getline(lines, four);
  std::getline(lines, five);
  EXPECT_EQ(header.rfind("point,steps_per_execution,status,simulated_seconds,cycles,steps,engine_runs,", 0), 0u);
  EXPECT_EQ(one.rfind("0,1,ok,", 0), 0u) << one;
  EXPECT_EQ(four.rfind("1,4,ok,", 0), 0u) << four;
  EXPECT_EQ(five.rfind("2,5,failed,", 0), 0u) << five;
  const auto json = nlohmann::json::parse(readFile(dir.path() / "sweep.json"));
  EXPECT_EQ(json["points"][0]["engine_runs"], 12);
  EXPECT_EQ(json["points"][1]["engine_runs"], 3);
  EXPECT_LT(json["points"][1]["simulated_seconds"].get<double>(), json["points"][0]["simulated_seconds"].get<double>());
  EXPECT_EQ(json["axes"][0]["passed_as"], "--workload-set training.steps_per_execution");
  const std::string png = readFile(dir.path() / "sweep.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

}  // namespace
}  // namespace ipusim::test::test_profile_views
