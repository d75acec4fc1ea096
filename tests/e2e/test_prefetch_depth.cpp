// Prefetching is the mechanism the tutorial is about: the dataset is a
// producer with its own time per batch, filling the infeed's prefetch buffer
// (training.infeed.prefetch_depth) while the device works and while the host
// dispatches the next Engine::run; the device waits only when the buffer is
// empty. So a deeper buffer hides a dataset that is slower than the device
// step (it banks batches during the gaps between runs), and changes nothing
// when the dataset is faster than the device step (the buffer never runs dry).
//
// Timing only (--synthetic-data). The host's fitted costs are set to zero
// except the dispatch, so the scenario is exactly: device step P (measured),
// a gap of 20 P between runs of 10 steps, a dataset of B per batch.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace ipusim::test::test_prefetch_depth {
namespace {

class PrefetchDepth : public ::testing::Test {
 protected:
  ScratchDir dir{"prefetch"};

  // The tutorial's workload with another prefetch depth, written to the scratch directory.
  std::string workloadWithDepth(int depth) {
    std::ifstream in(sourcePath("workloads/mnist_with_feeds.json"));
    nlohmann::json w = nlohmann::json::parse(in);
    w["training"]["infeed"]["prefetch_depth"] = depth;
    const std::string path = (dir.path() / ("depth" + std::to_string(depth) + ".json")).string();
    std::ofstream(path) << w.dump(2);
    return path;
  }

  nlohmann::json run(int depth, double dispatchSeconds, double batchSeconds) {
    std::ostringstream args;
    args << " run " << quote(workloadWithDepth(depth)) << " --synthetic-data --steps 100 --steps-per-execution 10"
         << " --set host.streamServiceSeconds=0 --set host.streamStartupSeconds=0"
         << " --set host.outfeedDequeueSeconds=0"
         << " --set host.runDispatchSeconds=" << dispatchSeconds << " --set host.batchPrepareSeconds=" << batchSeconds
         << " --json";
    const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() + args.str());
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return nlohmann::json::parse(r.output.substr(r.output.find('{')));
  }

  // The device step P in seconds: one steady-state step's cycles, measured by `run`.
  double deviceStepSeconds() {
    const auto probe = run(3, 0, 0);
    const double cycles = probe["step_cycles"]["total"].get<double>();
    const double seconds = probe["simulated_seconds"].get<double>() / probe["cycles"].get<double>();
    EXPECT_GT(cycles, 0);
    return cycles * seconds;
  }
};

TEST_F(PrefetchDepth, HidesADatasetSlowerThanTheDeviceStep) {
  const double step = deviceStepSeconds();
  // B = 2 P: slower than the device, but the 20 P gap before each run of 10
  // steps lets the dataset get ahead, as far as the buffer allows.
  const double one = run(1, 20 * step, 2 * step)["cycles"].get<double>();
  const double three = run(3, 20 * step, 2 * step)["cycles"].get<double>();
  const double ten = run(10, 20 * step, 2 * step)["cycles"].get<double>();
  EXPECT_GT(one, three) << "a deeper prefetch buffer must hide more of a slow dataset";
  EXPECT_GT(three, ten);
  // Depth 10 banks a whole run's batches during the gap (20 P / 2 P = 10):
  // the dataset is then hidden as if it cost nothing.
  const double free = run(10, 20 * step, 0)["cycles"].get<double>();
  EXPECT_NEAR(ten, free, 1e-3 * free);
}

TEST_F(PrefetchDepth, ChangesNothingWhenTheDatasetIsFasterThanTheDeviceStep) {
  const double step = deviceStepSeconds();
  const auto one = run(1, 20 * step, 0.5 * step);
  const auto three = run(3, 20 * step, 0.5 * step);
  EXPECT_EQ(one["cycles"], three["cycles"]);
  // ... and the dataset is then hidden completely: the same time as no dataset cost at all.
  EXPECT_EQ(one["cycles"], run(1, 20 * step, 0)["cycles"]);
}

}  // namespace
}  // namespace ipusim::test::test_prefetch_depth
