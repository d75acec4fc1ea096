#include "sim/cli/run_graph.hpp"

#include "model/sanitizer_stack.hpp"
#include "model/util/json_error_text.hpp"
#include "sim/engine/engine.hpp"
#include "sim/cli/simulated_memory_bound.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/host/graph_runner.hpp"
#include "sim/host/interrupt.hpp"
#include "model/ir/tile_memory_usage.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <iostream>

namespace ipusim::sim {
namespace {

// A graph's errors name the graph file, as a workload's name the workload:
// a vertex that is not connected, a value out of its range while it runs.
std::string namedByGraph(const std::string& path, const std::string& what) {
  return what.rfind(path + ":", 0) == 0 ? what : path + ": " + what;
}

// What the runner fed a graph with integer input streams (labels, token ids),
// said beside an error raised while it ran: values a smaller range refuses.
std::string integerInputNote(const ir::Executable& exe) {
  for (const ir::Stream& s : exe.streams)
    if (s.direction == ir::StreamDirection::HostToDevice && s.dtype == ir::DType::Int)
      return " (run --graph feeds every integer input stream values in [0, 9] (sim/host/graph_runner.hpp): a graph "
             "whose labels or token ids need a smaller range runs with --synthetic-data)";
  return "";
}

}  // namespace

int runGraph(const RunGraphArgs& args) {
  const auto wallStart = std::chrono::steady_clock::now();
  const ir::Executable exe = ir::loadExecutable(args.graphPath);
  // The graph's own target and options name the graph file when they are
  // wrong (a graph without "target" said only "target: expected a JSON
  // object, got null"); the flags' and the environment's name themselves.
  const model::Target target = args.target.apply([&] {
    try {
      return model::Target::fromJson(exe.target);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      throw std::invalid_argument(namedByGraph(args.graphPath, what.rfind("target", 0) == 0 ? what : "target: " + what));
    }
  }());
  const EngineOptions options = [&] {
    try {
      return resolveEngineOptions(exe.options, args.engineOptions);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      if (what.rfind("the executable's options", 0) == 0) throw std::invalid_argument(namedByGraph(args.graphPath, what));
      throw;
    }
  }();

  EngineConfig config;
  config.inputs = {args.graphPath};
  config.functional = !args.synthetic;
  config.workerThreads = args.threads;
  config.workloadName = exe.name;
  if (!args.synthetic) checkSimulatedTileBytes(exe, args.graphPath);
  std::unique_ptr<Engine> built;
  try {
    built = std::make_unique<Engine>(exe, target, options, config);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(namedByGraph(args.graphPath, e.what()));
  }
  Engine& engine = *built;
  // The graph's tiles against tile.memoryBytes, with the figure the compiler
  // checks (ir::tileMemoryUsage over the placed addresses), as Poplar refuses
  // an executable that does not fit unless debug.allowOutOfMemory.
  const ir::OutOfMemory oom = ir::findOutOfMemory(engine.system().tileMemoryUsage(), target.tile.memoryBytes);
  const std::string oomSummary =
      ir::outOfMemorySummary(oom, target.tile.memoryBytes, target.totalTiles(), "'" + args.graphPath + "'");
  if (!oomSummary.empty() && !options.allowOutOfMemory)
    throw std::invalid_argument(oomSummary + "\nSet the engine option debug.allowOutOfMemory to true to run it anyway.");
  if (!oomSummary.empty()) std::cerr << "ipusim: warning: " << oomSummary << "\n";
  const std::uint32_t entry = args.entry.empty() ? 0 : engine.entryIndex(args.entry);
  if (exe.entryPoints.empty()) throw std::invalid_argument(args.graphPath + ": the executable has no entry point");
  GraphRunner host("host", engine, entry, args.runs);
  {
    const CooperativeInterrupts stopBetweenSteps;
    sc_core::sc_start();
    model::noteBackOnMainStack();  // see model/sanitizer_stack.hpp
  }
  if (interruptRequested()) {
    std::cerr << "ipusim: interrupted after " << host.runsDone() << " of " << args.runs
              << " runs; no profile written\n";
    return kInterruptedExitCode;
  }
  try {
    host.rethrowFailure();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(namedByGraph(args.graphPath, e.what()) + integerInputNote(exe));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(namedByGraph(args.graphPath, e.what()) + integerInputNote(exe));
  }
  const std::string profile = engine.finish();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  const double seconds = target.cyclesToSeconds(host.endCycle());
  if (args.json) {
    nlohmann::json out = {{"graph", exe.name},     {"entry", exe.entryPoints[entry].name},
                          {"engine_runs", host.runsDone()}, {"cycles", host.endCycle()},
                          {"simulated_seconds", seconds},   {"wall_seconds", wall},
                          {"profile", profile}};
    if (oom.tilesOver > 0) out["out_of_memory"] = {{"tiles_over", oom.tilesOver}, {"excess_bytes", oom.excessBytes}};
    std::cout << profileJson(out) << "\n";
  } else {
    std::cout << "graph            " << exe.name << " (entry '" << exe.entryPoints[entry].name << "')\n"
              << "target           " << target.arch << ", " << target.numIpus() << " IPU x " << target.tile.tilesPerIpu
              << " tiles, " << target.clockHz / 1e9 << " GHz\n"
              << "Engine::run      " << host.runsDone() << "\n"
              << "simulated        " << host.endCycle() << " cycles = " << seconds * 1e3 << " ms\n"
              << "wall time        " << wall << " s\n"
              << "profile          " << (profile.empty() ? "(none: autoReport is off)" : util::oneLineText(profile))
              << "\n";
    if (oom.tilesOver > 0)
      std::cout << "warning          out of memory: " << oom.tilesOver << " tile(s) over the " << target.tile.memoryBytes
                << " bytes of tile memory, " << oom.excessBytes
                << " bytes over in total (ran because debug.allowOutOfMemory is true)\n";
  }
  return 0;
}

}  // namespace ipusim::sim
