#include "model/hardware/tile_memory_arena.hpp"

#include <new>
#include <sys/mman.h>

namespace ipusim::model::hardware {
namespace {

constexpr std::uint64_t kBlockAlignment = 64;  // a cache line: blocks never share one
constexpr std::uint64_t kHugePage = 2 << 20;     // x86-64 huge page: the arena starts on one

}  // namespace

TileMemoryArena::TileMemoryArena(const std::vector<std::uint64_t>& bytesPerTile)
    : blocks_(bytesPerTile.size(), nullptr) {
  std::uint64_t total = 0;
  for (std::uint64_t bytes : bytesPerTile) total += alignUp(bytes, kBlockAlignment);
  if (total == 0) return;
  size_ = std::size_t(total + kHugePage);  // room to start on a huge-page boundary
  base_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::bad_alloc();
  }
#ifdef MADV_HUGEPAGE
  madvise(base_, size_, MADV_HUGEPAGE);  // a hint: without it, 4 KiB pages work too
#endif
  std::uint8_t* at = reinterpret_cast<std::uint8_t*>(alignUp(reinterpret_cast<std::uintptr_t>(base_), kHugePage));
  for (std::size_t tile = 0; tile < bytesPerTile.size(); ++tile) {
    if (bytesPerTile[tile] == 0) continue;
    blocks_[tile] = at;
    at += alignUp(bytesPerTile[tile], kBlockAlignment);
  }
}

TileMemoryArena::~TileMemoryArena() {
  if (base_) munmap(base_, size_);
}

}  // namespace ipusim::model::hardware
