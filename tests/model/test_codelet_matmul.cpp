// MatMulPartial: every transpose case and accumulate against a naive
// triple loop, validation messages, and exact AMP cycles; the whole-product
// kernel's k slices against the tile program's order.
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/matmul_kernel.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace test_codelet_matmul {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

// Reference: out (+)= op(a) . op(b) with op(a)(i, p), op(b)(p, j) read through
// the stored layouts, summed in double.
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b, std::vector<float> out,
                             std::size_t m, std::size_t k, std::size_t n, bool ta, bool tb, bool accumulate) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double sum = accumulate ? out[i * n + j] : 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        const float aip = ta ? a[p * m + i] : a[i * k + p];
        const float bpj = tb ? b[j * k + p] : b[p * n + j];
        sum += double(aip) * double(bpj);
      }
      out[i * n + j] = float(sum);
    }
  return out;
}

void checkCase(std::size_t m, std::size_t k, std::size_t n, bool ta, bool tb, bool accumulate) {
  const auto a = pseudoRandom(m * k, 11), b = pseudoRandom(k * n, 12), initial = pseudoRandom(m * n, 13);
  std::vector<Buffer> buffers = {Buffer::of(a), Buffer::of(b), Buffer::of(initial)};
  run("MatMulPartial", buffers,
      {{"m", m}, {"k", k}, {"n", n}, {"transposeA", ta}, {"transposeB", tb}, {"accumulate", accumulate}});
  const auto expected = reference(a, b, initial, m, k, n, ta, tb, accumulate);
  for (std::size_t i = 0; i < m * n; ++i)
    ASSERT_NEAR(buffers[2].floats[i], expected[i], 1e-5 * (1 + std::sqrt(double(k))))
        << "m=" << m << " k=" << k << " n=" << n << " ta=" << ta << " tb=" << tb << " acc=" << accumulate
        << " at " << i;
}

// The vertex's own order, in float: per output, p in groups of 4 summed left
// to right and added to the running value, then the remaining p one by one
// (mat_mul_partial.cpp states it). The kernel must give these bits exactly,
// whatever its blocking and lane width.
std::vector<float> inVertexOrder(const std::vector<float>& a, const std::vector<float>& b, std::vector<float> out,
                                 std::size_t m, std::size_t k, std::size_t n, bool ta, bool tb, bool accumulate) {
  auto A = [&](std::size_t i, std::size_t p) { return ta ? a[p * m + i] : a[i * k + p]; };
  auto B = [&](std::size_t p, std::size_t j) { return tb ? b[j * k + p] : b[p * n + j]; };
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float acc = accumulate ? out[i * n + j] : 0.0f;
      if (k == 1) {
        out[i * n + j] = acc + A(i, 0) * B(0, j);
        continue;
      }
      std::size_t p = 0;
      for (; p + 4 <= k; p += 4) {
        float group = A(i, p) * B(p, j) + A(i, p + 1) * B(p + 1, j);
        group = group + A(i, p + 2) * B(p + 2, j);
        group = group + A(i, p + 3) * B(p + 3, j);
        acc = acc + group;
      }
      for (; p < k; ++p) acc = acc + A(i, p) * B(p, j);
      out[i * n + j] = acc;
    }
  return out;
}

}  // namespace

TEST(MatMulPartial, EveryBlockingEdgeGivesTheVertexOrdersBitsExactly) {
  // m around the 4-row blocks, n around the 8- and 4-lane blocks, k around
  // the groups of 4; the tutorial's tile shapes among them.
  for (std::size_t m : {1, 3, 4, 5, 11, 28})
    for (std::size_t n : {1, 2, 3, 4, 5, 8, 12, 13, 16, 21, 37})
      for (std::size_t k : {1, 2, 4, 7, 8, 24})
        for (bool ta : {false, true})
          for (bool tb : {false, true})
            for (bool accumulate : {false, true}) {
              const auto a = pseudoRandom(m * k, 21), b = pseudoRandom(k * n, 22), initial = pseudoRandom(m * n, 23);
              std::vector<Buffer> buffers = {Buffer::of(a), Buffer::of(b), Buffer::of(initial)};
              run("MatMulPartial", buffers,
                  {{"m", m}, {"k", k}, {"n", n}, {"transposeA", ta}, {"transposeB", tb}, {"accumulate", accumulate}});
              const auto expected = inVertexOrder(a, b, initial, m, k, n, ta, tb, accumulate);
              for (std::size_t i = 0; i < m * n; ++i)
                ASSERT_EQ(buffers[2].floats[i], expected[i]) << "m=" << m << " k=" << k << " n=" << n << " ta=" << ta
                                                             << " tb=" << tb << " acc=" << accumulate << " at " << i;
            }
}

TEST(MatMulKernel, KSlicesAreSummedApartThenAddedInSliceOrder) {
  // The whole-product kernel: each k slice in the vertex's order from +0
  // (one tile's partial), the slices' sums then added in turn (ReduceSum over
  // the partials), with b and out read and written through row strides (the
  // fused product's panels). Bit for bit, and nothing outside out's rows.
  for (std::size_t m : {1, 5, 9})
    for (std::size_t n : {3, 16, 37})
      for (std::size_t k : {1, 7, 24, 50})
        for (std::size_t kSlice : {1, 3, 4, 24, 64}) {
          const std::size_t bStride = n + 3, outStride = n + 2;
          const auto a = pseudoRandom(m * k, 31), b = pseudoRandom(k * bStride, 32);
          std::vector<float> out(m * outStride, -7.0f);
          MatMulArgs x;
          x.a = a.data(), x.aRowStride = k, x.aColStride = 1;
          x.b = b.data(), x.bStride = bStride;
          x.out = out.data(), x.outStride = outStride;
          x.m = m, x.k = k, x.n = n, x.kSlice = kSlice;
          multiplyAccumulate(x);
          std::vector<float> expected(m * n, 0.0f);
          for (std::size_t k0 = 0; k0 < k; k0 += kSlice) {
            const std::size_t kb = std::min(k, k0 + kSlice) - k0;
            std::vector<float> aSlice(m * kb), bSlice(kb * n);
            for (std::size_t i = 0; i < m; ++i)
              for (std::size_t p = 0; p < kb; ++p) aSlice[i * kb + p] = a[i * k + k0 + p];
            for (std::size_t p = 0; p < kb; ++p)
              for (std::size_t j = 0; j < n; ++j) bSlice[p * n + j] = b[(k0 + p) * bStride + j];
            const auto partial = inVertexOrder(aSlice, bSlice, std::vector<float>(m * n, 0.0f), m, kb, n, false,
                                               false, false);
            for (std::size_t e = 0; e < m * n; ++e) expected[e] = k0 == 0 ? partial[e] : expected[e] + partial[e];
          }
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < outStride; ++j)
              ASSERT_EQ(out[i * outStride + j], j < n ? expected[i * n + j] : -7.0f)
                  << "m=" << m << " n=" << n << " k=" << k << " kSlice=" << kSlice << " at " << i << "," << j;
        }
}

TEST(MatMulPartial, AllTransposeAndAccumulateCasesMatchReference) {
  // Odd sizes exercise the k-unroll remainder and the vector-strip remainder.
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool accumulate : {false, true}) {
        checkCase(5, 7, 19, ta, tb, accumulate);
        checkCase(1, 1, 1, ta, tb, accumulate);
        checkCase(33, 64, 10, ta, tb, accumulate);
      }
}

TEST(MatMulPartial, SmallProductByHand) {
  // [1 2; 3 4] . [5 6; 7 8] = [19 22; 43 50]
  std::vector<Buffer> buffers = {Buffer::of({1, 2, 3, 4}), Buffer::of({5, 6, 7, 8}), Buffer::of({100, 100, 100, 100})};
  run("MatMulPartial", buffers, {{"m", 2}, {"k", 2}, {"n", 2}});
  EXPECT_EQ(buffers[2].floats, (std::vector<float>{19, 22, 43, 50}));
  run("MatMulPartial", buffers, {{"m", 2}, {"k", 2}, {"n", 2}, {"accumulate", 1}});
  EXPECT_EQ(buffers[2].floats, (std::vector<float>{38, 44, 86, 100}));
  // a stored transposed: [1 3; 2 4] is [1 2; 3 4]^T
  std::vector<Buffer> transposed = {Buffer::of({1, 3, 2, 4}), Buffer::of({5, 7, 6, 8}), Buffer::of({0, 0, 0, 0})};
  run("MatMulPartial", transposed, {{"m", 2}, {"k", 2}, {"n", 2}, {"transposeA", 1}, {"transposeB", 1}});
  EXPECT_EQ(transposed[2].floats, (std::vector<float>{19, 22, 43, 50}));
}

TEST(MatMulPartial, ValidationNamesFieldAndExpectedShape) {
  const auto& mm = CodeletRegistry::instance().get("MatMulPartial");
  auto messageOf = [&](const VertexShape& shape) -> std::string {
    try {
      mm.validate(shape);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string message = messageOf(shapeOf(mm, {6, 12, 12}, {{"m", 3}, {"k", 4}, {"n", 3}}));
  EXPECT_NE(message.find("codelet MatMulPartial"), std::string::npos) << message;
  EXPECT_NE(message.find("field 'a' has 6 elements, expected 12 (m x k = 3 x 4)"), std::string::npos) << message;
  message = messageOf(shapeOf(mm, {12, 12, 12}, {{"m", 3}, {"k", 4}, {"n", 3}, {"transposeB", 1}}));
  EXPECT_NE(message.find("field 'out' has 12 elements, expected 9 (m x n = 3 x 3)"), std::string::npos) << message;
  message = messageOf(shapeOf(mm, {12, 12, 9}, {{"m", 3}, {"k", 4}, {"n", 3}, {"transposeA", 2}}));
  EXPECT_NE(message.find("param 'transposeA' = 2, expected 0 or 1"), std::string::npos) << message;
  message = messageOf(shapeOf(mm, {0, 0, 0}, {{"m", 0}, {"k", 4}, {"n", 3}}));
  EXPECT_NE(message.find("param 'm' = 0, expected a whole number >= 1"), std::string::npos) << message;
  EXPECT_NE(messageOf(shapeOf(mm, {6, 6, 4}, {{"m", 2}, {"k", 3.5}, {"n", 2}})).find("param 'k' = 3.5"),
            std::string::npos);
  EXPECT_EQ(messageOf(shapeOf(mm, {12, 12, 9}, {{"m", 3}, {"k", 4}, {"n", 3}, {"transposeA", 1}})), "(no error)");
}

// Supervisor cycles: poplin's ConvPartial1x1Out estimate (cycle_model.hpp),
// worked through by hand from the named constants.
TEST(MatMulPartial, CyclesFollowPoplinsConvPartial1x1Estimate) {
  using ipusim::ir::Cycles;
  // 16 x 784 x 128 on Mk2 (16 float conv units): 784 / 8 = 98 input groups,
  // 128 / 16 = 8 output groups; 16 field elements over 6 workers: 3,3,3,3,2,2.
  const Cycles zero3 = cyc::kAmpWorkerManyElementsCycles + cyc::kAmpZeroingCycles + 8 * 3;  // 72
  const Cycles zero2 = cyc::kAmpWorkerManyElementsCycles + cyc::kAmpZeroingCycles + 8 * 2;  // 64
  const Cycles firstPass = std::max(6 * zero3, 6 * zero2 + cyc::kAmpWorkerTagCycles);      // 432
  const Cycles laterPass = 6 * cyc::kAmpWorkerManyElementsCycles + cyc::kAmpWorkerTagCycles;  // 290: all workers equal
  // Float activations always take PopLibs' common code path (float partials):
  // +1 per conv group, -1 per further input group and per first-pass output group.
  const Cycles common = cyc::kAmpCommonPathCycles;
  const Cycles outer =
      cyc::kAmpSupervisorOverhead + cyc::kAmpConvGroupOverhead + common + cyc::kAmpFirstPassInGroupOverhead;
  const Cycles firstPassOutGroup = cyc::kAmpFirstPassOutGroupOverhead - common;
  const Cycles later = 97 * (cyc::kAmpInGroupOverhead - common + 8 * (cyc::kAmpOutGroupOverhead + cyc::kAmpWeightLoadCycles + laterPass));
  const std::map<std::string, double> base = {{"m", 16}, {"k", 784}, {"n", 128}};
  EXPECT_EQ(cyclesOf("MatMulPartial", {16 * 784, 784 * 128, 16 * 128}, base),
            outer + later + 8 * (firstPassOutGroup + cyc::kAmpWeightLoadCycles + firstPass));
  EXPECT_EQ(cyclesOf("MatMulPartial", {16 * 784, 784 * 128, 16 * 128}, base), 274713u);  // = 74 + 270727 + 3912
  auto accumulate = base;
  accumulate["accumulate"] = 1;  // no zeroing pass: the first pass costs what the later ones do
  EXPECT_EQ(cyclesOf("MatMulPartial", {16 * 784, 784 * 128, 16 * 128}, accumulate),
            outer + later + 8 * (firstPassOutGroup + cyc::kAmpWeightLoadCycles + laterPass));
  // 3 x 5 x 7: one input and one output group; 3 workers of one element, the
  // other 3 idle (the fastest is 0, so the tag adds nothing).
  const Cycles oneZeroed = 6 * (cyc::kAmpWorkerOneElementCycles + cyc::kAmpZeroingCycles + 8);  // 342
  EXPECT_EQ(cyclesOf("MatMulPartial", {15, 35, 21}, {{"m", 3}, {"k", 5}, {"n", 7}, {"transposeB", 1}}),
            outer + firstPassOutGroup + cyc::kAmpWeightLoadCycles + oneZeroed);
  // The AMP comes from the target: Mk1-style 8 float conv units (8 MACs per cycle).
  Target slow;
  slow.tile.ampFloatMacsPerCycle = 8;
  EXPECT_EQ(cyclesOf("MatMulPartial", {15, 35, 21}, {{"m", 3}, {"k", 5}, {"n", 7}, {"accumulate", 1}}, slow),
            outer + firstPassOutGroup + cyc::kAmpWeightLoadCycles + 6 * cyc::kAmpWorkerOneElementCycles);
  // 16 output channels need two groups of 8 conv units on Mk1, one of 16 on Mk2.
  const std::map<std::string, double> sixteen = {{"m", 6}, {"k", 8}, {"n", 16}, {"accumulate", 1}};
  const Cycles perGroup = firstPassOutGroup + cyc::kAmpWeightLoadCycles +
                          6 * cyc::kAmpWorkerOneElementCycles + cyc::kAmpWorkerTagCycles;
  EXPECT_EQ(cyclesOf("MatMulPartial", {48, 128, 96}, sixteen, slow), outer + 2 * perGroup);
  EXPECT_EQ(cyclesOf("MatMulPartial", {48, 128, 96}, sixteen), outer + perGroup);
  slow.tile.ampFloatMacsPerCycle = 0;
  EXPECT_THROW(cyclesOf("MatMulPartial", {15, 35, 21}, {{"m", 3}, {"k", 5}, {"n", 7}}, slow), std::invalid_argument);
}

}  // namespace test_codelet_matmul
