// Maximum, Minimum and their gradients (model/codelets/extremum.cpp): values
// against scalar references, ties routed to the first operand, and exact
// cycles from popops' BinaryOp2D frame.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace test_codelet_extremum {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kN = 19;

TEST(ExtremumCodelets, MaximumAndMinimumMatchReference) {
  auto a = pseudoRandom(kN, 21), b = pseudoRandom(kN, 22);
  b[3] = a[3];  // a tie
  for (const char* name : {"Maximum", "Minimum"}) {
    std::vector<Buffer> buf = {Buffer::of(a), Buffer::of(b), Buffer::of(std::vector<float>(kN, 7.0f))};
    run(name, buf);
    for (std::size_t i = 0; i < kN; ++i)
      EXPECT_EQ(buf[2].floats[i], std::string(name) == "Maximum" ? std::max(a[i], b[i]) : std::min(a[i], b[i])) << name << i;
  }
}

// Each element's gradient reaches exactly one operand: the winner, in0 on a tie.
TEST(ExtremumCodelets, GradientsGoToTheWinnerAndTiesToTheFirst) {
  auto a = pseudoRandom(kN, 23), b = pseudoRandom(kN, 24), g = pseudoRandom(kN, 25);
  b[5] = a[5];
  for (const char* name : {"MaximumGrad", "MinimumGrad"}) {
    const bool max = std::string(name) == "MaximumGrad";
    std::vector<float> got[2];
    for (int operand : {0, 1}) {
      std::vector<Buffer> buf = {Buffer::of(a), Buffer::of(b), Buffer::of(g), Buffer::of(std::vector<float>(kN, 7.0f))};
      run(name, buf, {{"operand", operand}});
      got[operand] = buf[3].floats;
    }
    for (std::size_t i = 0; i < kN; ++i) {
      const bool firstWins = max ? a[i] >= b[i] : a[i] <= b[i];
      EXPECT_EQ(got[0][i], firstWins ? g[i] : 0.0f) << name << " " << i;
      EXPECT_EQ(got[1][i], firstWins ? 0.0f : g[i]) << name << " " << i;
    }
    EXPECT_EQ(got[0][5], g[5]) << name << ": the tie";
  }
}

TEST(ExtremumCodelets, Cycles) {
  // 9 floats: 5 vectors of 2; 9 halves: 3 vectors of 4.
  EXPECT_EQ(cyclesOf("Maximum", {9, 9, 9}), cyc::kBinaryOpVertexOverhead + 5 * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyclesOf("Minimum<half>", {9, 9, 9}), cyc::kBinaryOpVertexOverhead + 3 * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyclesOf("MaximumGrad", {9, 9, 9, 9}, {{"operand", 1}}),
            cyc::kBinaryOpVertexOverhead + 5 * 2 * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyc::kAddSubMulCyclesPerVector, 3u);  // MAXIMUM FLOAT {1, true} + 2 load/store, as ADD
}

}  // namespace

}  // namespace test_codelet_extremum
