// Multi-region Copy programs in the IR: builder, validation, JSON.
#include "test_ir_graphs.hpp"

namespace test_ir_copy_regions {

using namespace ipusim::ir;
using namespace ipusim::ir::testing;
using nlohmann::json;

namespace {

// A gather: columns [1,3) of each row of a 3x4 matrix on tile 0 into one
// contiguous 3x2 buffer on tile 1, as one multi-region Copy (program 0).
Executable gatherGraph() {
  GraphBuilder b(smallTarget(), "gather");
  const Id m = b.addTensor("m", {3, 4}, DType::Float);
  const Id buffer = b.addTensor("buffer", {3, 2}, DType::Float);
  const Id labels = b.addTensor("labels", {2}, DType::Int);
  const Id labelsCopy = b.addTensor("labels_copy", {2}, DType::Int);
  b.setTileMapping(m, 0);
  b.setTileMapping(buffer, 1);
  b.setTileMapping(labels, 0);
  b.setTileMapping(labelsCopy, 1);
  std::vector<CopyRegion> regions;
  for (std::uint64_t row = 0; row < 3; ++row)
    regions.push_back({b.ref(m, row * 4 + 1, row * 4 + 3), b.ref(buffer, row * 2, row * 2 + 2)});
  regions.push_back({b.ref(labels), b.ref(labelsCopy)});
  const Id gather = b.copy(regions, "gather");
  b.addEntryPoint("main", gather);
  return b.finish();
}

std::string validateError(const std::function<void(Executable&)>& damage) {
  Executable exe = gatherGraph();
  damage(exe);
  return errorOf([&] { exe.validate(4); });
}

void expectError(const std::function<void(Executable&)>& damage, const std::string& text) {
  const std::string message = validateError(damage);
  EXPECT_NE(message.find(text), std::string::npos) << "got: " << message << "\nexpected: " << text;
}

}  // namespace

TEST(IrCopyRegions, BuilderStoresEveryRegionInOneProgram) {
  const Executable exe = gatherGraph();
  ASSERT_EQ(exe.programs.size(), 1u);
  const Program& p = exe.programs[0];
  EXPECT_EQ(p.kind, ProgramKind::Copy);
  ASSERT_EQ(p.regions.size(), 4u);
  EXPECT_EQ(p.regions[2].src, (TensorRef{0, 9, 11}));
  EXPECT_EQ(p.regions[2].dst, (TensorRef{1, 4, 6}));
  EXPECT_EQ(p.src.tensor, kNoId);  // unused when regions are given
  EXPECT_EQ(copyRegions(p), p.regions);
}

TEST(IrCopyRegions, OneRegionIsStoredAsASingleRegionCopy) {
  GraphBuilder b(smallTarget(), "one");
  const Id x = b.addTensor("x", {4}, DType::Float), y = b.addTensor("y", {4}, DType::Float);
  b.setTileMapping(x, 0);
  b.setTileMapping(y, 1);
  const Id c = b.copy(std::vector<CopyRegion>{{b.ref(x), b.ref(y)}}, "one");
  b.addEntryPoint("main", c);
  const Executable exe = b.finish();
  EXPECT_TRUE(exe.programs[0].regions.empty());
  EXPECT_EQ(exe.programs[0].src, (TensorRef{0, 0, 4}));
  EXPECT_EQ(copyRegions(exe.programs[0]), (std::vector<CopyRegion>{{{0, 0, 4}, {1, 0, 4}}}));
}

TEST(IrCopyRegions, BuilderRefusesMismatchedOrOutOfRangeRegions) {
  GraphBuilder b(smallTarget(), "bad");
  const Id x = b.addTensor("x", {4}, DType::Float), y = b.addTensor("y", {4}, DType::Float);
  EXPECT_NE(errorOf([&] { b.copy(std::vector<CopyRegion>{{b.ref(x), b.ref(y)}, {{x, 0, 2}, {y, 0, 3}}}, "g"); })
                .find("GraphBuilder::copy 'g': regions[1] src has 2 elements but dst has 3"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { b.copy(std::vector<CopyRegion>{{b.ref(x), b.ref(y)}, {{x, 0, 2}, {y, 3, 5}}}, "g"); })
                .find("elements [3,5) are outside tensor 'y'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { b.copy(std::vector<CopyRegion>{}, "g"); }).find("no regions"), std::string::npos);
}

TEST(IrCopyRegions, ValidateChecksEachPairSizeTypeAndRange) {
  expectError([](Executable& e) { e.programs[0].regions[1].dst.end = 5; },
              "programs[0] 'gather' (Copy): regions[1].src has 2 elements but regions[1].dst has 3");
  expectError([](Executable& e) { e.programs[0].regions[3].dst = {1, 0, 2}; },
              "programs[0] 'gather' (Copy): regions[3].src is int but regions[3].dst is float");
  expectError([](Executable& e) { e.programs[0].regions[0].src = {0, 11, 13}; },
              "regions[0].src elements [11,13) are outside tensor 'm' of 12 elements");
  expectError([](Executable& e) { e.programs[0].src = {0, 0, 1}; e.programs[0].dst = {1, 0, 1}; },
              "has both src/dst and regions");
}

// A 2-D region (rows at strides) is checked by its first and last rows.
TEST(IrCopyRegions, ValidateChecksA2DRegionsStridesAndLastRow) {
  // The gather's three rows as one region: m's columns [1,3) of rows 0..2 into buffer.
  auto asRows = [](Executable& e, CopyRegion rows) {
    e.programs[0].regions = {rows, e.programs[0].regions[3]};
  };
  Executable fine = gatherGraph();
  asRows(fine, {{0, 1, 3}, {1, 0, 2}, 3, 4, 2});
  EXPECT_NO_THROW(fine.validate(4));
  expectError([&](Executable& e) { asRows(e, {{0, 1, 3}, {1, 0, 2}, 3, 4, 1}); },
              "regions[0].dstStride 1 is less than a row (2 elements): its rows would overwrite each other");
  expectError([&](Executable& e) { asRows(e, {{0, 1, 3}, {1, 0, 2}, 3, 5, 2}); },
              "regions[0].last row's src elements [11,13) are outside tensor 'm' of 12 elements");
  expectError([&](Executable& e) { asRows(e, {{0, 1, 3}, {1, 0, 2}, 3, ~0ull / 2, 2}); },
              "regions[0].rows x stride overflows");
}

// Found by adversarial pass 18. 2^62 empty rows passed every check (their
// extent is empty), and the load walked them for ever; a 2-D region whose
// row read what an earlier row of it wrote passed (only other regions' rows
// were compared), and its rows, copied in order, read the new values.
TEST(IrCopyRegions, ValidateRefusesEmptyRowsAndARowReadingAnotherRowsOutput) {
  auto asRows = [](Executable& e, CopyRegion rows) { e.programs[0].regions = {rows, e.programs[0].regions[3]}; };
  expectError([&](Executable& e) { asRows(e, {{0, 1, 1}, {1, 0, 0}, std::uint64_t(1) << 62, 0, 0}); },
              "regions[0].rows is 4611686018427387904, but a row has 0 elements: expected rows of at least one "
              "element, or rows 1");
  expectError([&](Executable& e) { asRows(e, {{1, 0, 2}, {1, 2, 4}, 2, 2, 2}); },
              "regions[0].row 1's src [2,4) of tensor 'buffer' overlaps regions[0].row 0's dst [2,4) of tensor "
              "'buffer' (a Copy reads all its regions before writing any)");
  Executable shifted = gatherGraph();  // a row may still overlap its own destination (memmove)
  asRows(shifted, {{1, 0, 2}, {1, 1, 3}, 1, 0, 0});
  EXPECT_NO_THROW(shifted.validate(4));
}

TEST(IrCopyRegions, ValidateRefusesADestinationOverlappingAnotherRegion) {
  // Two regions writing the same buffer elements.
  expectError([](Executable& e) { e.programs[0].regions[1].dst = {1, 1, 3}; },
              "regions[1].dst [1,3) of tensor 'buffer' overlaps regions[0].dst [0,2) of tensor 'buffer'");
  // A region reading what another region writes (the exchange reads first).
  expectError([](Executable& e) { e.programs[0].regions[1].src = {1, 0, 2}; },
              "regions[1].src [0,2) of tensor 'buffer' overlaps regions[0].dst [0,2) of tensor 'buffer' "
              "(a Copy reads all its regions before writing any)");
  // A region's own source and destination may overlap (memmove, as a single-region Copy).
  Executable exe = gatherGraph();
  exe.programs[0].regions[0] = {{1, 0, 2}, {1, 1, 3}};
  exe.programs[0].regions[1] = {{0, 0, 2}, {1, 3, 5}};
  exe.programs[0].regions[2] = {{0, 4, 5}, {1, 5, 6}};
  EXPECT_NO_THROW(exe.validate(4));
}

TEST(IrCopyRegions, JsonRoundTripAndOldSingleRegionForm) {
  const Executable exe = gatherGraph();
  const json j = toJson(exe);
  ASSERT_TRUE(j["programs"][0].contains("regions"));
  EXPECT_FALSE(j["programs"][0].contains("src"));
  EXPECT_EQ(j["programs"][0]["regions"][1]["src"], (json{{"tensor", 0}, {"begin", 5}, {"end", 7}}));
  const Executable back = fromJson(j);
  EXPECT_EQ(back.programs[0].regions, exe.programs[0].regions);
  EXPECT_EQ(toJson(back), j);
  // A file of the original form (src and dst, no regions) still loads.
  json old = j;
  old["programs"][0].erase("regions");
  old["programs"][0]["src"] = {{"tensor", 0}, {"begin", 0}, {"end", 4}};
  old["programs"][0]["dst"] = {{"tensor", 0}, {"begin", 4}, {"end", 8}};
  const Executable single = fromJson(old);
  EXPECT_TRUE(single.programs[0].regions.empty());
  EXPECT_EQ(single.programs[0].dst, (TensorRef{0, 4, 8}));
}

TEST(IrCopyRegions, JsonErrorsNameTheRegionKey) {
  const json good = toJson(gatherGraph());
  json both = good;
  both["programs"][0]["src"] = {{"tensor", 0}, {"begin", 0}, {"end", 1}};
  EXPECT_NE(errorOf([&] { fromJson(both); }).find("programs[0]: has both \"regions\" and \"src\"/\"dst\""),
            std::string::npos);
  json empty = good;
  empty["programs"][0]["regions"] = json::array();
  EXPECT_NE(errorOf([&] { fromJson(empty); }).find("programs[0].regions: expected at least one region"),
            std::string::npos);
  json missing = good;
  missing["programs"][0]["regions"][2].erase("dst");
  EXPECT_NE(errorOf([&] { fromJson(missing); }).find("programs[0].regions[2].dst: missing (expected a tensor region)"),
            std::string::npos);
  json extra = good;
  extra["programs"][0]["regions"][0]["size"] = 2;
  EXPECT_NE(errorOf([&] { fromJson(extra); }).find("programs[0].regions[0].size: unknown key"), std::string::npos);
}

}  // namespace test_ir_copy_regions
