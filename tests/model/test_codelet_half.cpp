// Half-precision codelets (typed names "X<half>", "MatMulPartial<half,float>",
// ...): compute() is the float computation with half inputs widened exactly
// and every half store rounded to nearest even; cycles() counts 4 halves per
// 64-bit vector and the AMP's half rate. Expected cycles come from the named
// constants of cycle_model.hpp, as in the float codelet tests.
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/numeric/half.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace test_codelet_half {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;
namespace num = ipusim::model::numeric;
using ipusim::ir::DType;

namespace {

constexpr std::size_t kN = 19;  // strips of 8 plus a remainder, and 19 = 4 * 4 + 3 halves

std::vector<float> halfRounded(std::vector<float> v) {
  for (auto& x : v) x = num::roundToHalf(x);
  return v;
}

void expectHalvesEqual(const Buffer& out, const std::vector<float>& expectedBeforeRounding, const std::string& what) {
  ASSERT_EQ(out.halves.size(), expectedBeforeRounding.size()) << what;
  for (std::size_t i = 0; i < out.halves.size(); ++i)
    EXPECT_EQ(out.halves[i], num::floatToHalf(expectedBeforeRounding[i])) << what << " element " << i;
}

}  // namespace

TEST(HalfCodelets, TypedNamesFollowPopLibs) {
  EXPECT_EQ(typedCodeletName("Relu", {DType::Float}), "Relu");
  EXPECT_EQ(typedCodeletName("MatMulPartial", {DType::Float, DType::Float}), "MatMulPartial");
  EXPECT_EQ(typedCodeletName("Relu", {DType::Half}), "Relu<half>");
  EXPECT_EQ(typedCodeletName("MatMulPartial", {DType::Half, DType::Float}), "MatMulPartial<half,float>");
  const auto& registry = CodeletRegistry::instance();
  for (const char* name : {"Add<half>", "Sub<half>", "Mul<half>", "Div<half>", "Relu<half>", "Exp<half>", "Log<half>",
                           "Neg<half>", "Square<half>", "ReluGrad<half>", "AddBias<half>", "ScaledAdd<half>",
                           "ReduceSum<half,float>", "ReduceSum<half,half>", "ReduceSum<float,half>", "MatMulPartial<half,float>",
                           "MatMulPartial<half,half>", "SoftmaxCrossEntropy<half>", "SoftmaxCrossEntropyGrad<half>",
                           "Cast<float,half>", "Cast<half,float>", "Copy<half>", "Fill<half>"})
    EXPECT_TRUE(registry.has(name)) << name;
  // Field dtypes are what a graph must connect.
  const auto fields = registry.get("MatMulPartial<half,float>").fields();
  EXPECT_EQ(fields[0].dtype, DType::Half);
  EXPECT_EQ(fields[1].dtype, DType::Half);
  EXPECT_EQ(fields[2].dtype, DType::Float);
  EXPECT_EQ(registry.get("SoftmaxCrossEntropy<half>").fields()[2].dtype, DType::Float);  // probs stay float
  EXPECT_EQ(registry.get("SoftmaxCrossEntropyGrad<half>").fields()[2].dtype, DType::Half);
  EXPECT_TRUE(registry.get("MatMulPartial<half,half>").isSupervisor());
}

TEST(HalfCodelets, BinaryAndUnaryRoundEveryStore) {
  const auto a = halfRounded(pseudoRandom(kN, 1)), b = halfRounded(pseudoRandom(kN, 2));
  const std::map<std::string, std::function<float(float, float)>> binary = {
      {"Add<half>", [](float x, float y) { return x + y; }},
      {"Sub<half>", [](float x, float y) { return x - y; }},
      {"Mul<half>", [](float x, float y) { return x * y; }},
      {"Div<half>", [](float x, float y) { return x / y; }}};
  for (const auto& [name, op] : binary) {
    std::vector<Buffer> buffers = {Buffer::ofHalves(a), Buffer::ofHalves(b), Buffer::ofHalves(std::vector<float>(kN, 7))};
    run(name, buffers);
    std::vector<float> expected(kN);
    for (std::size_t i = 0; i < kN; ++i) expected[i] = op(a[i], b[i]);
    expectHalvesEqual(buffers[2], expected, name);
  }
  for (const std::string name : {"Relu<half>", "Neg<half>", "Square<half>", "Exp<half>"}) {
    std::vector<Buffer> buffers = {Buffer::ofHalves(a), Buffer::ofHalves(std::vector<float>(kN, 7))};
    run(name, buffers);
    std::vector<float> expected(kN);
    for (std::size_t i = 0; i < kN; ++i)
      expected[i] = name == "Relu<half>" ? (a[i] > 0 ? a[i] : 0.0f)
                    : name == "Neg<half>" ? -a[i]
                    : name == "Square<half>" ? a[i] * a[i]
                                             : std::exp(a[i]);
    expectHalvesEqual(buffers[1], expected, name);
  }
}

TEST(HalfCodelets, HalfStoreOverflowsToInfinity) {
  // 300 * 300 = 90000 > 65504: a half result is inf, as the IPU's f16 multiply gives.
  std::vector<Buffer> buffers = {Buffer::ofHalves({300}), Buffer::ofHalves({300}), Buffer::ofHalves({0})};
  run("Mul<half>", buffers);
  EXPECT_EQ(buffers[2].halves[0], 0x7c00);
}

TEST(HalfCodelets, ReluGradAddBiasScaledAdd) {
  const auto act = halfRounded(pseudoRandom(kN, 3)), grad = halfRounded(pseudoRandom(kN, 4));
  std::vector<Buffer> relu = {Buffer::ofHalves(act), Buffer::ofHalves(grad), Buffer::ofHalves(std::vector<float>(kN, 7))};
  run("ReluGrad<half>", relu);
  std::vector<float> expected(kN);
  for (std::size_t i = 0; i < kN; ++i) expected[i] = act[i] > 0 ? grad[i] : 0.0f;
  expectHalvesEqual(relu[2], expected, "ReluGrad<half>");

  const auto in = halfRounded(pseudoRandom(3 * 5, 5)), bias = halfRounded(pseudoRandom(5, 6));
  std::vector<Buffer> addBias = {Buffer::ofHalves(in), Buffer::ofHalves(bias), Buffer::ofHalves(std::vector<float>(15, 0))};
  run("AddBias<half>", addBias, {{"rows", 3}, {"cols", 5}});
  std::vector<float> biased(15);
  for (std::size_t i = 0; i < 15; ++i) biased[i] = in[i] + bias[i % 5];
  expectHalvesEqual(addBias[2], biased, "AddBias<half>");

  std::vector<Buffer> update = {Buffer::ofHalves(act), Buffer::ofHalves(grad)};
  run("ScaledAdd<half>", update, {{"scale", -0.1}});
  std::vector<float> updated(kN);
  for (std::size_t i = 0; i < kN; ++i) updated[i] = act[i] + -0.1f * grad[i];
  expectHalvesEqual(update[0], updated, "ScaledAdd<half>");
}

TEST(HalfCodelets, ReduceSumAccumulatesInFloat) {
  // 4096 ones: a half accumulator would stop at 2048 (2048 + 1 rounds to
  // 2048); the float accumulation gives 4096 exactly, stored as half or float.
  std::vector<float> ones(4096, 1.0f);
  std::vector<Buffer> toFloat = {Buffer::ofHalves(ones), Buffer::of({0})};
  run("ReduceSum<half,float>", toFloat, {{"rows", 1}, {"cols", 4096}, {"axis", 1}});
  EXPECT_EQ(toFloat[1].floats[0], 4096.0f);
  std::vector<Buffer> toHalf = {Buffer::ofHalves(ones), Buffer::ofHalves({0})};
  run("ReduceSum<half,half>", toHalf, {{"rows", 4096}, {"cols", 1}, {"axis", 0}, {"scale", 0.5}});
  EXPECT_EQ(num::halfToFloat(toHalf[1].halves[0]), 2048.0f);
  // Accumulate into a half out: 2048 + 0.5 * 3 = 2049.5 rounds to 2050 (halves step by 2 there).
  std::vector<Buffer> acc = {Buffer::ofHalves({1, 1, 1}), Buffer::ofHalves({2048})};
  run("ReduceSum<half,half>", acc, {{"rows", 1}, {"cols", 3}, {"axis", 1}, {"scale", 0.5}, {"accumulate", 1}});
  EXPECT_EQ(num::halfToFloat(acc[1].halves[0]), 2050.0f);
}

// A half reduction's second stage: float partials summed in float, the sum
// rounded once into a half result (2049 is not a half: it rounds to 2048).
TEST(HalfCodelets, ReduceSumFloatPartialsIntoHalf) {
  std::vector<Buffer> b = {Buffer::of({2048, 1, 0.25f, 0.75f}), Buffer::ofHalves({0, 0})};
  run("ReduceSum<float,half>", b, {{"rows", 2}, {"cols", 2}, {"axis", 0}});
  EXPECT_EQ(num::halfToFloat(b[1].halves[0]), 2048.0f);  // 2048 + 0.25
  EXPECT_EQ(num::halfToFloat(b[1].halves[1]), 1.75f);    // 1 + 0.75: exactly a half
}

TEST(HalfCodelets, MatMulPartialHalfOperandsFloatPartials) {
  const std::size_t m = 5, k = 7, n = 19;
  const auto a = halfRounded(pseudoRandom(m * k, 11)), b = halfRounded(pseudoRandom(k * n, 12));
  std::vector<Buffer> buffers = {Buffer::ofHalves(a), Buffer::ofHalves(b), Buffer::of(std::vector<float>(m * n, 9))};
  run("MatMulPartial<half,float>", buffers, {{"m", m}, {"k", k}, {"n", n}});
  std::vector<Buffer> halfOut = {Buffer::ofHalves(a), Buffer::ofHalves(b), Buffer::ofHalves(std::vector<float>(m * n, 9))};
  run("MatMulPartial<half,half>", halfOut, {{"m", m}, {"k", k}, {"n", n}});
  // The float kernel on the same (half-valued) operands is the reference.
  std::vector<Buffer> floats = {Buffer::of(a), Buffer::of(b), Buffer::of(std::vector<float>(m * n, 9))};
  run("MatMulPartial", floats, {{"m", m}, {"k", k}, {"n", n}});
  EXPECT_EQ(buffers[2].floats, floats[2].floats);
  expectHalvesEqual(halfOut[2], floats[2].floats, "MatMulPartial<half,half>");
}

TEST(HalfCodelets, SoftmaxWithHalfLogits) {
  const std::size_t rows = 2, classes = 5;
  const auto logits = halfRounded(pseudoRandom(rows * classes, 21));
  std::vector<Buffer> half = {Buffer::ofHalves(logits), Buffer::ofInts({1, 4}), Buffer::of(std::vector<float>(10)),
                              Buffer::of(std::vector<float>(2))};
  run("SoftmaxCrossEntropy<half>", half, {{"rows", rows}, {"classes", classes}});
  std::vector<Buffer> full = {Buffer::of(logits), Buffer::ofInts({1, 4}), Buffer::of(std::vector<float>(10)),
                              Buffer::of(std::vector<float>(2))};
  run("SoftmaxCrossEntropy", full, {{"rows", rows}, {"classes", classes}});
  EXPECT_EQ(half[2].floats, full[2].floats);
  EXPECT_EQ(half[3].floats, full[3].floats);

  std::vector<Buffer> grad = {Buffer::of(full[2].floats), Buffer::ofInts({1, 4}), Buffer::ofHalves(std::vector<float>(10))};
  run("SoftmaxCrossEntropyGrad<half>", grad, {{"rows", rows}, {"classes", classes}, {"scale", 0.5}});
  std::vector<float> expected(10);
  for (std::size_t i = 0; i < 10; ++i)
    expected[i] = 0.5f * (full[2].floats[i] - ((i == 1 || i == 9) ? 1.0f : 0.0f));
  expectHalvesEqual(grad[2], expected, "SoftmaxCrossEntropyGrad<half>");
}

TEST(HalfCodelets, CastRoundsToNearestEvenAndWidensExactly) {
  const std::vector<float> values = {1.0f + std::ldexp(1.0f, -11), 65520.0f, -0.1f, std::ldexp(3.0f, -25), 2.5f};
  std::vector<Buffer> narrow = {Buffer::of(values), Buffer::ofHalves(std::vector<float>(values.size(), 0))};
  run("Cast<float,half>", narrow);
  expectHalvesEqual(narrow[1], values, "Cast<float,half>");
  EXPECT_EQ(narrow[1].halves[0], 0x3c00);  // tie to even
  EXPECT_EQ(narrow[1].halves[1], 0x7c00);  // overflow
  std::vector<Buffer> widen = {narrow[1], Buffer::of(std::vector<float>(values.size(), 0))};
  run("Cast<half,float>", widen);
  EXPECT_EQ(widen[1].floats, narrow[1].halfValues());
}

TEST(HalfCodelets, CopyAndFill) {
  const auto v = halfRounded(pseudoRandom(kN, 31));
  std::vector<Buffer> copy = {Buffer::ofHalves(v), Buffer::ofHalves(std::vector<float>(kN, 0))};
  run("Copy<half>", copy);
  EXPECT_EQ(copy[1].halves, copy[0].halves);
  std::vector<Buffer> fill = {Buffer::ofHalves(std::vector<float>(kN, 0))};
  run("Fill<half>", fill, {{"value", 0.1}});
  for (auto h : fill[0].halves) EXPECT_EQ(h, 0x2e66);
}

TEST(HalfCodelets, ValidationNamesTheTypedCodelet) {
  try {
    cyclesOf("Add<half>", {4, 5, 4});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("codelet Add<half>: field 'in1'"), std::string::npos) << e.what();
  }
}

// --- cycles ------------------------------------------------------------------

TEST(HalfCodelets, WorkerLoopsCountFourHalvesPerVector) {
  // 19 halves = 5 vectors of 4 (2 floats per vector would be 10). Each half
  // variant keeps its float codelet's PopLibs structure (overheads, cost per
  // 64-bit vector) with 4 halves per vector.
  const Target t;
  EXPECT_EQ(cyc::elementsPerVector(t, DType::Half), 4u);
  EXPECT_EQ(cyc::elementsPerVector(t, DType::Float), 2u);
  const ipusim::ir::Cycles v = 5;
  for (const char* name : {"Add<half>", "Sub<half>", "Mul<half>"})
    EXPECT_EQ(cyclesOf(name, {kN, kN, kN}), cyc::kBinaryOpVertexOverhead + v * cyc::kAddSubMulCyclesPerVector) << name;
  // The float codelet on the same 19 elements loops over 10 vectors.
  EXPECT_EQ(cyclesOf("Add", {kN, kN, kN}) - cyclesOf("Add<half>", {kN, kN, kN}),
            (10 - v) * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyclesOf("Relu<half>", {kN, kN}), cyc::kUnaryOpVertexOverhead + v * cyc::kReluCyclesPerVector);
  EXPECT_EQ(cyclesOf("Neg<half>", {kN, kN}), cyc::kUnaryOpVertexOverhead + v * cyc::kNegCyclesPerVector);
  EXPECT_EQ(cyclesOf("Square<half>", {kN, kN}), cyc::kUnaryOpVertexOverhead + v * cyc::kSquareCyclesPerVector);
  EXPECT_EQ(cyclesOf("Copy<half>", {kN, kN}), cyc::kCopyVertexOverhead + v * cyc::kSimpleOpCyclesPerVector);
  EXPECT_EQ(cyclesOf("Fill<half>", {kN}, {{"value", 0}}), cyc::kFillVertexOverhead + v * cyc::kSimpleOpCyclesPerVector);
  EXPECT_EQ(cyclesOf("ReluGrad<half>", {kN, kN, kN}),
            cyc::kNonLinearityGradVertexOverhead + v * cyc::kReluGradCyclesPerVector);
  EXPECT_EQ(cyclesOf("ScaledAdd<half>", {kN, kN}, {{"scale", 1}}),
            cyc::kScaledAddVertexOverhead + v * cyc::kScaledAddCyclesPerVector);
  // Transcendentals and divide: their own half costs per vector of 4 (popops' table).
  EXPECT_EQ(cyclesOf("Exp<half>", {kN, kN}), cyc::kUnaryOpVertexOverhead + v * cyc::kExpHalfCyclesPerVector);
  EXPECT_EQ(cyclesOf("Log<half>", {kN, kN}), cyc::kUnaryOpVertexOverhead + v * cyc::kLogHalfCyclesPerVector);
  EXPECT_EQ(cyclesOf("Div<half>", {kN, kN, kN}), cyc::kBinaryOpVertexOverhead + v * cyc::kDivideHalfCyclesPerVector);
  // AddBias<half>: 3 rows of 10 columns = 3 vectors of 4 per row.
  EXPECT_EQ(cyclesOf("AddBias<half>", {30, 10, 30}, {{"rows", 3}, {"cols", 10}}),
            cyc::kBroadcastVertexOverhead + 3 * (cyc::kBroadcastRowOverhead + 3 * cyc::kBroadcastAddCyclesPerVector));
}

TEST(HalfCodelets, ReduceSumCountsHalfInputVectors) {
  // axis 1: 100 rows of 10 halves; PopLibs' continuous reduce charges
  // floor(10 / 4) = 2 vectors per row (10 is even: no odd tail).
  const ipusim::ir::Cycles axis1 = cyc::kContinuousReduceOverhead + 100 * (cyc::kContinuousReduceRowOverhead + 10 / 4);
  EXPECT_EQ(cyclesOf("ReduceSum<half,float>", {1000, 100}, {{"rows", 100}, {"cols", 10}, {"axis", 1}}), axis1);
  EXPECT_EQ(cyclesOf("ReduceSum<half,half>", {1000, 100}, {{"rows", 100}, {"cols", 10}, {"axis", 1}}), axis1);
  // axis 0: 16 rows of 12 halves, outputs in groups of gcd(4, 12) = 4: 3
  // groups (the float codelet has 6 groups of 2).
  const ipusim::ir::Cycles perGroup =
      cyc::kStridedReduceGroupOverhead + cyc::kStridedReduceAddCompletion + cyc::kStridedReduceStore + (16 - 1);
  EXPECT_EQ(cyclesOf("ReduceSum<half,float>", {16 * 12, 12}, {{"rows", 16}, {"cols", 12}, {"axis", 0}}),
            cyc::kStridedReduceOverhead + 3 * perGroup);
  EXPECT_EQ(cyclesOf("ReduceSum", {16 * 12, 12}, {{"rows", 16}, {"cols", 12}, {"axis", 0}}),
            cyc::kStridedReduceOverhead + 6 * perGroup);
}

// poplin's ConvPartial1x1Out estimate for half activations (cycle_model.hpp),
// worked through by hand from the named constants.
TEST(HalfCodelets, MatMulPartialRunsAtTheHalfAmpRate) {
  using ipusim::ir::Cycles;
  const Target t;  // ipu2: 64 half MACs per cycle = 16 conv units of 4
  EXPECT_EQ(cyc::ampConvUnits(t, DType::Half), 16u);
  EXPECT_EQ(cyc::ampConvUnits(t, DType::Float), 16u);
  // 16 x 784 x 128: 784 / 16 = 49 input groups, 128 / 16 = 8 output groups;
  // 16 field elements over 6 workers: 3,3,3,3,2,2. Half activations with
  // float partials take PopLibs' common path, with worker state retention.
  const std::map<std::string, double> shape = {{"m", 16}, {"k", 784}, {"n", 128}};
  const std::vector<std::uint64_t> sizes = {16 * 784, 784 * 128, 16 * 128};
  const Cycles ctx = t.tile.workerContexts, common = cyc::kAmpCommonPathCycles, save = cyc::kAmpRetentionWorkerSavings;
  const Cycles zero3 = cyc::kAmpCommonPathManyElementsCycles - save;
  const Cycles zero2 = cyc::kAmpCommonPathTwoElementsCycles - save;
  const Cycles keep3 = zero3 + cyc::kAmpCommonPathNotZeroingCycles, keep2 = zero2 + cyc::kAmpCommonPathNotZeroingCycles;
  const Cycles firstPass = std::max(ctx * std::max(zero3, zero2), ctx * std::min(zero3, zero2) + cyc::kAmpWorkerTagCycles);
  const Cycles laterPass = std::max(ctx * std::max(keep3, keep2), ctx * std::min(keep3, keep2) + cyc::kAmpWorkerTagCycles);
  const Cycles outer = cyc::kAmpSupervisorOverhead + ctx * (save + cyc::kAmpRetentionInGroupCycles * 48) +
                       cyc::kAmpConvGroupOverhead + common + cyc::kAmpFirstPassInGroupOverhead;
  const Cycles later =
      48 * (cyc::kAmpInGroupOverhead - common + 8 * (cyc::kAmpOutGroupOverhead + cyc::kAmpWeightLoadCycles + laterPass));
  const Cycles firstOutGroups = 8 * (cyc::kAmpFirstPassOutGroupOverhead - common + cyc::kAmpWeightLoadCycles);
  EXPECT_EQ(cyclesOf("MatMulPartial<half,float>", sizes, shape), outer + later + firstOutGroups + 8 * firstPass);
  // 16 conv units put half partials on the same code path.
  EXPECT_EQ(cyclesOf("MatMulPartial<half,half>", sizes, shape), outer + later + firstOutGroups + 8 * firstPass);
  auto accumulate = shape;
  accumulate["accumulate"] = 1;
  EXPECT_EQ(cyclesOf("MatMulPartial<half,float>", sizes, accumulate), outer + later + firstOutGroups + 8 * laterPass);
  // The float codelet on the same shape: twice the input groups at twice the cycles per element.
  EXPECT_GT(cyclesOf("MatMulPartial", sizes, accumulate), 2 * cyclesOf("MatMulPartial<half,float>", sizes, accumulate));

  // Mk1 (32 half MACs per cycle: 8 conv units): half partials leave the
  // common path. 3 x 5 x 7: one group each; 3 workers of one element, 3 idle
  // (the fastest is 0, so the tag adds nothing).
  const Target mk1 = Target::preset("ipu1");
  EXPECT_EQ(cyc::ampConvUnits(mk1, DType::Half), 8u);
  const std::vector<std::uint64_t> small = {15, 35, 21};
  const std::map<std::string, double> smallShape = {{"m", 3}, {"k", 5}, {"n", 7}};
  const Cycles fixed = cyc::kAmpSupervisorOverhead + cyc::kAmpConvGroupOverhead + cyc::kAmpFirstPassInGroupOverhead +
                       cyc::kAmpFirstPassOutGroupOverhead + cyc::kAmpWeightLoadCycles;
  EXPECT_EQ(cyclesOf("MatMulPartial<half,half>", small, smallShape, mk1),
            fixed + ctx * (cyc::kAmpHalfWorkerOneElementCycles + cyc::kAmpZeroingCycles +
                           cyc::kAmpHalfPartialsZeroCyclesPerElement));
  EXPECT_EQ(cyclesOf("MatMulPartial<half,float>", small, smallShape, mk1),
            fixed + common /* conv group */ - common /* first-pass output group */ + ctx * save +
                ctx * (cyc::kAmpCommonPathOneElementCycles - save));

  Target noHalfAmp;
  noHalfAmp.tile.ampHalfMacsPerCycle = 0;
  EXPECT_THROW(cyclesOf("MatMulPartial<half,float>", sizes, shape, noHalfAmp), std::invalid_argument);
  noHalfAmp.tile.ampHalfMacsPerCycle = 2;  // fewer than one conv unit
  EXPECT_THROW(cyclesOf("MatMulPartial<half,float>", sizes, shape, noHalfAmp), std::invalid_argument);
}

TEST(HalfCodelets, CastCyclesFollowPopopsCastEstimate) {
  const Target t;
  // float -> half: min(2 loads x 2 floats, 1 store x 4 halves) = 4 per vector,
  // max(4 / 2 load cycles, 4 / 4 store cycles) = 2 cycles per vector.
  EXPECT_EQ(cyc::castVector(t, DType::Float, DType::Half).elements, 4u);
  EXPECT_EQ(cyc::castVector(t, DType::Float, DType::Half).cycles, 2u);
  // half -> float: min(2 x 4, 1 x 2) = 2 per vector, 1 cycle each.
  EXPECT_EQ(cyc::castVector(t, DType::Half, DType::Float).elements, 2u);
  EXPECT_EQ(cyc::castVector(t, DType::Half, DType::Float).cycles, 1u);
  EXPECT_EQ(cyclesOf("Cast<float,half>", {kN, kN}), cyc::kCastVertexOverhead + 5 * 2);
  EXPECT_EQ(cyclesOf("Cast<half,float>", {kN, kN}), cyc::kCastVertexOverhead + 10 * 1);
}

}  // namespace test_codelet_half
