#pragma once
// The tile mapper: which tiles hold a tensor's elements when no plan asks
// for a layout of its own. Like poputil::mapTensorLinearly, a tensor is cut
// into grains (whole 64-bit vectors, or whole rows of a narrow matrix) and
// the grains are dealt out evenly, in order, over the IPU's tiles, no tile
// getting fewer than a minimum of elements: no tensor lands whole on tile 0,
// and the ops that read it work on every tile at once.
#include "model/ir/types.hpp"
#include "model/target.hpp"
#include "scheduler/planning/tile_placement.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::scheduler {

// [0, elements) in grains of `grain` elements over at most `tiles` tiles
// (tiles firstTile, firstTile + 1, ...), each tile holding at least
// `minElementsPerTile` elements (rounded up to whole grains) where the
// tensor is large enough.
Placement mapLinearly(std::uint64_t elements, std::uint32_t tiles, std::uint64_t grain,
                      std::uint64_t minElementsPerTile, std::uint32_t firstTile = 0);

// The default mapping of a tensor of `shape` and `dtype` on `tiles` tiles:
// grains of one datapath vector (2 floats, 4 halves), or of whole rows when
// a row is at most kWholeRowElements long (so per-row ops such as a loss
// keep their rows together), at least kMinBytesPerTile per tile.
Placement mapTensor(const std::vector<std::uint64_t>& shape, ir::DType dtype, const model::Target& target,
                    std::uint32_t tiles);

inline constexpr std::uint64_t kWholeRowElements = 16;
// Below this a tile's share is mostly vertex overhead (PopLibs' linear
// mappings use a minimum of the same order, 128 bytes).
inline constexpr std::uint64_t kMinBytesPerTile = 128;

// Elements per datapath vector for `dtype` on `target` (at least 1).
std::uint64_t vectorElements(ir::DType dtype, const model::Target& target);

}  // namespace ipusim::scheduler
