// Copy, Cast, Fill: values and cycles.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

namespace test_codelet_data_movement {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

TEST(DataMovementCodelets, CopyCopies) {
  const auto in = pseudoRandom(19, 41);
  std::vector<Buffer> buffers = {Buffer::of(in), Buffer::of(std::vector<float>(19, 0.0f))};
  run("Copy", buffers);
  EXPECT_EQ(buffers[1].floats, in);
}

TEST(DataMovementCodelets, CastConvertsIntsToFloats) {
  std::vector<std::int32_t> in = {0, 1, -7, 123456, 2147483647, -2147483647 - 1, 9, 8, 7, 6, 5};
  std::vector<Buffer> buffers = {Buffer::ofInts(in), Buffer::of(std::vector<float>(in.size(), -1.0f))};
  run("Cast", buffers);
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(buffers[1].floats[i], static_cast<float>(in[i]));
}

TEST(DataMovementCodelets, FillWritesTheValue) {
  std::vector<Buffer> buffers = {Buffer::of(std::vector<float>(13, 5.0f))};
  run("Fill", buffers, {{"value", 0}});
  EXPECT_EQ(buffers[0].floats, std::vector<float>(13, 0.0f));
  run("Fill", buffers, {{"value", -2.5}});
  EXPECT_EQ(buffers[0].floats, std::vector<float>(13, -2.5f));
  EXPECT_THROW(orderedParams(CodeletRegistry::instance().get("Fill"), {}), std::invalid_argument);  // value is required
}

TEST(DataMovementCodelets, Cycles) {
  EXPECT_EQ(cyclesOf("Copy", {9, 9}), cyc::kCopyVertexOverhead + 5 * cyc::kSimpleOpCyclesPerVector);
  EXPECT_EQ(cyclesOf("Fill", {9}, {{"value", 1}}), cyc::kFillVertexOverhead + 5 * cyc::kSimpleOpCyclesPerVector);
  // Cast is not vectorised: 2 cycles per element (Cast2D INT -> FLOAT: 5 + 11 + 19 + 2 x 9).
  EXPECT_EQ(cyclesOf("Cast", {9, 9}), cyc::kCastVertexOverhead + 9 * cyc::kIntToFloatCyclesPerElement);
  EXPECT_EQ(cyclesOf("Cast", {9, 9}), 53u);
  EXPECT_THROW(cyclesOf("Cast", {9, 8}), std::invalid_argument);
}

}  // namespace test_codelet_data_movement
