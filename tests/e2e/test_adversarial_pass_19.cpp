// Found by the nineteenth adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_19 {
namespace {

// The profile's program_work.vertices (the Python reader's compute_sets())
// counted ipusim's own vertices, a per-worker vertex as one, where compile's
// `vertices` and tile_phase_cycles count the worker vertices Poplar's graph
// holds: 51 against 80 for this model. One figure now.
TEST(AdversarialPass19, ProfileCountsVerticesAsCompileDoes) {
  ScratchDir dir("vertices");
  const std::string file = replicatedMlp(dir.path(), "w.json", 1);
  const nlohmann::json compiled = jsonOf(runCommand(ipusimBinary() + " compile --json " + quote(file)));
  ASSERT_LT(compiled.value("ir_vertices", 0), compiled.value("vertices", 0)) << "no per-worker vertex to count";
  const fs::path reports = dir.path() / "reports";
  const auto r = runCommand(withReports(reports) + ipusimBinary() + " run --synthetic-data " + quote(file));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // Each compute set runs under one Execute program here.
  EXPECT_EQ(queryInt(reports / "profile.pop", "SELECT SUM(vertices) FROM program_work"),
            compiled.value("vertices", 0));
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_19
