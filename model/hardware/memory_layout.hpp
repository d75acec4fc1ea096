#pragma once
// MemoryLayout: where every tensor element lives (tile + byte address), the
// tiles' memories, and the translation of tensor regions into pieces of tile
// memory. Intervals the memory planner left unplaced are placed here, after
// the highest placed byte of their tile (8-byte aligned).
#include "model/hardware/tile.hpp"
#include "model/hardware/tile_memory_arena.hpp"
#include "model/ir/executable.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ipusim::model::hardware {

// A part of a tensor region lying contiguously on one tile.
struct RegionPiece {
  std::uint32_t tile = 0;
  std::uint64_t address = 0;       // byte address on the tile
  std::uint64_t offset = 0;        // first element, relative to the region's begin
  std::uint64_t elements = 0;
};

class MemoryLayout {
 public:
  // Checks that every interval fits its tile index range and is aligned to its
  // element size, places unplaced intervals, and (functional) allocates and
  // initialises tile memory. Throws std::invalid_argument naming the tensor.
  MemoryLayout(const ir::Executable& exe, const Target& target, bool functional);

  const ir::Tensor& tensor(ir::Id id) const { return exe_.tensors.at(id); }
  std::size_t numTensors() const { return exe_.tensors.size(); }
  const std::vector<ir::TileInterval>& mapping(ir::Id tensor) const { return mappings_.at(tensor); }
  // Pieces of `ref` in element order; adjacent intervals on one tile at
  // consecutive addresses are merged into one piece.
  std::vector<RegionPiece> pieces(const ir::TensorRef& ref) const;
  // The same into `out` (cleared first): no allocation once `out` has grown,
  // for loops over millions of rows.
  void pieces(const ir::TensorRef& ref, std::vector<RegionPiece>& out) const;
  // Pointer to the piece's first byte (nullptr in synthetic mode).
  std::uint8_t* pointer(const RegionPiece& piece) const { return tiles_[piece.tile].at(piece.address); }
  bool functional() const { return functional_; }
  std::uint32_t numTiles() const { return std::uint32_t(tiles_.size()); }
  // Highest byte used on each tile (the bytes a functional tile allocates).
  const std::vector<std::uint64_t>& tileBytesUsed() const { return tileBytesUsed_; }

  void read(ir::Id tensor, std::uint8_t* out) const;        // whole tensor, row-major
  void write(ir::Id tensor, const std::uint8_t* in);        // whole tensor, row-major
  void readRegion(const ir::TensorRef& ref, std::uint8_t* out) const;
  void writeRegion(const ir::TensorRef& ref, const std::uint8_t* in);

 private:
  const ir::Executable& exe_;
  bool functional_;
  std::vector<std::vector<ir::TileInterval>> mappings_;  // per tensor, placed
  std::unique_ptr<TileMemoryArena> arena_;  // functional: every tile's memory
  std::vector<Tile> tiles_;
  std::vector<std::uint64_t> tileBytesUsed_;
};

// Writes `value` as one element of `type` at `dst` (initial values, tests).
void storeElement(ir::DType type, double value, std::uint8_t* dst);
// Reads one element of `type` at `src` as a double (condition scalars).
double loadElement(ir::DType type, const std::uint8_t* src);

}  // namespace ipusim::model::hardware
