// Code memory (model/ir/code_memory.hpp): the counts a tile's code is made
// of, read from an executable's compute sets and programs (each laid out
// once, however often it runs), the bytes they give, and the always-live
// tensors that put them in the one per-tile memory figure.
#include "model/ir/code_memory.hpp"
#include "model/ir/tile_memory_usage.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ipusim::ir::test_code_memory {
namespace {

Tensor tensorOn(Id id, const std::string& name, std::vector<TileInterval> mapping, std::uint64_t elements) {
  Tensor t;
  t.id = id;
  t.name = name;
  t.shape = {elements};
  t.mapping = std::move(mapping);
  return t;
}

Vertex vertex(const char* codelet, std::uint32_t tile, std::size_t fields, std::size_t params) {
  Vertex v;
  v.codelet = codelet;
  v.tile = tile;
  for (std::size_t f = 0; f < fields; ++f) v.fields.push_back({"in" + std::to_string(f), {0, 0, 1}});
  for (std::size_t p = 0; p < params; ++p) v.params["p" + std::to_string(p)] = 1;
  return v;
}

// Three tiles: `a` (8 elements) half on tile 0, half on tile 1; `b` (8) on tile 2.
Executable smallExecutable() {
  Executable exe;
  exe.tensors.push_back(tensorOn(0, "a", {{0, 0, 4}, {1, 4, 8}}, 8));
  exe.tensors.push_back(tensorOn(1, "b", {{2, 0, 8}}, 8));
  ComputeSet cs;
  cs.name = "cs";
  cs.vertices = {vertex("Add", 0, 3, 1), vertex("Add", 0, 3, 1), vertex("Scale", 0, 2, 2), vertex("Add", 1, 3, 0)};
  exe.addComputeSet(cs);
  Program execute;
  execute.kind = ProgramKind::Execute;
  execute.computeSet = 0;
  const Id run = exe.addProgram(execute);
  Program repeat;  // runs the Execute 5 times: its code is laid out once
  repeat.kind = ProgramKind::Repeat;
  repeat.count = 5;
  repeat.children = {run};
  exe.addProgram(repeat);
  // a[0..8) -> b[0..8) in two regions: tiles 0 -> 2 and 1 -> 2, plus a
  // second region 0 -> 2 (the same pair: one message).
  Program copy;
  copy.kind = ProgramKind::Copy;
  copy.regions = {{{0, 0, 6}, {1, 0, 6}}, {{0, 1, 2}, {1, 6, 7}}};
  exe.addProgram(copy);
  Program stream;
  stream.kind = ProgramKind::StreamCopy;
  stream.tensor = {0, 2, 6};  // on tiles 0 and 1
  exe.addProgram(stream);
  return exe;
}

TEST(CodeMemory, CountsCodeletsVerticesStepsAndMessagesPerTile) {
  const std::vector<CodeCounts> c = countCodeOnTiles(smallExecutable(), 4, model::TileParams{});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].codelets, 2u);  // Add and Scale
  EXPECT_EQ(c[0].vertices, 3u);
  EXPECT_EQ(c[0].fields, 8u);
  EXPECT_EQ(c[0].params, 4u);
  EXPECT_EQ(c[1].codelets, 1u);
  EXPECT_EQ(c[1].vertices, 1u);
  // Tile 0: the Execute, the Copy, the StreamCopy (the Repeat holds no step of its own).
  EXPECT_EQ(c[0].steps, 3u);
  EXPECT_EQ(c[1].steps, 3u);
  EXPECT_EQ(c[2].steps, 1u);  // the Copy only
  EXPECT_EQ(c[3].steps, 0u);
  // Messages: tile 2 receives one from tile 0 (both regions: one message)
  // and one from tile 1; tile 0 sends its two pieces (a[0..4) and a[1..2)),
  // tile 1 its one; the stream one on each of tiles 0 and 1.
  EXPECT_EQ(c[0].messages, 3u);
  EXPECT_EQ(c[1].messages, 2u);
  EXPECT_EQ(c[2].messages, 2u);
  EXPECT_EQ(c[3].messages, 0u);
}

TEST(CodeMemory, BytesAreTheCountsTimesTheConstantsInWholeWords) {
  CodeMemoryParams p;
  p.codeletBytes = 100;
  p.fieldBytes = 4;
  p.paramBytes = 2;
  p.tileVertexStateBytes = 10;
  p.stepControlBytes = 3;
  p.messageExchangeBytes = 5;
  CodeCounts c;
  c.codelets = 2, c.vertices = 3, c.fields = 8, c.params = 3, c.steps = 3, c.messages = 3;
  const CodeBytes b = codeBytes(c, p);
  EXPECT_EQ(b.vertexCode, 200u);
  EXPECT_EQ(b.vertexState, 48u);  // 32 + 6 + 10 = 48
  EXPECT_EQ(b.controlCode, 12u);  // 9 rounded up to a word
  EXPECT_EQ(b.exchangeCode, 16u);  // 15 rounded up
  EXPECT_EQ(b.total(), 276u);
  // A tile running nothing holds nothing, not even the fixed state.
  EXPECT_EQ(codeBytes(CodeCounts{}, p).total(), 0u);
}

TEST(CodeMemory, TensorsPutTheCodeInTheTilesMemoryFigure) {
  Executable exe = smallExecutable();
  const std::vector<CodeBytes> perTile = codeBytesPerTile(exe, 4, model::TileParams{});
  const std::vector<Id> added = addCodeMemoryTensors(exe, perTile);
  ASSERT_EQ(added.size(), 4u);
  const char* categories[] = {kVertexCodeCategory, kVertexStateCategory, kControlCodeCategory, kExchangeCodeCategory};
  for (std::size_t k = 0; k < added.size(); ++k) {
    const Tensor& t = exe.tensors.at(added[k]);
    EXPECT_EQ(t.id, added[k]);
    EXPECT_EQ(t.category, categories[k]);
    EXPECT_TRUE(t.alwaysLive);
    EXPECT_EQ(t.dtype, DType::UInt);
  }
  // Tile 3 runs nothing: no tensor has an interval there.
  for (Id id : added)
    for (const TileInterval& iv : exe.tensors[id].mapping) EXPECT_NE(iv.tile, 3u);
  // Placed one after another, the tile's figure is its tensors' plus its code.
  for (Tensor& t : exe.tensors) {
    std::uint64_t at = 0;
    for (TileInterval& iv : t.mapping) iv.address = (std::uint64_t(t.id) + 1) << 20 | at, at += (iv.end - iv.begin) * 4;
  }
  std::uint64_t codeOnTile0 = 0;
  const std::vector<TileMemoryUsage> usage = tileMemoryUsage(exe.tensors, 4);
  for (const CategoryBytes& cat : usage.at(0).categories)
    if (cat.category != "temporaries") codeOnTile0 += cat.bytes;
  EXPECT_EQ(codeOnTile0, perTile[0].total());
}

TEST(CodeMemory, AVertexOrMappingBeyondTheTilesIsNamed) {
  Executable exe = smallExecutable();
  exe.computeSets[0].vertices.push_back(vertex("Add", 9, 1, 0));
  try {
    countCodeOnTiles(exe, 4, model::TileParams{});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("compute set 'cs' has a vertex on tile 9, but there are 4 tiles"),
              std::string::npos)
        << e.what();
  }
  Executable mapped = smallExecutable();
  mapped.tensors[1].mapping[0].tile = 7;
  EXPECT_THROW(countCodeOnTiles(mapped, 4, model::TileParams{}), std::invalid_argument);
}

}  // namespace
}  // namespace ipusim::ir::test_code_memory
