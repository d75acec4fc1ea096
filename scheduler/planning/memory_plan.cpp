#include "scheduler/planning/memory_plan.hpp"

#include "model/ir/tile_memory_usage.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

constexpr std::uint64_t kAlign = 8;
std::uint64_t alignUp(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct Block {  // bytes one tensor occupies on one tile
  std::uint64_t address, bytes;
  std::size_t first, last;
};

}  // namespace

MemoryPlanResult planMemory(ir::Executable& exe, const std::vector<std::pair<std::size_t, std::size_t>>& useSpan,
                            std::uint32_t numTiles, std::uint64_t capacity, bool allowOutOfMemory) {
  // Per tile, the bytes each tensor needs there (its intervals are laid out
  // one after another).
  std::vector<std::map<ir::Id, std::uint64_t>> need(numTiles);
  for (const ir::Tensor& t : exe.tensors)
    for (const auto& iv : t.mapping) need.at(iv.tile)[t.id] += (iv.end - iv.begin) * ir::sizeOf(t.dtype);

  std::vector<std::map<ir::Id, std::uint64_t>> base(numTiles);
  for (std::uint32_t tile = 0; tile < numTiles; ++tile) {
    std::uint64_t bump = 0;
    std::vector<std::pair<ir::Id, std::uint64_t>> shared;
    for (auto [id, bytes] : need[tile]) {
      if (exe.tensors[id].alwaysLive) base[tile][id] = bump, bump = alignUp(bump + bytes);
      else shared.push_back({id, bytes});
    }
    // First fit by start of life: the lowest address clear of every block
    // whose lifetime overlaps.
    std::sort(shared.begin(), shared.end(), [&](auto& a, auto& b) {
      return useSpan[a.first].first != useSpan[b.first].first ? useSpan[a.first].first < useSpan[b.first].first
                                                              : a.first < b.first;
    });
    std::vector<Block> placed;
    for (auto [id, bytes] : shared) {
      const auto [first, last] = useSpan[id];
      std::vector<const Block*> overlapping;
      for (const Block& b : placed)
        if (b.first <= last && first <= b.last) overlapping.push_back(&b);
      std::sort(overlapping.begin(), overlapping.end(), [](auto* a, auto* b) { return a->address < b->address; });
      std::uint64_t address = bump;
      for (const Block* b : overlapping) {
        if (address + bytes <= b->address) break;
        address = std::max(address, alignUp(b->address + b->bytes));
      }
      placed.push_back({address, bytes, first, last});
      base[tile][id] = address;
    }
  }
  // Addresses of the intervals: consecutive within the tensor's bytes on the tile.
  for (ir::Tensor& t : exe.tensors) {
    std::map<std::uint32_t, std::uint64_t> cursor;
    for (auto& iv : t.mapping) {
      auto [it, fresh] = cursor.try_emplace(iv.tile, base[iv.tile].at(t.id));
      iv.address = it->second;
      it->second += (iv.end - iv.begin) * ir::sizeOf(t.dtype);
    }
  }
  // Every figure and the check come from THE per-tile figure
  // (ir::tileMemoryUsage), the one the profile, `ipusim report` and the
  // viewer show, and the check words it as Poplar's summary does.
  const std::vector<ir::TileMemoryUsage> usage = ir::tileMemoryUsage(exe.tensors, numTiles);
  MemoryPlanResult r;
  std::uint64_t sum = 0;
  for (const ir::TileMemoryUsage& u : usage) {
    ++r.tilesUsed;
    sum += u.peakBytes;
    r.maxTileBytes = std::max(r.maxTileBytes, u.peakBytes);
  }
  r.meanTileBytes = r.tilesUsed ? double(sum) / r.tilesUsed : 0;
  const ir::OutOfMemory oom = ir::findOutOfMemory(usage, capacity);
  r.tilesOverCapacity = std::uint32_t(oom.tilesOver);
  if (oom.tilesOver == 0 || allowOutOfMemory) return r;
  throw std::invalid_argument(ir::outOfMemorySummary(oom, capacity, numTiles, "the compiled workload") +
                              "\nReduce the model or the batch, lower ipu.available_memory_proportion, or set "
                              "compile.allow_out_of_memory to compile anyway.");
}

}  // namespace ipusim::scheduler
