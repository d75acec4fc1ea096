// estimateCopy: a Copy's cycles as the exchange fabric times it, from the
// tensors' mappings: the busiest tile's bytes received from other tiles or
// sent to them, a sender's repeated elements sent once with multicast.
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "small_target.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler::copy_estimate_test {
namespace {

using testing::ipu2;

// A float tensor of `n` elements in equal blocks on tiles 0, 1, ...
ir::Id blocks(IrBuilder& b, const std::string& name, std::uint64_t n, std::uint32_t tiles) {
  Placement placement;
  for (std::uint32_t t = 0; t < tiles; ++t) placement.push_back({n * t / tiles, n * (t + 1) / tiles, t});
  return b.addTensor(name, {n}, ir::DType::Float, "activations", true, placement);
}

model::Target withMulticast(bool multicast) {
  model::Target target = ipu2(4);
  target.exchange.multicast = multicast ? 1 : 0;
  return target;
}

TEST(CopyEstimate, ABroadcastIsSentOnceWithMulticastAndOncePerReceiverWithout) {
  for (const bool multicast : {true, false}) {
    const model::Target target = withMulticast(multicast);
    IrBuilder b(target);
    b.beginOp({"layer", "broadcast"});
    const ir::Id src = blocks(b, "src", 400, 4);   // 100 elements a tile
    const ir::Id dst = blocks(b, "dst", 1200, 4);  // 300 a tile
    // Tile 0's 100 elements to each of tiles 1, 2 and 3: each receives 400
    // bytes; tile 0 sends 400 bytes with multicast, 1,200 without.
    const std::vector<ir::CopyRegion> regions{{{src, 0, 100}, {dst, 300, 400}},
                                              {{src, 0, 100}, {dst, 600, 700}},
                                              {{src, 0, 100}, {dst, 900, 1000}}};
    EXPECT_EQ(estimateCopy(b, regions), exchangePhaseCycles(multicast ? 400 : 1200, target)) << multicast;
  }
}

TEST(CopyEstimate, OverlappingRangesOfASenderAreTheirUnionInAnyOrder) {
  const model::Target target = withMulticast(true);
  IrBuilder b(target);
  b.beginOp({"layer", "halo"});
  const ir::Id src = blocks(b, "src", 400, 4);
  const ir::Id dst = blocks(b, "dst", 4000, 4);  // 1,000 a tile
  // Tile 0 sends [40, 90), then [10, 60) and [0, 20) (overlapping, out of
  // order): its union [0, 90), 360 bytes; each receiver takes less.
  const std::vector<ir::CopyRegion> regions{{{src, 40, 90}, {dst, 1000, 1050}},
                                            {{src, 10, 60}, {dst, 2000, 2050}},
                                            {{src, 0, 20}, {dst, 3000, 3020}}};
  EXPECT_EQ(estimateCopy(b, regions), exchangePhaseCycles(90 * 4, target));
}

TEST(CopyEstimate, ARowsRegionCrossesTilesPieceByPieceAndLocalPiecesCostNothing) {
  const model::Target target = withMulticast(true);
  IrBuilder b(target);
  b.beginOp({"layer", "rows"});
  const ir::Id src = blocks(b, "src", 400, 4);
  const ir::Id dst = blocks(b, "dst", 400, 4);
  // Rows of 30 elements every 100, each row from one tile's block to the
  // same place on the same tile: nothing crosses tiles.
  ir::CopyRegion local{{src, 10, 40}, {dst, 10, 40}, 4, 100, 100};
  EXPECT_EQ(estimateCopy(b, {local}), 0u);
  // Three of those rows written 75 elements on: each row's last 15
  // elements land on the next tile, so tiles 1, 2 and 3 each receive 60
  // bytes, and tiles 0, 1 and 2 each send 60.
  ir::CopyRegion shifted{{src, 10, 40}, {dst, 85, 115}, 3, 100, 100};
  EXPECT_EQ(estimateCopy(b, {shifted}), exchangePhaseCycles(15 * 4, target));
}

}  // namespace
}  // namespace ipusim::scheduler::copy_estimate_test
