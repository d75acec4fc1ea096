// ipusim_profile_writer_bench: measures ProfileWriter's slice throughput
// (rows per second, commit included) and the reader's windowed query.
// Usage: ipusim_profile_writer_bench <output.pop> [slices, default 5000000]
// Built on demand: cmake --build <dir> --target ipusim_profile_writer_bench
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Process CPU time: on a machine shared with builds, wall time measures the
// load more than the writer.
double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  using namespace ipusim::traces;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <output.pop> [slices]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const long long sliceTotal = argc > 2 ? std::atoll(argv[2]) : 5'000'000;
  if (sliceTotal <= 0) {
    std::fprintf(stderr, "slices must be a positive integer, got '%s'\n", argv[2]);
    return 2;
  }
  try {
    // Rows shaped like a profiled training loop: a BSP track per IPU with
    // compute/exchange/sync slices cycling through a few hundred phases.
    std::vector<std::string> phaseNames;
    for (int i = 0; i < 300; ++i) phaseNames.push_back("layer" + std::to_string(i / 6) + "/op" + std::to_string(i));
    const std::string categories[] = {"compute", "exchange", "sync"};

    const auto start = Clock::now();
    const double cpuStart = cpuSeconds();
    std::int64_t bspTrack = 0;
    {
      ProfileWriter writer(path);
      writer.setMeta("workload", "bench");
      bspTrack = writer.addTrack(TrackRow{0, -1, "bsp", "IPU 0 BSP", 0, -1, 0});
      SliceRow row;
      row.trackId = bspTrack;
      row.runId = 0;
      std::int64_t ts = 0;
      for (long long i = 0; i < sliceTotal; ++i) {
        const int phase = static_cast<int>(i % 300);
        row.id = 0;
        row.ts = ts;
        row.dur = 100 + phase;
        row.name = phaseNames[phase];
        row.category = categories[phase % 3];
        row.programId = phase;
        row.phaseId = phase;
        row.bytes = phase % 3 == 1 ? 4096 : -1;
        writer.addSlice(row);
        ts += row.dur;
      }
      const double insertSeconds = secondsSince(start);
      const double insertCpu = cpuSeconds() - cpuStart;
      writer.commit();
      const double totalSeconds = secondsSince(start);
      const double totalCpu = cpuSeconds() - cpuStart;
      std::printf("slices: %lld\n", sliceTotal);
      std::printf("insert:        wall %6.2f s (%.2f M rows/s), cpu %6.2f s (%.2f M rows/s)\n",
                  insertSeconds, sliceTotal / insertSeconds / 1e6, insertCpu,
                  sliceTotal / insertCpu / 1e6);
      std::printf("insert+commit: wall %6.2f s (%.2f M rows/s), cpu %6.2f s (%.2f M rows/s)\n",
                  totalSeconds, sliceTotal / totalSeconds / 1e6, totalCpu,
                  sliceTotal / totalCpu / 1e6);
    }
    std::printf("file: %.1f MiB\n", std::filesystem::file_size(path) / 1048576.0);

    ProfileReader reader(path);
    const auto [first, last] = reader.timeExtent();
    const int queries = 1000;
    std::size_t returned = 0;
    const auto queryStart = Clock::now();
    for (int q = 0; q < queries; ++q) {
      const std::int64_t from = first + (last - first) / queries * q;
      returned += reader.slices(bspTrack, from, from + 100'000).size();
    }
    const double querySeconds = secondsSince(queryStart);
    std::printf("windowed query (100k cycles): %.1f us each, %.0f slices each\n",
                querySeconds / queries * 1e6, static_cast<double>(returned) / queries);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
