// The Copy of a strided view (lowering/view_copy.hpp): every destination
// element gets the source element the view names, in few 2-D regions.
#include "scheduler/lowering/view_copy.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace ipusim::scheduler::view_copy_test {
namespace {

// Destination element -> source element, from the regions (every row expanded); -1 where none writes.
std::vector<std::int64_t> sourcesOf(const std::vector<ir::CopyRegion>& regions, std::uint64_t n) {
  std::vector<std::int64_t> source(n, -1);
  std::vector<ir::CopyRegion> rows;
  for (const auto& r : regions) ir::expandRegion(r, rows);
  for (const auto& r : rows) {
    EXPECT_EQ(r.src.tensor, 0u);
    EXPECT_EQ(r.dst.tensor, 1u);
    for (std::uint64_t e = 0; e < r.dst.size(); ++e) {
      EXPECT_EQ(source.at(r.dst.begin + e), -1) << "written twice: " << r.dst.begin + e;
      source.at(r.dst.begin + e) = std::int64_t(r.src.begin + e);
    }
  }
  return source;
}

// The view's source of each destination element, by walking its indices.
std::vector<std::int64_t> expected(const std::vector<ViewDim>& view) {
  std::uint64_t n = 1;
  for (const auto& d : view) n *= d.size;
  std::vector<std::int64_t> out;
  for (std::uint64_t e = 0; e < n; ++e) {
    std::uint64_t rest = e, s = 0;
    for (std::size_t d = view.size(); d-- > 0;) {
      s += (rest % view[d].size) * view[d].stride;
      rest /= view[d].size;
    }
    out.push_back(std::int64_t(s));
  }
  return out;
}

void expectCopiesTheView(const std::vector<ViewDim>& view, std::size_t maxRegions) {
  const auto regions = viewCopyRegions(0, 1, view);
  const auto want = expected(view);
  EXPECT_EQ(sourcesOf(regions, want.size()), want);
  EXPECT_LE(regions.size(), maxRegions);
}

TEST(ViewCopy, ATransposeOfTheInnerAxes) {
  // [2, 3, 4, 5] -> axes (0, 2, 1, 3): runs of 5, rows along the larger axis.
  expectCopiesTheView({{2, 60}, {4, 5}, {3, 20}, {5, 1}}, 2 * 3);
}

TEST(ViewCopy, ATransposeMovingTheLastAxis) {
  // [2, 3, 4] -> (0, 2, 1): single elements, one region per image and row.
  expectCopiesTheView({{2, 12}, {4, 1}, {3, 4}}, 2 * 3);
}

TEST(ViewCopy, ARepeatAlongRowsAndColumns) {
  // [2, 3, 4, 5] repeated 2x along axis 1 and 3x along axis 2 (stride 0 dimensions).
  expectCopiesTheView({{2, 60}, {3, 20}, {2, 0}, {4, 5}, {3, 0}, {5, 1}}, 2 * 3 * 2 * 3);
}

TEST(ViewCopy, ContiguousViewsAreOneRegion) {
  expectCopiesTheView({{2, 12}, {3, 4}, {4, 1}}, 1);
  expectCopiesTheView({{1, 0}, {6, 1}, {1, 7}}, 1);
  EXPECT_TRUE(viewCopyRegions(0, 1, {{0, 1}}).empty());
}

}  // namespace
}  // namespace ipusim::scheduler::view_copy_test
