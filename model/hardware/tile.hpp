#pragma once
// Tile: one IPU tile's memory and its compute-phase timing rule.
//
// Memory is a byte array given to the tile at load (a block of the
// MemoryLayout's TileMemoryArena): only tiles that hold data get one, sized to
// the highest byte placed on them (not to the tile's capacity), and only in
// functional mode. Pointers into it stay valid after load().
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace ipusim::model::hardware {

class Tile {
 public:
  // Gives the tile `bytes` of zeroed memory at `memory` (owned by the caller,
  // which keeps it alive as long as the tile); called once, at load.
  void assign(std::uint8_t* memory, std::uint64_t bytes) {
    memory_ = memory;
    size_ = bytes;
  }
  bool hasMemory() const { return memory_ != nullptr; }
  std::uint64_t memoryBytes() const { return size_; }
  // Pointer to byte `address`; nullptr when the tile has no memory (synthetic mode).
  std::uint8_t* at(std::uint64_t address) const { return memory_ ? memory_ + address : nullptr; }

 private:
  std::uint8_t* memory_ = nullptr;
  std::uint64_t size_ = 0;
};

// Cycles one tile spends on its vertices of one compute set:
// worker vertices are dealt, in vertex order, each to the least-loaded of the
// W worker contexts (ties: lowest context); the tile takes W x the busiest
// context (a worker issues every W-th cycle), plus the supervisor vertices one
// after another, plus the per-compute-set supervisor overhead when the tile
// has any vertex.
ir::Cycles tileComputeCycles(const std::vector<ir::Cycles>& workerVertexCycles,
                             const std::vector<ir::Cycles>& supervisorVertexCycles,
                             const TileParams& params);

}  // namespace ipusim::model::hardware
