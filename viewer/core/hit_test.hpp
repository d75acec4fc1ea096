#pragma once
// Hit testing: which slice (or folded block) is under a point of a row.
#include "viewer/core/level_of_detail.hpp"
#include "viewer/core/slice_columns.hpp"

#include <optional>

namespace ipusim::viewer {

// The slice of `row` containing `cycle` (start <= cycle < end; a zero-length
// slice contains its own start). Rows do not overlap, so there is at most one.
std::optional<std::size_t> sliceAt(const SliceColumns& row, std::int64_t cycle);

// The slice nearest to `cycle` within `toleranceCycles` (for picking slivers a
// pixel wide), preferring the one containing it.
std::optional<std::size_t> sliceNear(const SliceColumns& row, std::int64_t cycle,
                                     std::int64_t toleranceCycles);

// The drawn block under pixel `px` of `axis`, among `blocks` (as foldRow made
// them), allowing `tolerancePx` around blocks thinner than a pixel.
std::optional<std::size_t> blockAt(const std::vector<DrawBlock>& blocks, const TimeAxis& axis,
                                   double px, double tolerancePx = 1.0);

}  // namespace ipusim::viewer
