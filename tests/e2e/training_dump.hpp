#pragma once
// Workloads written into a scratch directory and trained by
// bench/torch's ipusim-torch-dump, one process per run (SystemC allows one
// simulation per process): the tests comparing two runs bit for bit
// (recomputation, offloading, sharding) read its losses and final weights.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace ipusim::test {

inline std::string writeWorkload(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  const std::string file = (dir.path() / (name + ".json")).string();
  std::ofstream(file) << workload.dump();
  return file;
}

// Trains `workload` for 8 steps; its dump (bench/torch/dump_training.cpp).
inline nlohmann::json trainingDump(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  const std::string file = writeWorkload(dir, name, workload), out = (dir.path() / (name + ".out.json")).string();
  const auto run = runCommand(std::string(binaryDir()) + "/bin/ipusim-torch-dump " + quote(file) + " 8 " + quote(out));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  std::ifstream in(out);
  return nlohmann::json::parse(in);
}

}  // namespace ipusim::test
