// CopyRuns: moves grouped into strided runs, copied whole or in parts.
#include "model/hardware/copy_runs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace test_copy_runs {

using ipusim::model::hardware::CopyRuns;
using ipusim::model::hardware::ExchangeTransfer;

namespace {

struct Memory {
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(4096), dst = std::vector<std::uint8_t>(16384, 0xee);
  Memory() { std::iota(src.begin(), src.end(), std::uint8_t(1)); }
};

// Rows of a strided gather (as the compiler's operand gathers are), moves of
// assorted sizes (the fixed-size copy loops and the generic one), and a move
// that does not continue the previous run.
std::vector<ExchangeTransfer> someMoves(Memory& m) {
  std::vector<ExchangeTransfer> t;
  for (std::size_t row = 0; row < 11; ++row) t.push_back({m.src.data() + row * 96, m.dst.data() + row * 48, 48});
  std::size_t at = 600;  // destinations never overlap: the moves are independent
  for (std::size_t size : {4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 112, 128, 7, 200}) {
    for (std::size_t i = 0; i < 3; ++i) t.push_back({m.src.data() + 1200 + i * 300, m.dst.data() + at + i * 256, size});
    at += 800;
  }
  t.push_back({m.src.data() + 5, m.dst.data() + 16000, 40});
  return t;
}

std::vector<std::uint8_t> oneByOne(const std::vector<ExchangeTransfer>& moves, Memory& m) {
  std::vector<std::uint8_t> out = m.dst;
  for (const ExchangeTransfer& t : moves) std::memcpy(out.data() + (t.dst - m.dst.data()), t.src, t.bytes);
  return out;
}

}  // namespace

TEST(CopyRuns, GroupsEqualSizedMovesWithConstantStepsIntoRuns) {
  Memory m;
  const auto moves = someMoves(m);
  const CopyRuns runs(moves, true);
  EXPECT_EQ(runs.numMoves(), moves.size());
  EXPECT_EQ(runs.numRuns(), 1u + 14u + 1u);  // the gather, one run per size, the last move
  std::uint64_t total = 0;
  for (const ExchangeTransfer& t : moves) total += t.bytes;
  EXPECT_EQ(runs.totalBytes(), total);
}

TEST(CopyRuns, WholeAndEveryPartitionIntoPartsMoveTheSameBytes) {
  Memory m;
  const auto moves = someMoves(m);
  const auto expected = oneByOne(moves, m);
  const CopyRuns runs(moves, true);
  runs.execute();
  EXPECT_EQ(m.dst, expected);
  // Parts cut moves anywhere (also inside one move); together they cover each byte once.
  for (unsigned parts : {2u, 3u, 7u, 64u, 5000u}) {
    std::fill(m.dst.begin(), m.dst.end(), 0xee);
    for (unsigned part = 0; part < parts; ++part) runs.executePart(part, parts);
    EXPECT_EQ(m.dst, expected) << parts << " parts";
  }
}

TEST(CopyRuns, DependentMovesRunInOrderAsMemmove) {
  std::vector<std::uint8_t> bytes(64);
  std::iota(bytes.begin(), bytes.end(), std::uint8_t(0));
  // The second move reads what the first wrote; the third overlaps itself.
  const std::vector<ExchangeTransfer> moves = {
      {bytes.data(), bytes.data() + 16, 8}, {bytes.data() + 16, bytes.data() + 32, 8}, {bytes.data() + 40, bytes.data() + 42, 10}};
  std::vector<std::uint8_t> expected = bytes;
  for (const ExchangeTransfer& t : moves)
    std::memmove(expected.data() + (t.dst - bytes.data()), expected.data() + (t.src - bytes.data()), t.bytes);
  CopyRuns(moves, false).execute();
  EXPECT_EQ(bytes, expected);
}

}  // namespace test_copy_runs
