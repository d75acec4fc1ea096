#include "model/ir/tile_memory_usage.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace ipusim::ir {
namespace {

// A tensor's bytes on one tile. Names are copied only for the tensors kept
// (`largest`): a tensor spread over 1,472 tiles is on 1,472 tiles' lists,
// and copying its name into each (a Keras layer's name of 1 MB) took 1.5 GB.
struct TensorBytes {
  const Tensor* tensor = nullptr;
  std::uint64_t bytes = 0;
};

struct TileAccumulator {
  std::uint64_t top = 0;
  std::uint64_t alwaysLive = 0;
  std::vector<TensorBytes> tensors;
};

}  // namespace

std::string nameForSummary(const std::string& name) {
  return name.size() > kMaxNameInSummary ? name.substr(0, kMaxNameInSummary) + "..." : name;
}

std::vector<TileMemoryUsage> tileMemoryUsage(const std::vector<Tensor>& tensors, std::uint32_t numTiles,
                                             std::size_t largestPerTile) {
  std::map<std::uint32_t, TileAccumulator> tiles;  // only tiles holding data
  std::map<std::uint32_t, std::uint64_t> bytesOnTile;
  for (const Tensor& t : tensors) {
    const std::uint64_t elem = sizeOf(t.dtype);
    bytesOnTile.clear();
    for (const TileInterval& iv : t.mapping) {
      if (iv.tile >= numTiles)
        throw std::invalid_argument("tileMemoryUsage: tensor '" + t.name + "' is mapped to tile " +
                                    std::to_string(iv.tile) + ", but there are " + std::to_string(numTiles) +
                                    " tiles");
      if (iv.address == TileInterval::kUnplaced)
        throw std::invalid_argument("tileMemoryUsage: tensor '" + t.name + "' has elements [" +
                                    std::to_string(iv.begin) + "," + std::to_string(iv.end) + ") on tile " +
                                    std::to_string(iv.tile) + " without an address (place it first)");
      const std::uint64_t bytes = (iv.end - iv.begin) * elem;
      if (bytes == 0) continue;
      TileAccumulator& acc = tiles[iv.tile];
      acc.top = std::max(acc.top, iv.address + bytes);
      bytesOnTile[iv.tile] += bytes;
    }
    for (const auto& [tile, bytes] : bytesOnTile) {
      TileAccumulator& acc = tiles[tile];
      if (t.alwaysLive) acc.alwaysLive += alignToTileMemory(bytes);
      acc.tensors.push_back({&t, bytes});
    }
  }

  std::vector<TileMemoryUsage> result;
  result.reserve(tiles.size());
  for (auto& [tile, acc] : tiles) {
    TileMemoryUsage u;
    u.tile = tile;
    u.peakBytes = alignToTileMemory(acc.top);
    u.alwaysLiveBytes = std::min(acc.alwaysLive, u.peakBytes);
    u.notAlwaysLivePeakBytes = u.peakBytes - u.alwaysLiveBytes;
    std::map<std::pair<std::string, bool>, std::uint64_t> byCategory;
    for (const TensorBytes& t : acc.tensors) byCategory[{t.tensor->category, t.tensor->alwaysLive}] += t.bytes;
    for (const auto& [key, bytes] : byCategory) u.categories.push_back({key.first, key.second, bytes});
    const std::size_t keep = std::min(largestPerTile, acc.tensors.size());
    std::partial_sort(acc.tensors.begin(), acc.tensors.begin() + keep, acc.tensors.end(),
                      [](const TensorBytes& a, const TensorBytes& b) {
                        return a.bytes != b.bytes ? a.bytes > b.bytes : a.tensor->id < b.tensor->id;
                      });
    u.largest.reserve(keep);
    for (std::size_t i = 0; i < keep; ++i) {
      const Tensor& t = *acc.tensors[i].tensor;
      u.largest.push_back({t.id, nameForSummary(t.name), t.category, t.alwaysLive, acc.tensors[i].bytes});
    }
    result.push_back(std::move(u));
  }
  return result;
}

OutOfMemory findOutOfMemory(const std::vector<TileMemoryUsage>& usage, std::uint64_t capacity,
                            std::size_t worstTiles) {
  OutOfMemory oom;
  std::vector<const TileMemoryUsage*> over;
  for (const TileMemoryUsage& u : usage)
    if (u.peakBytes > capacity) {
      ++oom.tilesOver;
      oom.excessBytes += u.peakBytes - capacity;
      over.push_back(&u);
    }
  const std::size_t keep = std::min(worstTiles, over.size());
  std::partial_sort(over.begin(), over.begin() + keep, over.end(), [](const auto* a, const auto* b) {
    return a->peakBytes != b->peakBytes ? a->peakBytes > b->peakBytes : a->tile < b->tile;
  });
  for (std::size_t i = 0; i < keep; ++i) oom.worst.push_back(*over[i]);
  return oom;
}

std::string outOfMemorySummary(const OutOfMemory& oom, std::uint64_t capacity, std::uint32_t numTiles,
                               const std::string& where) {
  if (oom.tilesOver == 0) return {};
  // Poplar's wording: "Out of memory on tile 0: 876476 bytes used but tiles
  // only have 638976 bytes of memory" for one tile, and "Out of memory:
  // Cannot fit all variable data onto one or more tiles" for the whole graph.
  std::string s = "Out of memory in " + where + ": cannot fit all variable data onto " +
                  std::to_string(oom.tilesOver) + " of " + std::to_string(numTiles) + " tiles (tiles only have " +
                  std::to_string(capacity) + " bytes of memory); " + std::to_string(oom.excessBytes) +
                  " bytes over in total.";
  s += oom.worst.size() < oom.tilesOver ? "\nThe " + std::to_string(oom.worst.size()) + " worst tiles:" : "";
  for (const TileMemoryUsage& u : oom.worst) {
    s += "\n  Out of memory on tile " + std::to_string(u.tile) + ": " + std::to_string(u.peakBytes) +
         " bytes used (" + std::to_string(u.peakBytes - capacity) + " over; always-live " +
         std::to_string(u.alwaysLiveBytes) + ", not-always-live peak " + std::to_string(u.notAlwaysLivePeakBytes) +
         "); largest variables:";
    for (std::size_t i = 0; i < u.largest.size(); ++i) {
      const TensorOnTile& t = u.largest[i];
      s += (i ? ", '" : " '") + t.name + "' (" + t.category + (t.alwaysLive ? "" : ", not always live") + ", " +
           std::to_string(t.bytes) + " bytes)";
    }
  }
  return s;
}

}  // namespace ipusim::ir
