// IdMaskScores: attention scores under Keras's attention mask (the query's,
// the value's and the causal masks ANDed, then Softmax's adder), for rows
// that start inside an example; its checks of the ids' size and flags.
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

namespace test_codelet_id_mask {

using namespace ipusim::model;
using namespace ipusim::model::testing;

namespace {

// 2 examples x 2 heads x 3 query steps = 12 rows of 3 value steps.
constexpr double kHeads = 2, kSteps = 3, kHidden = -1e9;
const std::vector<std::int32_t> kIds = {5, 0, 7,   // example 0: step 1 is padding
                                        0, 2, 2};  // example 1: step 0 is padding

// Rows [first, first + rows) of the 12, each score 1 + its element index.
std::vector<float> maskedRows(std::uint64_t first, std::uint64_t rows, bool query, bool value, bool causal) {
  const std::uint64_t firstExample = first / 6, lastExample = (first + rows - 1) / 6;
  std::vector<std::int32_t> ids(kIds.begin() + firstExample * 3, kIds.begin() + (lastExample + 1) * 3);
  std::vector<float> in(rows * 3);
  for (std::size_t e = 0; e < in.size(); ++e) in[e] = float(1 + e);
  std::vector<Buffer> buffers = {Buffer::ofInts(ids), Buffer::of(in), Buffer::of(std::vector<float>(rows * 3, -1.0f))};
  run("IdMaskScores", buffers,
      {{"firstRow", double(first)}, {"rows", double(rows)}, {"heads", kHeads}, {"querySteps", kSteps},
       {"valueSteps", kSteps}, {"steps", kSteps}, {"query", query}, {"value", value}, {"causal", causal},
       {"hidden", kHidden}});
  for (std::size_t e = 0; e < in.size(); ++e) buffers[2].floats[e] -= in[e];  // the adder alone
  return buffers[2].floats;
}

}  // namespace

TEST(IdMaskScores, HidesPaddedKeysOfEachExample) {
  const std::vector<float> adder = maskedRows(0, 12, false, true, false);
  for (std::uint64_t r = 0; r < 12; ++r)
    for (std::uint64_t j = 0; j < 3; ++j) {
      const bool hidden = kIds[(r / 6) * 3 + j] == 0;
      EXPECT_EQ(adder[r * 3 + j], hidden ? float(kHidden) : 0.0f) << "row " << r << " key " << j;
    }
}

// The query's mask hides a padded query's whole row; ANDed with the causal
// mask, an element hidden by both gets the adder once.
TEST(IdMaskScores, TheMasksAreAndedIntoOneAdder) {
  const std::vector<float> adder = maskedRows(0, 12, true, true, true);
  for (std::uint64_t r = 0; r < 12; ++r)
    for (std::uint64_t j = 0; j < 3; ++j) {
      const std::uint64_t example = r / 6, i = r % 3;
      const bool kept = kIds[example * 3 + i] != 0 && kIds[example * 3 + j] != 0 && j <= i;
      EXPECT_EQ(adder[r * 3 + j], kept ? 0.0f : float(kHidden)) << "row " << r << " key " << j;
    }
}

// A vertex whose rows start inside example 0 and end in example 1 (as a
// worker's share of a tile's rows) reads the ids of both.
TEST(IdMaskScores, RowsStartingInsideAnExampleReadItsIds) {
  const std::vector<float> all = maskedRows(0, 12, true, true, false);
  const std::vector<float> part = maskedRows(4, 5, true, true, false);
  for (std::size_t e = 0; e < part.size(); ++e) EXPECT_EQ(part[e], all[4 * 3 + e]) << e;
}

TEST(IdMaskScores, RefusesIdsOfAnotherSizeAndFlagsOtherThan0Or1) {
  const Codelet& c = CodeletRegistry::instance().get("IdMaskScores");
  std::map<std::string, double> params = {{"firstRow", 0}, {"rows", 6}, {"heads", 2}, {"querySteps", 3},
                                          {"valueSteps", 3}, {"steps", 3}, {"query", 1}, {"value", 1},
                                          {"causal", 0}, {"hidden", kHidden}};
  EXPECT_NO_THROW(c.validate(shapeOf(c, {3, 18, 18}, params)));
  EXPECT_THROW(c.validate(shapeOf(c, {6, 18, 18}, params)), std::invalid_argument);  // one example spanned, not two
  params["causal"] = 2;
  EXPECT_THROW(c.validate(shapeOf(c, {3, 18, 18}, params)), std::invalid_argument);
  params["causal"] = 0;
  params["steps"] = 4;  // the masked query has 3 steps
  EXPECT_THROW(c.validate(shapeOf(c, {4, 18, 18}, params)), std::invalid_argument);
}

// IdMaskLossWeights: Keras's apply_mask weights, m x total / (valid + 1e-7)
// in float: 6 rows, 4 kept.
TEST(IdMaskLossWeights, WeighTheKeptRowsSoThatTheMeanIsOverThem) {
  std::vector<Buffer> buffers = {Buffer::ofInts(kIds), Buffer::of(std::vector<float>(6, -1.0f))};
  run("IdMaskLossWeights", buffers, {{"rows", 6}});
  const float weight = 6.0f / (4.0f + 1e-7f);
  EXPECT_EQ(buffers[1].floats, (std::vector<float>{weight, 0, weight, 0, weight, weight}));
}

}  // namespace test_codelet_id_mask
