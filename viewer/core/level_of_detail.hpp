#pragma once
// Level of detail for one row of slices (Tracy's approach): slices narrower
// than `minWidthPx` that follow each other closely fold into one drawn block
// that says how many slices it holds. The fold jumps ahead by binary search
// (at least `minWidthPx` per step), so the work per frame follows the number of
// pixels, not the number of slices: a row of 10 million slices zoomed out to
// 1,600 pixels costs at most ~1,600/minWidthPx blocks and as many searches.
#include "viewer/core/slice_columns.hpp"
#include "viewer/core/time_axis.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::viewer {

struct DrawBlock {
  std::int64_t start = 0, end = 0;  // cycles covered, first start to last end
  std::size_t first = 0;            // index of its first slice in the row
  std::size_t count = 0;            // slices it stands for (1 = a plain slice)
  bool folded() const { return count > 1; }
};

struct FoldOptions {
  double minWidthPx = 3.0;  // narrower slices fold
  double maxGapPx = 3.0;    // a wider gap ends a fold
  // A fold stops growing past this width, so a dense stretch reads as a run
  // of blocks, each with its own count (local density), not one block.
  double maxFoldPx = 40.0;
};

// Appends to `out` the blocks of `row` visible on `axis`, in order. Every
// slice overlapping the visible range is in exactly one block.
void foldRow(const SliceColumns& row, const TimeAxis& axis, const FoldOptions& options,
             std::vector<DrawBlock>& out);

// The category a folded block is drawn in: the one covering the most cycles
// among at most `maxSamples` of its slices, evenly spaced (all of them when
// it holds fewer), so a burst of short compute slices started by an exchange
// still reads as compute, and the cost stays bounded per block.
// Ties go to the category seen first. A plain slice gives its own category.
std::uint8_t foldCategory(const SliceColumns& row, const DrawBlock& block, std::size_t maxSamples = 32);

}  // namespace ipusim::viewer
