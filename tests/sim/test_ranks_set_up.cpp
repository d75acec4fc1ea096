// What rank 0 says of the ranks' set-up errors under mpirun
// (sim/cli/ranks_set_up.hpp): an error every rank found alike once, as one
// process says it; errors some ranks found naming them, once per distinct text.
#include "sim/cli/ranks_set_up.hpp"

#include <gtest/gtest.h>

namespace ipusim::sim::test_ranks_set_up {
namespace {

using Lines = std::vector<std::string>;

TEST(RanksSetUp, NothingWhenEveryRankSucceeded) {
  EXPECT_EQ(setUpFailureLines({"", "", ""}), Lines{});
  EXPECT_EQ(setUpFailureLines({}), Lines{});
}

TEST(RanksSetUp, AnErrorEveryRankFoundIsSaidOnceWithoutRanks) {
  EXPECT_EQ(setUpFailureLines({"w.json: cannot open it", "w.json: cannot open it"}), Lines{"w.json: cannot open it"});
  EXPECT_EQ(setUpFailureLines({"e"}), Lines{"e"});
}

TEST(RanksSetUp, AnErrorSomeRanksFoundNamesThem) {
  EXPECT_EQ(setUpFailureLines({"", "missing.idx: cannot open dataset file"}),
            Lines{"rank 1 of 2: missing.idx: cannot open dataset file"});
  EXPECT_EQ(setUpFailureLines({"e", "", "f", "e"}), (Lines{"ranks 0, 3 of 4: e", "rank 2 of 4: f"}));
  // Every rank failed, not alike: each error once, in rank order.
  EXPECT_EQ(setUpFailureLines({"a", "b", "a"}), (Lines{"ranks 0, 2 of 3: a", "rank 1 of 3: b"}));
}

}  // namespace
}  // namespace ipusim::sim::test_ranks_set_up
