#pragma once
// The steps of `ipusim sweep` that one process and the ranks of mpirun share
// (sweep_command.cpp): the arguments, the set-up (the plan, the inputs, the
// engine options and the output directory made ready) and the writing of
// sweep.csv, sweep.json and sweep.png from the results.
#include "sim/cli/sweep_plan.hpp"
#include "sim/cli/sweep_results.hpp"
#include "sim/options/engine_options.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ipusim::sim {

struct SweepArgs {
  std::string workload;
  std::vector<std::string> vary;
  std::vector<std::string> sets;
  bool synthetic = false;
  std::uint64_t steps = 0;
  std::string engineOptions;
  unsigned jobs = 0;  // 0: the default (the cores, over the ranks on this host under mpirun)
  std::string output = "sweep";
  bool plot = true;
};

struct SweepSetUp {
  SweepPlan plan;
  std::vector<std::string> inputs;  // the files the sweep reads and never writes
  EngineOptions options;
  std::filesystem::path dir, pointsDir;
};

// The plan and its inputs; with `prepare`, the output directory checked and
// made, its points/ emptied of an earlier sweep's files (the one-process
// sweep and rank 0 prepare; the other ranks only plan). Throws naming the
// file, flag or value at fault.
SweepSetUp setUpSweep(const SweepArgs& args, bool prepare);

// "sweep: N points of W, ..." and where the reports go, on stderr.
void announceSweep(const SweepArgs& args, const SweepSetUp& s, const std::string& how);

// Writes sweep.png (gnuplot), sweep.csv and sweep.json and prints the
// summary; returns the exit code (1 when a point failed or the plot could not be drawn).
int writeSweepOutputs(const SweepArgs& args, const SweepSetUp& s, const std::vector<SweepResult>& results);

}  // namespace ipusim::sim
