// Non-finite figures (a diverging training's loss) are named the same way in
// --json ("nan", "inf", "-inf") and in text, whatever a NaN's sign bit.
#include "profiler/analysis/json_number.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ipusim::profiler::analysis::test_json_number {
namespace {

TEST(JsonNumber, NonFiniteValuesAreNamedNotNull) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(jsonNumber(nan), "nan");
  EXPECT_EQ(jsonNumber(-nan), "nan");
  EXPECT_EQ(jsonNumber(inf), "inf");
  EXPECT_EQ(jsonNumber(-inf), "-inf");
  EXPECT_EQ(jsonNumber(0.25), 0.25);
  EXPECT_EQ(numberText(std::copysign(nan, -1.0)), "nan");
  EXPECT_EQ(numberText(-inf), "-inf");
  EXPECT_EQ(numberText(2.5), "2.5");
  EXPECT_TRUE(std::isnan(numberFromJson("nan", "k")));
  EXPECT_EQ(numberFromJson("-inf", "k"), -inf);
  EXPECT_EQ(numberFromJson(3, "k"), 3.0);
  EXPECT_THROW(numberFromJson(nullptr, "k"), std::invalid_argument);
  EXPECT_THROW(numberFromJson("NaN", "k"), std::invalid_argument);
}

}  // namespace
}  // namespace ipusim::profiler::analysis::test_json_number
