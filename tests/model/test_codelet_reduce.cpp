// ReduceSum / ReduceMax along both axes, with scale and accumulate, and AddBias.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>

namespace test_codelet_reduce {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kRows = 5, kCols = 19;

std::vector<float> referenceReduce(const std::vector<float>& in, bool isMax, int axis) {
  const std::size_t outSize = axis == 0 ? kCols : kRows;
  std::vector<float> out(outSize, isMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t c = 0; c < kCols; ++c) {
      float& o = out[axis == 0 ? c : r];
      o = isMax ? std::max(o, in[r * kCols + c]) : o + in[r * kCols + c];
    }
  return out;
}

}  // namespace

TEST(ReduceCodelets, SumAlongBothAxesWithScaleAndAccumulate) {
  const auto in = pseudoRandom(kRows * kCols, 21);
  for (int axis : {0, 1}) {
    const auto sums = referenceReduce(in, false, axis);
    const auto initial = pseudoRandom(sums.size(), 22);
    std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(initial)};
    run("ReduceSum", buffers, {{"rows", kRows}, {"cols", kCols}, {"axis", axis}});
    for (std::size_t i = 0; i < sums.size(); ++i) EXPECT_NEAR(buffers[1].floats[i], sums[i], 1e-5) << axis << i;
    buffers[1].floats = initial;
    run("ReduceSum", buffers, {{"rows", kRows}, {"cols", kCols}, {"axis", axis}, {"scale", 0.5}, {"accumulate", 1}});
    for (std::size_t i = 0; i < sums.size(); ++i)
      EXPECT_NEAR(buffers[1].floats[i], initial[i] + 0.5f * sums[i], 1e-5) << axis << i;
  }
}

TEST(ReduceCodelets, ColumnsGiveTheVertexOrdersBitsExactlyForEveryWidth) {
  // Axis 0, per column: start from row 0, combine the rows in order, scale,
  // then combine with out when accumulating; widths around the kernel's 8- and
  // 4-lane blocks.
  for (const bool isMax : {false, true})
    for (std::size_t rows : {1, 2, 4, 33})
      for (std::size_t cols : {1, 2, 3, 4, 6, 8, 12, 13, 21})
        for (const bool accumulate : {false, true}) {
          const auto in = pseudoRandom(rows * cols, 31), initial = pseudoRandom(cols, 32);
          const float scale = isMax ? 1.0f : 0.375f;
          std::vector<float> expected(cols);
          for (std::size_t c = 0; c < cols; ++c) {
            float acc = in[c];
            for (std::size_t r = 1; r < rows; ++r)
              acc = isMax ? (acc > in[r * cols + c] ? acc : in[r * cols + c]) : acc + in[r * cols + c];
            const float value = scale * acc;
            expected[c] = !accumulate ? value : isMax ? (initial[c] > value ? initial[c] : value) : initial[c] + value;
          }
          std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(initial)};
          std::map<std::string, double> params = {{"rows", rows}, {"cols", cols}, {"axis", 0}, {"accumulate", accumulate}};
          if (!isMax) params["scale"] = scale;
          run(isMax ? "ReduceMax" : "ReduceSum", buffers, params);
          for (std::size_t c = 0; c < cols; ++c)
            ASSERT_EQ(buffers[1].floats[c], expected[c])
                << (isMax ? "max" : "sum") << " rows=" << rows << " cols=" << cols << " acc=" << accumulate << " at " << c;
        }
}

TEST(ReduceCodelets, MaxAlongBothAxesWithAccumulate) {
  const auto in = pseudoRandom(kRows * kCols, 23);
  for (int axis : {0, 1}) {
    const auto maxima = referenceReduce(in, true, axis);
    std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(std::vector<float>(maxima.size(), 42.0f))};
    run("ReduceMax", buffers, {{"rows", kRows}, {"cols", kCols}, {"axis", axis}});
    EXPECT_EQ(buffers[1].floats, maxima) << axis;
    // accumulate: max with what out holds (0.5 beats some maxima, not others)
    std::vector<float> half(maxima.size(), 0.5f);
    buffers[1].floats = half;
    run("ReduceMax", buffers, {{"rows", kRows}, {"cols", kCols}, {"axis", axis}, {"accumulate", 1}});
    for (std::size_t i = 0; i < maxima.size(); ++i) EXPECT_EQ(buffers[1].floats[i], std::max(0.5f, maxima[i]));
  }
}

TEST(ReduceCodelets, SingleRowAndAllNegative) {
  std::vector<Buffer> buffers = {Buffer::of({-3, -1, -2}), Buffer::of({0, 0, 0})};
  run("ReduceMax", buffers, {{"rows", 1}, {"cols", 3}, {"axis", 0}});
  EXPECT_EQ(buffers[1].floats, (std::vector<float>{-3, -1, -2}));
  std::vector<Buffer> rowMax = {Buffer::of({-3, -1, -2}), Buffer::of({0})};
  run("ReduceMax", rowMax, {{"rows", 1}, {"cols", 3}, {"axis", 1}});
  EXPECT_EQ(rowMax[1].floats, (std::vector<float>{-1}));
}

TEST(ReduceCodelets, ValidationNamesAxisAndOutputSize) {
  const auto& sum = CodeletRegistry::instance().get("ReduceSum");
  try {
    sum.validate(shapeOf(sum, {12, 4}, {{"rows", 3}, {"cols", 4}, {"axis", 1}}));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'out' has 4 elements, expected 3 (axis 1: one value per row)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sum.validate(shapeOf(sum, {12, 4}, {{"rows", 3}, {"cols", 4}, {"axis", 2}})), std::invalid_argument);
  EXPECT_NO_THROW(sum.validate(shapeOf(sum, {12, 4}, {{"rows", 3}, {"cols", 4}, {"axis", 0}})));
  EXPECT_THROW(orderedParams(CodeletRegistry::instance().get("ReduceMax"), {{"rows", 1}, {"cols", 1}, {"axis", 0},
                                                                           {"scale", 2}}),
               std::invalid_argument);  // ReduceMax takes no scale
}

TEST(ReduceCodelets, CyclesPerAxis) {
  // axis 1 (popops ALL_REGIONS_CONTINUOUS): 17 + rows * (12 + cols / 2)
  EXPECT_EQ(cyclesOf("ReduceSum", {100 * 10, 100}, {{"rows", 100}, {"cols", 10}, {"axis", 1}}),
            cyc::kContinuousReduceOverhead + 100 * (cyc::kContinuousReduceRowOverhead + 5));
  EXPECT_EQ(cyclesOf("ReduceSum", {100 * 10, 100}, {{"rows", 100}, {"cols", 10}, {"axis", 1}}), 17u + 100u * 17u);
  // ... an odd row length adds the tail; accumulating adds the update.
  EXPECT_EQ(cyclesOf("ReduceSum", {3 * 11, 3}, {{"rows", 3}, {"cols", 11}, {"axis", 1}, {"accumulate", 1}}),
            cyc::kContinuousReduceOverhead + 3 * (cyc::kContinuousReduceRowOverhead + 5) +
                cyc::kContinuousReduceOddTail + cyc::kReduceUpdateCycles);
  // axis 0 (popops STRIDED_REDUCE): 11 odd columns go one at a time (gcd(2, 11) = 1):
  // 16 + 11 * (6 + MAX completion + store + rows - 1)
  EXPECT_EQ(cyclesOf("ReduceMax", {16 * 11, 11}, {{"rows", 16}, {"cols", 11}, {"axis", 0}}),
            cyc::kStridedReduceOverhead + 11 * (cyc::kStridedReduceGroupOverhead + cyc::kStridedReduceMaxCompletion +
                                                cyc::kStridedReduceStore + 15));
  // ... 12 even columns in pairs, the sum with its own completion and the update store.
  EXPECT_EQ(cyclesOf("ReduceSum", {16 * 12, 12}, {{"rows", 16}, {"cols", 12}, {"axis", 0}, {"accumulate", 1}}),
            cyc::kStridedReduceOverhead + 6 * (cyc::kStridedReduceGroupOverhead + cyc::kStridedReduceAddCompletion +
                                               cyc::kStridedReduceUpdateStore + 15));
}

TEST(AddBiasCodelet, AddsBiasToEveryRow) {
  const auto in = pseudoRandom(kRows * kCols, 31), bias = pseudoRandom(kCols, 32);
  std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(bias), Buffer::of(std::vector<float>(in.size()))};
  run("AddBias", buffers, {{"rows", kRows}, {"cols", kCols}});
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t c = 0; c < kCols; ++c)
      EXPECT_FLOAT_EQ(buffers[2].floats[r * kCols + c], in[r * kCols + c] + bias[c]);
}

TEST(AddBiasCodelet, ValidationAndCycles) {
  const auto& addBias = CodeletRegistry::instance().get("AddBias");
  try {
    addBias.validate(shapeOf(addBias, {6, 2, 6}, {{"rows", 2}, {"cols", 3}}));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'bias' has 2 elements, expected 3 (cols)"), std::string::npos)
        << e.what();
  }
  // 15 + rows * (7 + ceil(cols / 2) * 2): one worker of BroadcastVectorOuterByRow ADD
  EXPECT_EQ(cyclesOf("AddBias", {32 * 128, 128, 32 * 128}, {{"rows", 32}, {"cols", 128}}),
            cyc::kBroadcastVertexOverhead +
                32 * (cyc::kBroadcastRowOverhead + 64 * cyc::kBroadcastAddCyclesPerVector));
  EXPECT_EQ(cyclesOf("AddBias", {32 * 128, 128, 32 * 128}, {{"rows", 32}, {"cols", 128}}), 15u + 32u * 135u);
}

}  // namespace test_codelet_reduce
