// Elementwise codelets: values against a scalar reference, and exact cycles.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace test_codelet_elementwise {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

// 19 elements: two full strips of 8 lanes plus a scalar remainder.
constexpr std::size_t kN = 19;

void checkBinary(const std::string& name, const std::function<float(float, float)>& reference) {
  auto in0 = pseudoRandom(kN, 1), in1 = pseudoRandom(kN, 2);
  if (name == "Div")
    for (auto& x : in1) x += (x >= 0 ? 0.5f : -0.5f);  // keep away from 0
  std::vector<Buffer> buffers = {Buffer::of(in0), Buffer::of(in1), Buffer::of(std::vector<float>(kN, 7.0f))};
  run(name, buffers);
  for (std::size_t i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(buffers[2].floats[i], reference(in0[i], in1[i])) << name << i;
}

void checkUnary(const std::string& name, std::vector<float> in, const std::function<float(float)>& reference) {
  std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(std::vector<float>(in.size(), 7.0f))};
  run(name, buffers);
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(buffers[1].floats[i], reference(in[i])) << name << i;
}

}  // namespace

TEST(ElementwiseCodelets, BinaryOpsMatchReference) {
  checkBinary("Add", [](float a, float b) { return a + b; });
  checkBinary("Sub", [](float a, float b) { return a - b; });
  checkBinary("Mul", [](float a, float b) { return a * b; });
  checkBinary("Div", [](float a, float b) { return a / b; });
}

TEST(ElementwiseCodelets, UnaryOpsMatchReference) {
  const auto x = pseudoRandom(kN, 3);
  checkUnary("Relu", x, [](float v) { return v > 0 ? v : 0.0f; });
  checkUnary("Exp", x, [](float v) { return std::exp(v); });
  checkUnary("Neg", x, [](float v) { return -v; });
  checkUnary("Square", x, [](float v) { return v * v; });
  std::vector<float> positive = x;
  for (auto& v : positive) v = std::fabs(v) + 0.01f;
  checkUnary("Log", positive, [](float v) { return std::log(v); });
}

TEST(ElementwiseCodelets, ReluZeroesNegativesAndZero) {
  std::vector<Buffer> buffers = {Buffer::of({-2.0f, 0.0f, 3.5f}), Buffer::of({9, 9, 9})};
  run("Relu", buffers);
  EXPECT_EQ(buffers[1].floats, (std::vector<float>{0.0f, 0.0f, 3.5f}));
}

TEST(ElementwiseCodelets, ScaledAddUpdatesDataInPlace) {
  auto data = pseudoRandom(kN, 4);
  const auto deltas = pseudoRandom(kN, 5);
  std::vector<Buffer> buffers = {Buffer::of(data), Buffer::of(deltas)};
  run("ScaledAdd", buffers, {{"scale", -0.25}});
  for (std::size_t i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(buffers[0].floats[i], data[i] + -0.25f * deltas[i]);
}

TEST(ElementwiseCodelets, ReluGradPassesGradientWhereActivationPositive) {
  std::vector<Buffer> buffers = {Buffer::of({-1.0f, 0.0f, 2.0f, 1e-6f}), Buffer::of({1.0f, 2.0f, 3.0f, 4.0f}),
                                 Buffer::of({9, 9, 9, 9})};
  run("ReluGrad", buffers);
  EXPECT_EQ(buffers[2].floats, (std::vector<float>{0.0f, 0.0f, 3.0f, 4.0f}));
}

TEST(ElementwiseCodelets, MismatchedSizesNameTheField) {
  const auto& add = CodeletRegistry::instance().get("Add");
  try {
    add.validate(VertexShape{{4, 5, 4}, {}});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("codelet Add"), std::string::npos) << message;
    EXPECT_NE(message.find("field 'in1' has 5 elements, expected 4"), std::string::npos) << message;
  }
  EXPECT_THROW(CodeletRegistry::instance().get("ScaledAdd").validate(VertexShape{{4, 3}, {1.0}}),
               std::invalid_argument);
  EXPECT_THROW(CodeletRegistry::instance().get("Exp").validate(VertexShape{{4, 3}, {}}), std::invalid_argument);
}

// Worker cycles: the vertex overhead + ceil(n / 2) * cyclesPerVector with
// the default 8-byte vector (2 floats); constants from PopLibs' 2D vertices.
TEST(ElementwiseCodelets, CyclesFollowTheVectorWidth) {
  EXPECT_EQ(cyclesOf("Add", {1000, 1000, 1000}), cyc::kBinaryOpVertexOverhead + 500 * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyclesOf("Mul", {7, 7, 7}), cyc::kBinaryOpVertexOverhead + 4 * cyc::kAddSubMulCyclesPerVector);
  EXPECT_EQ(cyclesOf("Div", {7, 7, 7}), cyc::kBinaryOpVertexOverhead + 4 * cyc::kDivideCyclesPerVector);
  EXPECT_EQ(cyclesOf("Exp", {101, 101}), cyc::kUnaryOpVertexOverhead + 51 * cyc::kExpCyclesPerVector);
  EXPECT_EQ(cyclesOf("Log", {2, 2}), cyc::kUnaryOpVertexOverhead + 1 * cyc::kLogCyclesPerVector);
  EXPECT_EQ(cyclesOf("Relu", {0, 0}), cyc::kUnaryOpVertexOverhead);
  EXPECT_EQ(cyclesOf("ScaledAdd", {9, 9}, {{"scale", 2}}),
            cyc::kScaledAddVertexOverhead + 5 * cyc::kScaledAddCyclesPerVector);
  EXPECT_EQ(cyclesOf("ReluGrad", {9, 9, 9}), cyc::kNonLinearityGradVertexOverhead + 5 * cyc::kReluGradCyclesPerVector);
  // The literal numbers, so a silent change of a constant shows here too
  // (BinaryOp2D ADD: 5 + 500 x 3; UnaryOp2D EXPONENT: 20 + 51 x 6).
  EXPECT_EQ(cyclesOf("Add", {1000, 1000, 1000}), 1505u);
  EXPECT_EQ(cyclesOf("Exp", {101, 101}), 20u + 51u * 6u);
}

TEST(ElementwiseCodelets, CyclesTakeTheVectorWidthFromTheTarget) {
  Target wide;
  wide.tile.vectorBytes = 16;  // 4 floats per vector
  EXPECT_EQ(cyclesOf("Add", {10, 10, 10}, {}, wide), cyc::kBinaryOpVertexOverhead + 3 * cyc::kAddSubMulCyclesPerVector);
  Target broken;
  broken.tile.vectorBytes = 2;
  EXPECT_THROW(cyclesOf("Add", {10, 10, 10}, {}, broken), std::invalid_argument);
}

}  // namespace test_codelet_elementwise
