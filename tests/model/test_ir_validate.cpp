// Executable::validate: each structural error names the element by its path.
#include "test_ir_graphs.hpp"

namespace test_ir_validate {

using namespace ipusim::ir;
using namespace ipusim::ir::testing;

namespace {

std::string validateError(const std::function<void(Executable&)>& damage, std::uint32_t tiles = 4) {
  Executable exe = everyKindGraph();
  damage(exe);
  return errorOf([&] { exe.validate(tiles); });
}

// A function, not a macro: the damage lambdas contain braced lists with commas.
void expectError(const std::function<void(Executable&)>& damage, const std::string& text) {
  const std::string message = validateError(damage);
  EXPECT_NE(message.find(text), std::string::npos) << "got: " << message << "\nexpected: " << text;
}

}  // namespace

TEST(IrValidate, AValidExecutablePasses) { EXPECT_NO_THROW(everyKindGraph().validate(4)); }

TEST(IrValidate, VertexFieldsMustBeOnTheVertexTile) {
  expectError([](Executable& e) { e.computeSets[0].vertices[0].fields[1].ref = {1, 0, 8}; },
               "computeSets[0] 'fwd/matmul' vertex 0: field 'b' elements [0,4) of tensor 'w1' are not on tile 1 "
               "(they are on tile 0)");
  // A field spanning several intervals: the part on tile 1 is fine, the part on tile 2 is named.
  expectError([](Executable& e) {
                e.computeSets[0].vertices[0].tile = 1;
                e.computeSets[0].vertices[0].fields = {{"b", {1, 4, 12}}};
              },
              "field 'b' elements [8,12) of tensor 'w1' are not on tile 1 (they are on tile 2)");
  expectError([](Executable& e) { e.computeSets[1].vertices[0].tile = 9; },
               "computeSets[1] 'fwd/relu' vertex 0: tile 9 is out of range (the target has 4 tiles)");
  expectError([](Executable& e) { e.computeSets[1].vertices[0].fields[0].ref.end = 9; },
               "computeSets[1] 'fwd/relu' vertex 0: field 'in' elements [0,9) are outside tensor 'y' of 8 elements");
  expectError([](Executable& e) { e.computeSets[1].vertices[0].fields[1].name = "in"; },
               "field 'in' is connected twice");
  expectError([](Executable& e) { e.computeSets[1].vertices[0].fields[0].ref.tensor = 42; },
               "field 'in' refers to tensor 42, but there are 6 tensors");
}

// Program 3 runs 'fwd/relu' on 'y' (tensor 2); `to` is y's copy as tensor 6,
// on y's tile unless `tile` says otherwise.
void renameY(Executable& e, std::uint32_t tile = 1) {
  Tensor copy = e.tensors[2];
  copy.id = Id(e.tensors.size());
  copy.name = "y [mini-batch 1]";
  for (TileInterval& iv : copy.mapping) iv.tile = tile;
  e.tensors.push_back(copy);
  e.programs[3].renames = {{2, copy.id}};
}

TEST(IrValidate, AnExecutesRenamesAreSortedInRangeAndLaidOutAsTheTensorsTheyReplace) {
  Executable ok = everyKindGraph();
  renameY(ok);
  EXPECT_NO_THROW(ok.validate(4));
  expectError([](Executable& e) { e.programs[3].renames = {{2, 42}}; },
              "programs[3] 'fwd/relu' (Execute): renames[0]: tensor 42 is out of range (there are 6 tensors)");
  expectError([](Executable& e) { e.programs[3].renames = {{2, 2}, {1, 1}}; },
              "renames[1]: from 1 is not above the previous rename's 2 (renames are sorted by 'from', each "
              "tensor once)");
  expectError([](Executable& e) { e.programs[3].renames = {{2, 3}}; },
              "renames[0]: tensor 'w1_local' (12 float) does not have the shape of 'y' (8 float)");
  expectError([](Executable& e) { renameY(e, 0); },
              "renames[0]: tensor 'y [mini-batch 1]' is not mapped over the tiles of 'y' interval by interval");
}

// Many programs renaming a tensor of many intervals (adversarial pass 20):
// each rename compared the two mappings interval by interval, programs x
// intervals in all (here 5e9 comparisons, 4.6 s; an 18 MB graph of 40,000
// programs and 200,000 intervals spent 14 s of its 16 s load there, and a
// graph of 1 GiB could take days). Each tensor's layout is read once now.
TEST(IrValidate, RenamesOfALargeTensorReadItsLayoutOnce) {
  Executable e = everyKindGraph();
  constexpr std::uint64_t kIntervals = 100'000;
  for (const char* name : {"a", "a [mini-batch 1]"}) {
    Tensor t;
    t.id = Id(e.tensors.size());
    t.name = name;
    t.dtype = DType::Float;
    t.shape = {kIntervals};
    for (std::uint64_t i = 0; i < kIntervals; ++i) t.mapping.push_back({std::uint32_t(i % 4), i, i + 1});
    e.tensors.push_back(std::move(t));
  }
  const Id a = Id(e.tensors.size() - 2);
  for (int k = 0; k < 50'000; ++k) {
    Program p = e.programs[3];
    p.id = Id(e.programs.size());
    p.renames = {{a, a + 1}};
    e.programs.push_back(std::move(p));
  }
  EXPECT_NO_THROW(e.validate(4));
  e.tensors.back().mapping[kIntervals - 1].tile = 0;  // its last element moved: refused still
  EXPECT_NE(errorOf([&] { e.validate(4); }).find("renames[0]: tensor 'a [mini-batch 1]' is not mapped over the tiles "
                                                   "of 'a' interval by interval"),
            std::string::npos);
}

// A Copy moving program 1's regions ('w1' to 'w1_local', tensor 3) into a
// copy of 'w1_local' (tensor 6).
void renamedBring(Executable& e) {
  Tensor copy = e.tensors[3];
  copy.id = Id(e.tensors.size());
  copy.name = "w1_local [mini-batch 1]";
  e.tensors.push_back(copy);
  Program p;
  p.kind = ProgramKind::Copy;
  p.name = "w1->tile1 [mini-batch 1]";
  p.copyOf = 1;
  p.renames = {{3, copy.id}};
  p.id = Id(e.programs.size());
  e.programs.push_back(p);
}

TEST(IrValidate, ACopyOfAnotherCopysRegionsNamesAHolderAndMovesAValidCopy) {
  Executable ok = everyKindGraph();
  renamedBring(ok);
  EXPECT_NO_THROW(ok.validate(4));
  expectError([](Executable& e) { renamedBring(e), e.programs.back().copyOf = 99; },
              "(Copy): copyOf 99 is out of range (there are 13 programs)");
  expectError([](Executable& e) { renamedBring(e), e.programs.back().copyOf = 2; },
              "copyOf 2 ('fwd/matmul') is not a Copy holding its own regions");
  expectError([](Executable& e) { renamedBring(e), e.programs.back().src = {3, 0, 12}; },
              "has copyOf and regions of its own; expected one or the other");
  // Renamed onto its own source, the copy would read and write 'w1' at once.
  expectError([](Executable& e) { renamedBring(e), e.programs.back().renames = {{1, 3}}; },
              "renames[0]: tensor 'w1_local' is not mapped over the tiles of 'w1' interval by interval");
  expectError([](Executable& e) { e.programs[1].renames = {{3, 3}}; },
              "has renames but no copyOf (a Copy renames another Copy's tensors)");
}

TEST(IrValidate, MappingsMustBeSortedNonOverlappingAndComplete) {
  expectError([](Executable& e) { std::swap(e.tensors[1].mapping[0], e.tensors[1].mapping[1]); },
               "tensors[1] 'w1': elements [0,4) are not mapped to any tile");
  expectError([](Executable& e) { e.tensors[1].mapping[1].begin = 2; },
               "tensors[1] 'w1': mapping[1] [2,8) overlaps or is out of order (previous interval ends at 4)");
  expectError([](Executable& e) { e.tensors[1].mapping.pop_back(); },
               "tensors[1] 'w1': elements [8,12) are not mapped to any tile");
  expectError([](Executable& e) { e.tensors[1].mapping[2].end = 13; },
               "tensors[1] 'w1': mapping[2] [8,13) goes past the tensor's 12 elements");
  expectError([](Executable& e) { e.tensors[4].mapping[0].tile = 4; },
               "tensors[4] 'continue': mapping[0] [0,1) is on tile 4, but the target has 4 tiles");
  expectError([](Executable& e) { e.tensors[1].initialValue.pop_back(); },
               "tensors[1] 'w1': initialValue has 11 values, expected 12 (or none)");
  expectError([](Executable& e) { e.tensors[3].id = 7; }, "tensors[3] 'w1_local': id is 7, expected its index 3");
}

TEST(IrValidate, ProgramsAreCheckedByKind) {
  expectError([](Executable& e) { e.programs[6].children.push_back(0); },
               "programs[6] 'loop' (Repeat): Repeat needs 1 child program(s), has 2");
  expectError([](Executable& e) { e.programs[2].computeSet = 5; },
               "programs[2] 'fwd/matmul' (Execute): computeSet 5 is out of range (there are 2 compute sets)");
  expectError([](Executable& e) { e.programs[1].dst.end = 11; },
               "programs[1] 'w1->tile1' (Copy): src has 12 elements but dst has 11");
  expectError([](Executable& e) { e.programs[1].dst = {5, 0, 2}; e.programs[1].src.end = 2; },
               "programs[1] 'w1->tile1' (Copy): src is float but dst is int");
  expectError([](Executable& e) { e.programs[0].tensor = {5, 0, 2}; e.streams[0].elementsPerCopy = 2; },
               "programs[0] 'infeed' (StreamCopy): tensor is int but stream 'infeed' is float");
  expectError([](Executable& e) { e.programs[0].tensor = {3, 0, 8}; },
               "programs[0] 'infeed' (StreamCopy): tensor region has 8 elements but stream 'infeed' copies 6");
  expectError([](Executable& e) { e.programs[9].condition = {0, 0, 1}; },
               "programs[9] 'while' (RepeatWhileTrue): condition tensor 'x' must be bool, int or uint, not float");
  expectError([](Executable& e) { e.programs[11].condition = {5, 0, 2}; },
               "programs[11] 'if' (If): condition must be one element, got 2");
  expectError([](Executable& e) { e.programs[8].callee = kNoId; },
               "programs[8] 'call' (Call): callee is not set (there are 12 programs)");
  expectError([](Executable& e) { e.programs[10].children = {0}; },
               "programs[10] 'sync' (Sync): Sync needs 0 child program(s), has 1");
  expectError([](Executable& e) { e.programs[5].children.push_back(11); }, "is part of a cycle");
  expectError([](Executable& e) { e.programs[5].ipusApart = true; },
               "programs[5] 'step' (Sequence): children[0] ('infeed') is a StreamCopy; a Sequence with ipusApart "
               "runs Execute and Copy children only");
  expectError([](Executable& e) { e.programs[6].ipusApart = true; },
               "programs[6] 'loop' (Repeat): ipusApart is set, but only a Sequence runs its IPUs apart");
  expectError([](Executable& e) { e.entryPoints[1].name = "train"; },
               "entryPoints[1] 'train': name is already used by entryPoints[0]");
  expectError([](Executable& e) { e.entryPoints[0].program = 12; },
               "entryPoints[0] 'train': program 12 is out of range (there are 12 programs)");
  expectError([](Executable& e) { e.streams[1].name = "infeed"; },
               "streams[1] 'infeed': name is already used by streams[0]");
}

TEST(IrValidate, TileCountComesFromTheCaller) {
  const Executable exe = everyKindGraph();
  const std::string message = errorOf([&] { exe.validate(2); });
  EXPECT_NE(message.find("tensors[1] 'w1': mapping[2] [8,12) is on tile 2, but the target has 2 tiles"),
            std::string::npos)
      << message;
}

}  // namespace test_ir_validate
