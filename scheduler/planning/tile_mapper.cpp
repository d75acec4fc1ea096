#include "scheduler/planning/tile_mapper.hpp"

#include <algorithm>

namespace ipusim::scheduler {

std::uint64_t vectorElements(ir::DType dtype, const model::Target& target) {
  return std::max<std::uint64_t>(1, target.tile.vectorBytes / ir::sizeOf(dtype));
}

Placement mapLinearly(std::uint64_t elements, std::uint32_t tiles, std::uint64_t grain,
                      std::uint64_t minElementsPerTile, std::uint32_t firstTile) {
  if (elements == 0) return {};
  grain = std::max<std::uint64_t>(1, grain);
  const std::uint64_t grains = (elements + grain - 1) / grain;
  const std::uint64_t minGrains = std::max<std::uint64_t>(1, (minElementsPerTile + grain - 1) / grain);
  const std::uint64_t used = std::max<std::uint64_t>(1, std::min<std::uint64_t>(tiles, grains / minGrains));
  Placement p;
  p.reserve(used);
  std::uint64_t begin = 0;
  for (std::uint64_t t = 0; t < used; ++t) {
    const std::uint64_t g = grains / used + (t < grains % used ? 1 : 0);
    const std::uint64_t end = std::min(elements, begin + g * grain);
    if (end > begin) p.push_back({begin, end, std::uint32_t(firstTile + t)});
    begin = end;
  }
  return p;
}

Placement mapTensor(const std::vector<std::uint64_t>& shape, ir::DType dtype, const model::Target& target,
                    std::uint32_t tiles) {
  std::uint64_t elements = 1;
  for (auto d : shape) elements *= d;
  const std::uint64_t row = shape.size() >= 2 ? shape.back() : 0;
  const std::uint64_t grain = row && row <= kWholeRowElements ? row : vectorElements(dtype, target);
  return mapLinearly(elements, tiles, grain, kMinBytesPerTile / ir::sizeOf(dtype));
}

}  // namespace ipusim::scheduler
