// The activation codelets of issue 26 (model/codelets/activation_codelets.cpp,
// softmax.cpp, column_broadcast.cpp): values against Keras's formulas
// written here in double, gradients against their analytic derivatives
// (themselves checked against central differences), and exact cycles derived
// from the formula each codelet cites (cycle_model.hpp's constants; popnn's
// NonLinearity2D transcribed here for Swish and GeluTanh).
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

namespace test_codelet_activations {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }

// Points away from every kink (0, +-2.5, +-3, the thresholds 0.5 and maxima 1.5 and 6).
const std::vector<float> kXs = {-5.5f, -3.2f, -2.7f, -2.1f, -1.3f, -0.7f, -0.2f, 0.15f, 0.4f,
                                0.9f,  1.7f,  2.6f,  3.4f,  5.9f,  7.3f,  -0.05f, 1.2f};

struct Case {
  const char* forward;
  const char* gradient;
  std::map<std::string, double> params;
  std::function<double(double)> f, df;
  bool gradientReadsOutput;
};

// Keras's definitions (keras/src/activations/activations.py, layers/activations/*).
std::vector<Case> cases() {
  return {
      {"ClippedRelu", "ClippedReluGrad", {{"maxValue", 1.5}}, [](double x) { return std::min(std::max(x, 0.0), 1.5); },
       [](double x) { return x > 0 && x < 1.5 ? 1.0 : 0.0; }, true},
      {"LeakyRelu", "LeakyReluGrad", {{"negativeSlope", 0.2}}, [](double x) { return x > 0 ? x : 0.2 * x; },
       [](double x) { return x > 0 ? 1.0 : 0.2; }, true},
      {"BoundedLeakyRelu", "BoundedLeakyReluGrad", {{"maxValue", 1.5}, {"hasMax", 1}, {"negativeSlope", 0.1}, {"threshold", 0.5}},
       [](double x) { return x > 0.5 ? std::min(x, 1.5) : 0.1 * (x - 0.5); },
       [](double x) { return x > 0.5 ? (x < 1.5 ? 1.0 : 0.0) : 0.1; }, true},
      {"BoundedLeakyRelu", "BoundedLeakyReluGrad", {{"maxValue", 0}, {"hasMax", 0}, {"negativeSlope", 0.3}, {"threshold", 0.5}},
       [](double x) { return x > 0.5 ? x : 0.3 * (x - 0.5); }, [](double x) { return x > 0.5 ? 1.0 : 0.3; }, true},
      {"Elu", "EluGrad", {{"alpha", 0.5}}, [](double x) { return x > 0 ? x : 0.5 * (std::exp(x) - 1); },
       [](double x) { return x > 0 ? 1.0 : 0.5 * std::exp(x); }, true},
      {"Selu", "SeluGrad", {}, [](double x) { return kSeluScale * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1)); },
       [](double x) { return x > 0 ? kSeluScale : kSeluScale * kSeluAlpha * std::exp(x); }, true},
      {"Softplus", "SoftplusGrad", {}, softplus, sigmoid, true},
      {"Softsign", "SoftsignGrad", {}, [](double x) { return x / (std::fabs(x) + 1); },
       [](double x) { return 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x))); }, true},
      {"HardSigmoid", "HardSigmoidGrad", {{"slope", 1.0 / 6}}, [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       [](double x) { return x > -3 && x < 3 ? 1.0 / 6 : 0.0; }, true},
      {"HardSigmoid", "HardSigmoidGrad", {{"slope", 0.2}}, [](double x) { return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0); },
       [](double x) { return x > -2.5 && x < 2.5 ? 0.2 : 0.0; }, true},
      {"HardSilu", "HardSiluGrad", {}, [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       [](double x) { return x < -3 ? 0.0 : x > 3 ? 1.0 : (2 * x + 3) / 6; }, false},
      {"Mish", "MishGrad", {}, [](double x) { return x * std::tanh(softplus(x)); },
       [](double x) {
         const double t = std::tanh(softplus(x));
         return t + x * sigmoid(x) * (1 - t * t);
       },
       false},
      {"Swish", "SwishGrad", {}, [](double x) { return x * sigmoid(x); },
       [](double x) { return sigmoid(x) * (1 + x * (1 - sigmoid(x))); }, false},
      {"GeluTanh", "GeluTanhGrad", {},
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x))); },
       [](double x) {
         const double c = std::sqrt(2 / kPi), t = std::tanh(c * (x + 0.044715 * x * x * x));
         return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
       },
       false},
  };
}

}  // namespace

TEST(ActivationCodelets, ForwardMatchesKerasFormulas) {
  for (const Case& c : cases()) {
    std::vector<Buffer> b = {Buffer::of(kXs), Buffer::of(std::vector<float>(kXs.size(), 7.0f))};
    run(c.forward, b, c.params);
    for (std::size_t i = 0; i < kXs.size(); ++i)
      EXPECT_NEAR(b[1].floats[i], c.f(kXs[i]), 2e-6 + 2e-6 * std::fabs(c.f(kXs[i]))) << c.forward << " at " << kXs[i];
  }
}

// The derivatives of the test itself against central differences, then each
// gradient codelet, fed the forward output or input as it reads.
TEST(ActivationCodelets, GradientsMatchDerivatives) {
  const auto g = pseudoRandom(kXs.size(), 21);
  for (const Case& c : cases()) {
    for (float x : kXs) {
      const double h = 1e-4;
      EXPECT_NEAR(c.df(x), (c.f(x + h) - c.f(x - h)) / (2 * h), 1e-5) << c.gradient << " (the test's derivative) at " << x;
    }
    std::vector<float> reads(kXs.size());
    for (std::size_t i = 0; i < kXs.size(); ++i) reads[i] = c.gradientReadsOutput ? float(c.f(kXs[i])) : kXs[i];
    std::vector<Buffer> b = {Buffer::of(reads), Buffer::of(g), Buffer::of(std::vector<float>(kXs.size(), 7.0f))};
    run(c.gradient, b, c.params);
    for (std::size_t i = 0; i < kXs.size(); ++i)
      EXPECT_NEAR(b[2].floats[i], g[i] * c.df(kXs[i]), 1e-5) << c.gradient << " at " << kXs[i];
  }
}

// At the kinks, the side below (tf.nn.leaky_relu's rule: the negative slope
// at the threshold), 0 at relu6's ends; PReLU's alpha term and input
// gradient are 0 at 0 (Keras: relu(x) - alpha relu(-x)).
TEST(ActivationCodelets, GradientsAtTheKinks) {
  std::vector<Buffer> b = {Buffer::of({0.0f, 1.5f}), Buffer::of({1.0f, 1.0f}), Buffer::of({7.0f, 7.0f})};
  run("ClippedReluGrad", b, {{"maxValue", 1.5}});
  EXPECT_EQ(b[2].floats, (std::vector<float>{0.0f, 0.0f}));
  run("LeakyReluGrad", b, {{"negativeSlope", 0.25}});
  EXPECT_EQ(b[2].floats[0], 0.25f);
  run("EluGrad", b, {{"alpha", 0.5}});
  EXPECT_EQ(b[2].floats[0], 0.5f);  // alpha exp(0)
  std::vector<Buffer> p = {Buffer::of({0.0f, -2.0f, 3.0f}), Buffer::of({1.0f, 1.0f, 1.0f}), Buffer::of({7.0f, 7.0f, 7.0f})};
  run("PReluAlphaGrad", p);
  EXPECT_EQ(p[2].floats, (std::vector<float>{0.0f, -2.0f, 0.0f}));
}

TEST(ActivationCodelets, HalfVariantsRoundOnce) {
  const std::vector<float> x = {-1.3f, 0.4f, 2.6f, -0.2f, 0.9f};
  std::vector<Buffer> b = {Buffer::ofHalves(x), Buffer::ofHalves(std::vector<float>(x.size(), 0.0f))};
  run("Mish<half>", b);
  const auto in = Buffer::ofHalves(x).halfValues();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float exact = float(double(in[i]) * std::tanh(softplus(in[i])));
    EXPECT_EQ(b[1].halfValues()[i], Buffer::ofHalves({exact}).halfValues()[0]) << i;
  }
}

namespace {

std::uint64_t vecs(std::uint64_t n, std::uint64_t width) { return (n + width - 1) / width; }

// lib/popnn/popnnCycleEstimators.cpp nonLinearity2DCycleEstimator, one
// region of n elements, not in place (getNonLinearityOpCycles opCycles per
// element, vectorCycles per vector; width 2 floats or 4 halves).
std::uint64_t popnnNonLinearity2D(std::uint64_t n, bool isFloat, std::uint64_t opCycles, std::uint64_t vectorCycles) {
  const std::uint64_t width = isFloat ? 2 : 4, numVectors = n / width, remainder = n % width;
  std::uint64_t cycles = 5 + 0 + 2 + 5 + 2;  // isNonInPlaceSwish ? 1 : 0 + 2 + 5 + 2, not in place
  cycles += 4 + 1 + (isFloat ? 0 : 2) + (isFloat ? 2 : 3) + 2 +
            (numVectors ? 1 : 0) * (2 + opCycles + (numVectors - 1) * vectorCycles + 1 + opCycles);
  if (isFloat) cycles += 2 + (remainder ? 1 : 0) * (2 + opCycles);
  else cycles += 2 + ((remainder & 2) ? 1 : 0) * (2 + opCycles) + 2 + ((remainder & 1) ? 1 : 0) * (3 + opCycles);
  return cycles + 1;
}

}  // namespace

// Forward: the UnaryOp2D frame, 20 + vectors x the cycles per vector of the
// popops operations each formula takes; Swish and GeluTanh popnn's own
// vertices. Gradients: the NonLinearityGrad2D frame, 31 + vectors x cycles.
TEST(ActivationCodelets, ExactCycles) {
  struct Expect { const char* codelet; std::uint64_t perVector; std::map<std::string, double> params; };
  const std::map<std::string, double> none;
  const std::vector<Expect> forward = {
      {"ClippedRelu", cyc::kClampCyclesPerVector, {{"maxValue", 6}}},
      {"LeakyRelu", cyc::kArithCyclesPerVector + cyc::kSelectCyclesPerVector, {{"negativeSlope", 0.2}}},
      {"BoundedLeakyRelu", 2 * cyc::kArithCyclesPerVector + cyc::kMinMaxCyclesPerVector + cyc::kSelectCyclesPerVector,
       {{"maxValue", 1}, {"hasMax", 1}, {"negativeSlope", 0.1}, {"threshold", 0.5}}},
      {"Elu", cyc::kExpm1CyclesPerVector + cyc::kArithCyclesPerVector + cyc::kSelectCyclesPerVector, {{"alpha", 1}}},
      {"Selu", cyc::kExpm1CyclesPerVector + 2 * cyc::kArithCyclesPerVector + cyc::kSelectCyclesPerVector, none},
      {"Softplus", cyc::kSoftplusCyclesPerVector, none},
      {"Softsign", cyc::kAbsCyclesPerVector + cyc::kArithCyclesPerVector + cyc::kDivideCyclesPerVector, none},
      {"HardSigmoid", 2 * cyc::kArithCyclesPerVector + cyc::kClampCyclesPerVector, {{"slope", 0.2}}},
      {"HardSilu", 3 * cyc::kArithCyclesPerVector + cyc::kClampCyclesPerVector, none},
      {"Mish", cyc::kSoftplusCyclesPerVector + cyc::kTanhCyclesPerVector + cyc::kArithCyclesPerVector, none}};
  for (const Expect& e : forward)
    for (std::uint64_t n : {0u, 1u, 9u, 1000u})
      EXPECT_EQ(cyclesOf(e.codelet, {n, n}, e.params), cyc::kUnaryOpVertexOverhead + vecs(n, 2) * e.perVector)
          << e.codelet << " " << n;
  const std::vector<Expect> grads = {
      {"ClippedReluGrad", cyc::kSelectCyclesPerVector + cyc::kExtraBoundCyclesPerVector, {{"maxValue", 6}}},
      {"LeakyReluGrad", cyc::kSelectCyclesPerVector + cyc::kArithCyclesPerVector, {{"negativeSlope", 0.2}}},
      {"BoundedLeakyReluGrad", cyc::kSelectCyclesPerVector + cyc::kExtraBoundCyclesPerVector + cyc::kArithCyclesPerVector,
       {{"maxValue", 1}, {"hasMax", 1}, {"negativeSlope", 0.1}, {"threshold", 0.5}}},
      {"EluGrad", cyc::kSelectCyclesPerVector + 2 * cyc::kArithCyclesPerVector, {{"alpha", 1}}},
      {"SeluGrad", cyc::kSelectCyclesPerVector + 3 * cyc::kArithCyclesPerVector, none},
      {"SoftplusGrad", cyc::kNegCyclesPerVector + cyc::kExpm1CyclesPerVector + 2 * cyc::kArithCyclesPerVector, none},
      {"SoftsignGrad", cyc::kAbsCyclesPerVector + cyc::kSquareCyclesPerVector + 2 * cyc::kArithCyclesPerVector, none},
      {"HardSigmoidGrad", cyc::kSelectCyclesPerVector + cyc::kExtraBoundCyclesPerVector + cyc::kArithCyclesPerVector,
       {{"slope", 0.2}}},
      {"HardSiluGrad", cyc::kSelectCyclesPerVector + cyc::kExtraBoundCyclesPerVector + 3 * cyc::kArithCyclesPerVector, none},
      {"MishGrad", cyc::kSoftplusCyclesPerVector + cyc::kTanhCyclesPerVector + cyc::kSigmoidCyclesPerVector +
                       cyc::kSquareCyclesPerVector + 5 * cyc::kArithCyclesPerVector, none},
      {"SwishGrad", cyc::kSwishGradCyclesPerVector, none},
      {"GeluTanhGrad", cyc::kGeluTanhGradCyclesPerVector, none},
      {"PReluAlphaGrad", cyc::kArithCyclesPerVector + cyc::kSelectCyclesPerVector, none}};
  for (const Expect& e : grads)
    for (std::uint64_t n : {1u, 9u, 1000u})
      EXPECT_EQ(cyclesOf(e.codelet, {n, n, n}, e.params), cyc::kNonLinearityGradVertexOverhead + vecs(n, 2) * e.perVector)
          << e.codelet << " " << n;
  for (std::uint64_t n : {0u, 1u, 2u, 3u, 5u, 9u, 16u, 1000u, 1001u}) {
    EXPECT_EQ(cyclesOf("Swish", {n, n}), popnnNonLinearity2D(n, true, 6, 11)) << n;
    EXPECT_EQ(cyclesOf("Swish<half>", {n, n}), popnnNonLinearity2D(n, false, 3, 5)) << n;
    EXPECT_EQ(cyclesOf("GeluTanh", {n, n}), popnnNonLinearity2D(n, true, 10, 10)) << n;
    EXPECT_EQ(cyclesOf("GeluTanh<half>", {n, n}), popnnNonLinearity2D(n, false, 5, 5)) << n;
  }
  // Half variants: 4 halves a vector, their own popops costs where the table has them.
  EXPECT_EQ(cyclesOf("Elu<half>", {9, 9}, {{"alpha", 1}}),
            cyc::kUnaryOpVertexOverhead + 3 * (cyc::kExpm1HalfCyclesPerVector + 1 + cyc::kSelectCyclesPerVector));
  EXPECT_EQ(cyclesOf("Softsign<half>", {8, 8}),
            cyc::kUnaryOpVertexOverhead + 2 * (cyc::kAbsHalfCyclesPerVector + 1 + cyc::kDivideHalfCyclesPerVector));
  EXPECT_EQ(cyclesOf("SwishGrad<half>", {9, 9, 9}), cyc::kNonLinearityGradVertexOverhead + 3 * cyc::kSwishGradHalfCyclesPerVector);
  // The literal numbers, so a silent change of a constant shows here too:
  // Elu: EXPONENT_MINUS_ONE 2 x 4 + MULTIPLY 1 + select 3 = 12 per vector;
  // Softplus: 2 + 2 + 6 + 18 + 3 + 1 = 32; Swish (popnn SWISH) for 16 floats:
  // 14 + 9 + (2 + 6 + 7 x 11 + 1 + 6) + 2 + 1 = 118.
  EXPECT_EQ(cyclesOf("Elu", {9, 9}, {{"alpha", 1}}), 20u + 5u * 12u);
  EXPECT_EQ(cyclesOf("Softplus", {4, 4}), 20u + 2u * 32u);
  EXPECT_EQ(cyclesOf("Swish", {16, 16}), 118u);
}

TEST(SoftmaxCodelets, AlongAnAxisOfAnyStride) {
  // 2 blocks of n = 3 positions x inner = 2 values: softmax down each column of each block.
  const std::vector<float> x = {1, -1, 2, 0.5f, 3, 2, /**/ -2, 4, 0, 4, 1, 4};
  std::vector<Buffer> b = {Buffer::of(x), Buffer::of(std::vector<float>(12, 7.0f))};
  run("Softmax", b, {{"groups", 2}, {"n", 3}, {"inner", 2}});
  for (std::size_t block = 0; block < 2; ++block)
    for (std::size_t j = 0; j < 2; ++j) {
      double sum = 0;
      for (std::size_t i = 0; i < 3; ++i) sum += std::exp(double(x[block * 6 + i * 2 + j]));
      for (std::size_t i = 0; i < 3; ++i)
        EXPECT_NEAR(b[1].floats[block * 6 + i * 2 + j], std::exp(double(x[block * 6 + i * 2 + j])) / sum, 1e-6);
    }
  // The gradient from the output: y (g - sum(g y)), against a central difference of sum(g softmax(x)).
  const std::vector<float> g = {0.3f, -0.2f, 0.5f, 0.1f, -0.4f, 0.7f, 0.2f, 0.2f, -0.1f, 0.9f, 0.6f, -0.3f};
  std::vector<Buffer> gb = {b[1], Buffer::of(g), Buffer::of(std::vector<float>(12, 7.0f))};
  run("SoftmaxGrad", gb, {{"groups", 2}, {"n", 3}, {"inner", 2}});
  auto objective = [&](std::vector<float> in) {
    std::vector<Buffer> fb = {Buffer::of(in), Buffer::of(std::vector<float>(12))};
    run("Softmax", fb, {{"groups", 2}, {"n", 3}, {"inner", 2}});
    double s = 0;
    for (std::size_t e = 0; e < 12; ++e) s += double(g[e]) * fb[1].floats[e];
    return s;
  };
  for (std::size_t e = 0; e < 12; ++e) {
    std::vector<float> up = x, down = x;
    up[e] += 1e-2f, down[e] -= 1e-2f;
    EXPECT_NEAR(gb[2].floats[e], (objective(up) - objective(down)) / 2e-2, 2e-3) << e;
  }
}

// popops' reductions (continuous along a row when inner = 1, strided into
// `inner` outputs otherwise) and the elementwise ops per vector.
TEST(SoftmaxCodelets, ExactCycles) {
  const std::uint64_t groups = 3, n = 10;
  const std::uint64_t row = cyc::kContinuousReduceRowOverhead + n / 2;  // n even: no odd tail
  EXPECT_EQ(cyclesOf("Softmax", {groups * n, groups * n}, {{"groups", 3}, {"n", 10}, {"inner", 1}}),
            cyc::kContinuousReduceOverhead +
                groups * (2 * row + vecs(n, 2) * (2 * cyc::kArithCyclesPerVector + cyc::kExpCyclesPerVector) +
                          1 * cyc::kDivideCyclesPerVector));
  EXPECT_EQ(cyclesOf("SoftmaxGrad", {groups * n, groups * n, groups * n}, {{"groups", 3}, {"n", 10}, {"inner", 1}}),
            cyc::kContinuousReduceOverhead + groups * (row + vecs(n, 2) * 3 * cyc::kArithCyclesPerVector));
  // inner = 6: strided reductions into 6 outputs, 2 per 64-bit group.
  const std::uint64_t inner = 6;
  const auto strided = [&](std::uint64_t completion) {
    return 3 * (cyc::kStridedReduceGroupOverhead + completion + cyc::kStridedReduceStore + (n - 1));
  };
  EXPECT_EQ(cyclesOf("Softmax", {n * inner, n * inner}, {{"groups", 1}, {"n", 10}, {"inner", 6}}),
            cyc::kStridedReduceOverhead + strided(cyc::kStridedReduceMaxCompletion) +
                strided(cyc::kStridedReduceAddCompletion) +
                vecs(n * inner, 2) * (2 * cyc::kArithCyclesPerVector + cyc::kExpCyclesPerVector) + 3 * cyc::kDivideCyclesPerVector);
  // Half: 4 halves a vector, EXPONENT and DIVIDE's half costs.
  EXPECT_EQ(cyclesOf("Softmax<half>", {n, n}, {{"groups", 1}, {"n", 10}, {"inner", 1}}),
            cyc::kContinuousReduceOverhead + 2 * (cyc::kContinuousReduceRowOverhead + n / 4) +
                vecs(n, 4) * (2 * cyc::kArithCyclesPerVector + cyc::kExpHalfCyclesPerVector) + cyc::kDivideHalfCyclesPerVector);
}

TEST(ColumnBroadcastCodelets, ValuesPerColumn) {
  const std::vector<float> x = {1, -2, 0, -4, 5, -6};  // 2 rows x 3 columns
  std::vector<Buffer> p = {Buffer::of(x), Buffer::of({0.5f, 0.25f, 2.0f}), Buffer::of(std::vector<float>(6, 7.0f))};
  run("PRelu", p, {{"rows", 2}, {"cols", 3}});
  EXPECT_EQ(p[2].floats, (std::vector<float>{1, -0.5f, 0, -2, 5, -12}));
  std::vector<Buffer> pg = {Buffer::of(x), Buffer::of({1, 1, 1, 2, 2, 2}), Buffer::of({0.5f, 0.25f, 2.0f}),
                            Buffer::of(std::vector<float>(6, 7.0f))};
  run("PReluGrad", pg, {{"rows", 2}, {"cols", 3}});
  EXPECT_EQ(pg[3].floats, (std::vector<float>{1, 0.25f, 0, 1, 2, 4}));  // 0 at x = 0
  std::vector<Buffer> nb = {Buffer::of(x), Buffer::of({1, 0, -1}), Buffer::of({2, 4, 0.5f}), Buffer::of(std::vector<float>(6))};
  run("Normalize", nb, {{"rows", 2}, {"cols", 3}});
  EXPECT_EQ(nb[3].floats, (std::vector<float>{0, -0.5f, 2, -2.5f, 1.25f, -10}));
  std::vector<Buffer> sb = {Buffer::of(x), Buffer::of({2, 3, 4}), Buffer::of({1, 0, -1}), Buffer::of(std::vector<float>(6))};
  run("ScaleShift", sb, {{"rows", 2}, {"cols", 3}});
  EXPECT_EQ(sb[3].floats, (std::vector<float>{3, -6, -1, -7, 15, -25}));
}

// AddBias's frame (BroadcastVectorOuterByRow1D, one worker): 15 + rows x (7 +
// vectors x cycles per vector).
TEST(ColumnBroadcastCodelets, ExactCycles) {
  const std::map<std::string, double> shape = {{"rows", 4}, {"cols", 5}};
  auto expected = [](std::uint64_t perVector) {
    return cyc::kBroadcastVertexOverhead + 4 * (cyc::kBroadcastRowOverhead + 3 * perVector);
  };
  EXPECT_EQ(cyclesOf("PRelu", {20, 5, 20}, shape), expected(cyc::kPReluCyclesPerVector));
  EXPECT_EQ(cyclesOf("PReluGrad", {20, 20, 5, 20}, shape), expected(cyc::kPReluGradCyclesPerVector));
  EXPECT_EQ(cyclesOf("Normalize", {20, 5, 5, 20}, shape), expected(cyc::kNormalizeCyclesPerVector));
  EXPECT_EQ(cyclesOf("ScaleShift", {20, 5, 5, 20}, shape), expected(cyc::kScaleShiftCyclesPerVector));
  EXPECT_EQ(cyclesOf("Normalize<half>", {20, 5, 5, 20}, shape),
            cyc::kBroadcastVertexOverhead + 4 * (cyc::kBroadcastRowOverhead + 2 * cyc::kNormalizeHalfCyclesPerVector));
  // PRelu: MULTIPLY 1 + select 3 + loop 1 = 5 a vector: 15 + 4 x (7 + 3 x 5).
  EXPECT_EQ(cyclesOf("PRelu", {20, 5, 20}, shape), 15u + 4u * (7u + 3u * 5u));
}

}  // namespace test_codelet_activations
