#include "profiler/analysis/compare.hpp"

#include "profiler/analysis/job_cycles.hpp"
#include "profiler/analysis/text_format.hpp"
#include "profiler/analysis/tile_memory_summary.hpp"
#include "profiler/analysis/throughput.hpp"

#include <algorithm>

#include <iomanip>
#include <sstream>

namespace ipusim::profiler::analysis {

double ProfileFigures::throughput() const { return stepsPerSecond(std::uint64_t(runs.taskSteps()), simulatedSeconds()); }

double ProfileFigures::exampleThroughput() const {
  return examplesPerSecond(std::uint64_t(runs.taskSteps()), std::uint64_t(std::max<std::int64_t>(0, target.examplesPerStep())),
                           simulatedSeconds());
}

ProfileFigures measureProfile(const traces::ProfileReader& reader) {
  ProfileFigures f;
  f.target = readProfileTarget(reader);
  f.target.requireClockHz();
  const auto runs = reader.runs();
  f.runs = summarizeRuns(runs, reader.path());
  f.captured = measureDeviceActivity(reader, capturedRunWindows(runs), f.target.ipusHeld);
  f.hostWait = ipuWaitingForHost(reader);
  f.totalCycles = jobCycles(reader);
  f.maxTileBytes = summarizeTileMemory(reader.tileMemory(), reader.tileMemoryPeaks(),
                                       f.target.tilesHeld(), f.target.tileMemoryBytes, 0)
                       .maxBytes;
  return f;
}

Comparison compareProfiles(const traces::ProfileReader& a, const traces::ProfileReader& b) {
  Comparison c;
  c.a = measureProfile(a);
  c.b = measureProfile(b);
  if (c.a.runs.steps > 0 && c.b.runs.steps > 0 && c.a.throughput() > 0)
    c.stepSpeedup = c.b.throughput() / c.a.throughput();
  const std::int64_t examplesA = c.a.target.examplesPerStep(), examplesB = c.b.target.examplesPerStep();
  if (c.stepSpeedup > 0 && examplesA > 0 && examplesB > 0 && examplesA != examplesB) {
    c.speedup = c.b.exampleThroughput() / c.a.exampleThroughput();
    c.speedupBasis = "examples";
  } else if (c.stepSpeedup > 0) {
    c.speedup = c.stepSpeedup;
    c.speedupBasis = "steps";
  } else if (c.b.simulatedSeconds() > 0) {
    c.speedup = c.a.simulatedSeconds() / c.b.simulatedSeconds();
    c.speedupBasis = "time";
  }
  return c;
}

nlohmann::json figuresToJson(const ProfileFigures& f) {
  const auto& a = f.captured;
  // Shares of the captured runs: none (null) when no run was captured.
  const auto share = [&](double fraction) { return a.windowCycles > 0 ? nlohmann::json(fraction) : nlohmann::json(); };
  return {
      {"profile", f.target.path},
      {"workload", f.target.workload},
      {"task", f.target.task.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.target.task)},
      {"clock_hz", f.target.clockHz},
      {"simulated_cycles", f.totalCycles},
      {"simulated_seconds", f.simulatedSeconds()},
      {"ipu_waiting_for_host", f.hostWait.share()},
      {"host_wait", hostWaitToJson(f.hostWait)},
      {"engine_runs", f.runs.runs},
      {"captured_runs", f.runs.capturedRuns},
      {"steps", f.runs.steps},
      {"steps_per_run", f.runs.stepsPerRun()},
      {"throughput_steps_per_second", f.throughput()},
      {"num_ipus", f.target.numIpus},
      {"replicas", f.target.replicas},
      {"examples_per_step", f.target.examplesPerStep()},
      {"throughput_examples_per_second", f.exampleThroughput()},
      {"captured_cycles", a.windowCycles},
      {"proportions",
       {{"compute", share(a.fraction(&PhaseCycles::compute))},
        {"exchange", share(a.fraction(&PhaseCycles::exchange))},
        {"ipu_link", share(a.fraction(&PhaseCycles::ipuLink))},
        {"collective", share(a.fraction(&PhaseCycles::collective))},
        {"sync", share(a.fraction(&PhaseCycles::sync))},
        {"stream_copy", share(a.fraction(&PhaseCycles::streamCopy))},
        {"streaming_memory", share(a.fraction(&PhaseCycles::streamingMemory))},
        {"idle", share(a.fraction(&PhaseCycles::idle))}}},
      {"stream_copy_begin_cycles", a.hostWaitCycles},
      {"host_transfer_cycles", a.hostTransferCycles},
      {"overlap_percent", share(a.overlapFraction() * 100.0)},
      {"host_io_overlap_percent", share(a.hostIoOverlapFraction() * 100.0)},
      {"bytes_to_device", a.bytesToDevice},
      {"bytes_to_host", a.bytesToHost},
      {"max_tile_bytes", f.maxTileBytes},
  };
}

nlohmann::json comparisonToJson(const Comparison& c) {
  return {{"a", figuresToJson(c.a)},
          {"b", figuresToJson(c.b)},
          {"speedup", c.speedup},
          {"speedup_basis", c.speedupBasis},
          {"step_speedup", c.stepSpeedup}};
}

namespace {

void line(std::ostream& out, const std::string& label, const std::string& a, const std::string& b) {
  out << "  " << std::left << std::setw(36) << label << std::right << std::setw(16) << a
      << std::setw(16) << b << "\n";
}

}  // namespace

void printComparison(const Comparison& c, std::ostream& out) {
  out << "A: " << c.a.target.path << "\nB: " << c.b.target.path << "\n";
  line(out, "", "A", "B");
  const auto both = [&](const std::string& label, auto&& value) {
    line(out, label, value(c.a), value(c.b));
  };
  // Training, validation-in-fit, evaluation or prediction (meta task).
  if (!c.a.target.task.empty() || !c.b.target.task.empty())
    both("task", [](const ProfileFigures& f) { return f.target.task.empty() ? std::string("-") : f.target.task; });
  both("simulated time", [](const ProfileFigures& f) { return formatSeconds(f.simulatedSeconds()); });
  both("simulated cycles", [](const ProfileFigures& f) { return std::to_string(f.totalCycles); });
  both("IPU waiting for the host", [](const ProfileFigures& f) { return formatPercent(f.hostWait.share()); });
  both("Engine::run calls", [](const ProfileFigures& f) { return std::to_string(f.runs.runs); });
  both("captured runs", [](const ProfileFigures& f) { return std::to_string(f.runs.capturedRuns); });
  both("steps", [](const ProfileFigures& f) { return std::to_string(f.runs.steps); });
  both("steps per run", [](const ProfileFigures& f) { return formatNumber(f.runs.stepsPerRun(), 2); });
  const auto known = [](std::int64_t n) { return n > 0 ? std::to_string(n) : std::string("-"); };
  both("IPUs", [&](const ProfileFigures& f) { return known(f.target.numIpus); });
  if (c.a.target.replicas > 0 || c.b.target.replicas > 0)
    both("replicas", [&](const ProfileFigures& f) { return known(f.target.replicas); });
  const bool batches = c.a.target.batchSize > 0 || c.b.target.batchSize > 0;
  if (batches)
    both("examples per step (global batch)", [&](const ProfileFigures& f) { return known(f.target.examplesPerStep()); });
  both("throughput (steps/s)", [](const ProfileFigures& f) { return formatNumber(f.throughput(), 1); });
  if (batches)
    both("throughput (examples/s)", [](const ProfileFigures& f) {
      return f.target.examplesPerStep() > 0 ? formatNumber(f.exampleThroughput(), 1) : std::string("-");
    });
  const bool severalIpus = c.a.target.numIpus > 1 || c.b.target.numIpus > 1;
  out << (severalIpus ? "  over the captured runs (share of every IPU's time, IPUs summed):\n"
                      : "  over the captured runs:\n");
  // (A profile that captured no run has no share of anything: "n/a", as its
  // host wait; its 0.0% everywhere, idle too, read as figures.)
  const auto ofCaptured = [](const ProfileFigures& f, double fraction) {
    return f.captured.windowCycles > 0 ? formatPercent(fraction) : std::string("n/a");
  };
  const auto share = [&](const std::string& label, std::int64_t PhaseCycles::*bucket) {
    both(label, [&](const ProfileFigures& f) { return ofCaptured(f, f.captured.fraction(bucket)); });
  };
  share("compute", &PhaseCycles::compute);
  share("exchange", &PhaseCycles::exchange);
  share("ipu link", &PhaseCycles::ipuLink);
  // (Not "all-reduce": a sharded optimizer state's collectives are a
  // reduce-scatter and an all-gather; SCHEMA.md's category `collective`.)
  share("collective", &PhaseCycles::collective);
  share("sync", &PhaseCycles::sync);
  share("stream copy", &PhaseCycles::streamCopy);
  if (c.a.captured.allIpus().streamingMemory > 0 || c.b.captured.allIpus().streamingMemory > 0)
    share("Streaming Memory", &PhaseCycles::streamingMemory);
  share("idle", &PhaseCycles::idle);
  both("StreamCopy Begin", [&](const ProfileFigures& f) { return ofCaptured(f, f.captured.hostWaitFraction()); });
  both("compute/IO overlap (link transfers)",
       [&](const ProfileFigures& f) { return ofCaptured(f, f.captured.overlapFraction()); });
  both("host IO hidden behind the device",
       [&](const ProfileFigures& f) { return ofCaptured(f, f.captured.hostIoOverlapFraction()); });
  both("bytes to device", [](const ProfileFigures& f) { return std::to_string(f.captured.bytesToDevice); });
  both("bytes to host", [](const ProfileFigures& f) { return std::to_string(f.captured.bytesToHost); });
  if (c.a.maxTileBytes > 0 || c.b.maxTileBytes > 0)
    both("fullest tile (peak bytes)", [](const ProfileFigures& f) {
      return f.maxTileBytes > 0 ? std::to_string(f.maxTileBytes) : std::string("-");
    });
  out << "Speedup of B over A: " << formatNumber(c.speedup, 3) << "x";
  if (c.speedupBasis == "examples")
    out << " in examples/s (" << formatNumber(c.stepSpeedup, 3) << "x in steps/s; a step of B trains "
        << formatNumber(double(c.b.target.examplesPerStep()) / double(c.a.target.examplesPerStep()), 3)
        << "x the examples of A's)";
  out << "\n";
}

}  // namespace ipusim::profiler::analysis
