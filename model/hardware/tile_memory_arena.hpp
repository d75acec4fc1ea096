#pragma once
// TileMemoryArena: one zeroed, anonymous mapping holding every tile's memory
// back to back (each tile's block 64-byte aligned), backed by transparent huge
// pages where the kernel allows (madvise MADV_HUGEPAGE).
//
// Why one arena: exchanges and compute sets touch small pieces on many tiles
// (the tutorial's weight-gradient gather moves 100,000 pieces of 128 bytes
// per step); with one 4 KiB page per piece, address translation misses cost
// about as much as the copies. Pages are committed on first touch, so memory
// a tile never uses costs nothing.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ipusim::model::hardware {

// value rounded up to a multiple of alignment.
inline std::uint64_t alignUp(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

class TileMemoryArena {
 public:
  // One block per entry of `bytesPerTile` (0: no block). Throws std::bad_alloc.
  explicit TileMemoryArena(const std::vector<std::uint64_t>& bytesPerTile);
  ~TileMemoryArena();
  TileMemoryArena(const TileMemoryArena&) = delete;
  TileMemoryArena& operator=(const TileMemoryArena&) = delete;

  // Tile `tile`'s block (nullptr when it has none).
  std::uint8_t* block(std::uint32_t tile) const { return blocks_[tile]; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::uint8_t*> blocks_;
};

}  // namespace ipusim::model::hardware
