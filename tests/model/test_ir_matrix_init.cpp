// Orthogonal and Identity initial values in the executable (ir::DrawnInit):
// the JSON form round trips (initialOrthogonal, initialIdentity), every
// reader draws the same values, and a bad form is an error naming its key
// (errorOf: test_ir_graphs.hpp).
// Also the other drawn forms side by side (initialNormal).
#include "model/ir/orthogonal.hpp"
#include "model/ir/types.hpp"
#include "test_ir_graphs.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

namespace test_ir_matrix_init {

using namespace ipusim::ir;
using namespace ipusim::ir::testing;
using nlohmann::json;

namespace {

// everyKindGraph() with one more tensor, a 12 x 8 kernel drawn as `init`.
Executable withKernel(const DrawnInit& init) {
  Executable exe = everyKindGraph();
  Tensor k;
  k.id = Id(exe.tensors.size());
  k.name = "kernel";
  k.shape = {3, 4, 8};
  k.mapping = {{0, 0, 96, 4096}};
  k.drawnInit = init;
  exe.tensors.push_back(k);
  return exe;
}

DrawnInit orthogonalInit() {
  DrawnInit d;
  d.distribution = DrawnInit::Distribution::Orthogonal;
  d.seed = 7, d.gain = 1.5, d.rows = 12, d.cols = 8;
  return d;
}

DrawnInit identityInit() {
  DrawnInit d;
  d.distribution = DrawnInit::Distribution::Identity;
  d.gain = 0.5, d.rows = 12, d.cols = 8;
  return d;
}

}  // namespace

TEST(IrMatrixInit, OrthogonalRoundTripsAsSeedGainAndMatrix) {
  const Executable exe = withKernel(orthogonalInit());
  const json j = toJson(exe);
  const json& o = j["tensors"].back()["initialOrthogonal"];
  EXPECT_EQ(o, json({{"seed", 7}, {"gain", 1.5}, {"rows", 12}, {"cols", 8}}));
  EXPECT_FALSE(j["tensors"].back().contains("initialValue"));
  const Executable back = fromJson(j);
  EXPECT_NO_THROW(back.validate(4));
  ASSERT_TRUE(back.tensors.back().drawnInit);
  EXPECT_EQ(*back.tensors.back().drawnInit, orthogonalInit());
  EXPECT_EQ(toJson(back), j);
  // The values: 1.5 times orthonormal columns, the same for every reader.
  const std::vector<double> v = initialValues(back.tensors.back());
  ASSERT_EQ(v.size(), 96u);
  EXPECT_EQ(v, drawnValues(orthogonalInit(), 96));
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      double dot = 0;
      for (int i = 0; i < 12; ++i) dot += v[i * 8 + a] * v[i * 8 + b];
      EXPECT_NEAR(dot, a == b ? 2.25 : 0.0, 1e-5) << a << ", " << b;
    }
  DrawnInit other = orthogonalInit();
  other.seed = 8;
  EXPECT_NE(v, drawnValues(other, 96));
}

TEST(IrMatrixInit, IdentityRoundTripsAndIsTheGainOnTheDiagonal) {
  const Executable exe = withKernel(identityInit());
  const json j = toJson(exe);
  EXPECT_EQ(j["tensors"].back()["initialIdentity"], json({{"gain", 0.5}, {"rows", 12}, {"cols", 8}}));
  const Executable back = fromJson(j);
  EXPECT_NO_THROW(back.validate(4));
  EXPECT_EQ(*back.tensors.back().drawnInit, identityInit());
  const std::vector<double> v = initialValues(back.tensors.back());
  for (int i = 0; i < 12; ++i)
    for (int c = 0; c < 8; ++c) EXPECT_EQ(v[i * 8 + c], i == c ? 0.5 : 0.0) << i << ", " << c;
}

TEST(IrMatrixInit, NormalRoundTripsToo) {
  DrawnInit d;
  d.distribution = DrawnInit::Distribution::TruncatedNormal;
  d.seed = 3, d.center = 0.1, d.stddev = 0.2;
  const json j = toJson(withKernel(d));
  const Executable back = fromJson(j);
  EXPECT_EQ(*back.tensors.back().drawnInit, d);
  EXPECT_EQ(toJson(back), j);
}

TEST(IrMatrixInit, BadFormsNameTheirKey) {
  const json good = toJson(withKernel(orthogonalInit()));
  const std::size_t last = good["tensors"].size() - 1;
  const std::string at = "tensors[" + std::to_string(last) + "]";
  struct Case {
    std::function<void(json&)> damage;
    std::string expected;
  };
  const std::vector<Case> reading = {
      {[&](json& j) { j["tensors"][last]["initialOrthogonal"].erase("rows"); },
       at + ".initialOrthogonal.rows: missing (expected a positive integer)"},
      {[&](json& j) { j["tensors"][last]["initialOrthogonal"]["gain"] = "big"; },
       at + ".initialOrthogonal.gain: expected a number"},
      {[&](json& j) { j["tensors"][last]["initialOrthogonal"]["limit"] = 1; },
       at + ".initialOrthogonal.limit: unknown key"},
      {[&](json& j) { j["tensors"][last]["initialIdentity"] = {{"gain", 1}, {"rows", 12}, {"cols", 8}}; },
       "initialIdentity: a tensor has one of initialUniform, initialNormal, initialOrthogonal and initialIdentity; "
       "this one also has initialOrthogonal"},
  };
  for (const auto& c : reading) {
    json damaged = good;
    c.damage(damaged);
    const std::string message = errorOf([&] { fromJson(damaged); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << "got: " << message << "\nexpected: " << c.expected;
  }
  // Read, then refused by validation: the matrix must be the tensor's, the gain finite.
  const std::vector<Case> validating = {
      {[&](json& j) { j["tensors"][last]["initialOrthogonal"]["rows"] = 8; },
       "initialOrthogonal.rows x cols is 8 x 8, expected 96 elements (the tensor's)"},
      {[&](json& j) { j["tensors"][last]["initialOrthogonal"]["gain"] = nullptr; },
       "initialOrthogonal.gain must be a finite number"},
      {[&](json& j) {
         j["tensors"][last].erase("initialOrthogonal");
         j["tensors"][last]["initialIdentity"] = {{"gain", 1}, {"rows", 0}, {"cols", 8}};
       },
       "initialIdentity.rows x cols is 0 x 8, expected 96 elements (the tensor's)"},
  };
  for (const auto& c : validating) {
    json damaged = good;
    c.damage(damaged);
    const std::string message = errorOf([&] { fromJson(damaged).validate(4); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << "got: " << message << "\nexpected: " << c.expected;
  }
  DrawnInit wrong = orthogonalInit();
  wrong.rows = 5;
  EXPECT_NE(errorOf([&] { drawnValues(wrong, 96); }).find("a 5 x 8 matrix for 96 elements"), std::string::npos);
}

// The decomposition itself, in double: Q^T Q = I to 1e-9, tall and wide.
TEST(IrMatrixInit, QrOfAGaussianMatrixIsOrthonormalInDouble) {
  for (const auto& shape : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{256, 128}, {144, 32}, {20, 60}, {7, 7}}) {
    const std::uint64_t rows = shape.first, cols = shape.second;
    DrawnInit normal;
    normal.distribution = DrawnInit::Distribution::Normal, normal.seed = rows + cols, normal.stddev = 1;
    const std::vector<double> q = orthogonalFromGaussian(drawnValues(normal, rows * cols), rows, cols);
    // Orthonormal columns (rows >= cols) or rows (rows < cols).
    const bool tall = rows >= cols;
    const std::uint64_t n = tall ? cols : rows, m = tall ? rows : cols;
    auto at = [&](std::uint64_t k, std::uint64_t i) { return tall ? q[i * cols + k] : q[k * cols + i]; };
    double worst = 0;
    for (std::uint64_t a = 0; a < n; ++a)
      for (std::uint64_t b = 0; b <= a; ++b) {
        double dot = 0;
        for (std::uint64_t i = 0; i < m; ++i) dot += at(a, i) * at(b, i);
        worst = std::max(worst, std::fabs(dot - (a == b ? 1.0 : 0.0)));
      }
    EXPECT_LT(worst, 1e-9) << rows << " x " << cols;
  }
  EXPECT_THROW(orthogonalFromGaussian(std::vector<double>(5), 2, 3), std::invalid_argument);
}

}  // namespace test_ir_matrix_init
