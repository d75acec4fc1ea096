// Memory categories get distinct colours (the stacked bars and the legend
// must tell weights from activations), none of them a compute pink.
#include "viewer/core/colours.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace ipusim::viewer::memory_colours_test {
namespace {

TEST(MemoryColours, KnownCategoriesAreDistinctAndStable) {
  const std::vector<std::string> known = {"weights",        "activations",  "gradients",    "temporaries",
                                          "stream_buffers", "vertex_code",  "vertex_state", "control_code",
                                          "exchange_code",  "optimizer"};
  std::set<Rgba> seen;
  for (std::size_t i = 0; i < known.size(); ++i) {
    // The colour is the category's, whatever its place in the legend.
    EXPECT_EQ(memoryCategoryColour(known[i], i), memoryCategoryColour(known[i], i + 3)) << known[i];
    EXPECT_TRUE(seen.insert(memoryCategoryColour(known[i], i)).second) << known[i] << " repeats a colour";
  }
}

TEST(MemoryColours, UnknownCategoriesDifferByLegendPositionAndAreNotComputePink) {
  std::set<Rgba> seen;
  for (std::size_t i = 0; i < 10; ++i) {
    const Rgba c = memoryCategoryColour("custom_" + std::to_string(i), i);
    EXPECT_TRUE(seen.insert(c).second) << "position " << i;
    for (int depth = 0; depth <= 4; ++depth) EXPECT_NE(c, computeColour(depth));
  }
}

}  // namespace
}  // namespace ipusim::viewer::memory_colours_test
