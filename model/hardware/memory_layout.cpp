#include "model/hardware/memory_layout.hpp"
#include "model/ir/tile_memory_usage.hpp"
#include "model/numeric/half.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ipusim::model::hardware {
namespace {

std::string tensorName(const ir::Tensor& t) {
  return "tensors[" + std::to_string(t.id) + "] '" + t.name + "'";
}

}  // namespace

void storeElement(ir::DType type, double value, std::uint8_t* dst) {
  switch (type) {
    case ir::DType::Float: { float v = float(value); std::memcpy(dst, &v, sizeof v); break; }
    case ir::DType::Int: { std::int32_t v = std::int32_t(value); std::memcpy(dst, &v, sizeof v); break; }
    case ir::DType::UInt: { std::uint32_t v = std::uint32_t(value); std::memcpy(dst, &v, sizeof v); break; }
    case ir::DType::Bool: *dst = value != 0.0 ? 1 : 0; break;
    case ir::DType::Half: { const numeric::HalfBits v = numeric::floatToHalf(float(value)); std::memcpy(dst, &v, sizeof v); break; }
  }
}

double loadElement(ir::DType type, const std::uint8_t* src) {
  switch (type) {
    case ir::DType::Float: { float v; std::memcpy(&v, src, sizeof v); return v; }
    case ir::DType::Int: { std::int32_t v; std::memcpy(&v, src, sizeof v); return v; }
    case ir::DType::UInt: { std::uint32_t v; std::memcpy(&v, src, sizeof v); return v; }
    case ir::DType::Bool: return *src != 0 ? 1.0 : 0.0;
    case ir::DType::Half: { numeric::HalfBits v; std::memcpy(&v, src, sizeof v); return numeric::halfToFloat(v); }
  }
  return 0.0;
}

MemoryLayout::MemoryLayout(const ir::Executable& exe, const Target& target, bool functional)
    : exe_(exe), functional_(functional), tiles_(target.totalTiles()),
      tileBytesUsed_(target.totalTiles(), 0) {
  const std::uint32_t numTiles = target.totalTiles();
  mappings_.reserve(exe.tensors.size());
  // First pass: placed intervals fix each tile's highest used byte.
  for (const ir::Tensor& t : exe.tensors) {
    const std::size_t elem = ir::sizeOf(t.dtype);
    for (const ir::TileInterval& iv : t.mapping) {
      if (iv.tile >= numTiles)
        throw std::invalid_argument(tensorName(t) + ": mapping on tile " + std::to_string(iv.tile) +
                                    ", expected a tile below " + std::to_string(numTiles));
      if (iv.address == ir::TileInterval::kUnplaced) continue;
      if (iv.address % elem != 0)
        throw std::invalid_argument(tensorName(t) + ": address " + std::to_string(iv.address) +
                                    " on tile " + std::to_string(iv.tile) +
                                    " is not aligned to its element size " + std::to_string(elem));
      tileBytesUsed_[iv.tile] =
          std::max(tileBytesUsed_[iv.tile], iv.address + (iv.end - iv.begin) * elem);
    }
  }
  // Second pass: place what the planner left unplaced, after everything placed.
  for (const ir::Tensor& t : exe.tensors) {
    std::vector<ir::TileInterval> placed = t.mapping;
    ir::placeAboveTop(placed, t.dtype, tileBytesUsed_);
    mappings_.push_back(std::move(placed));
  }
  if (!functional_) return;
  arena_ = std::make_unique<TileMemoryArena>(tileBytesUsed_);
  for (std::uint32_t tile = 0; tile < numTiles; ++tile)
    if (tileBytesUsed_[tile] > 0) tiles_[tile].assign(arena_->block(tile), tileBytesUsed_[tile]);
  std::vector<std::uint8_t> bytes;
  for (const ir::Tensor& t : exe.tensors) {
    if (t.initialValue.empty() && !t.drawnInit) continue;  // memory starts zeroed
    if (!t.initialValue.empty() && t.initialValue.size() != t.numElements())
      throw std::invalid_argument(tensorName(t) + ": initialValue has " +
                                  std::to_string(t.initialValue.size()) + " values, expected " +
                                  std::to_string(t.numElements()));
    const std::vector<double> values = ir::initialValues(t);
    const std::size_t elem = ir::sizeOf(t.dtype);
    bytes.assign(t.numBytes(), 0);
    for (std::size_t i = 0; i < values.size(); ++i) storeElement(t.dtype, values[i], bytes.data() + i * elem);
    write(t.id, bytes.data());
  }
}

std::vector<RegionPiece> MemoryLayout::pieces(const ir::TensorRef& ref) const {
  std::vector<RegionPiece> out;
  pieces(ref, out);
  return out;
}

void MemoryLayout::pieces(const ir::TensorRef& ref, std::vector<RegionPiece>& out) const {
  const ir::Tensor& t = exe_.tensors.at(ref.tensor);
  const std::size_t elem = ir::sizeOf(t.dtype);
  const auto& map = mappings_[ref.tensor];
  out.clear();
  // First interval ending after ref.begin (mapping is sorted by begin).
  auto it = std::upper_bound(map.begin(), map.end(), ref.begin,
                             [](std::uint64_t v, const ir::TileInterval& iv) { return v < iv.end; });
  for (; it != map.end() && it->begin < ref.end; ++it) {
    const std::uint64_t lo = std::max(it->begin, ref.begin);
    const std::uint64_t hi = std::min(it->end, ref.end);
    if (lo >= hi) continue;
    const std::uint64_t address = it->address + (lo - it->begin) * elem;
    if (!out.empty()) {
      RegionPiece& last = out.back();
      if (last.tile == it->tile && last.address + last.elements * elem == address &&
          last.offset + last.elements == lo - ref.begin) {
        last.elements += hi - lo;
        continue;
      }
    }
    out.push_back({it->tile, address, lo - ref.begin, hi - lo});
  }
}

void MemoryLayout::readRegion(const ir::TensorRef& ref, std::uint8_t* out) const {
  if (!functional_) return;
  const std::size_t elem = ir::sizeOf(exe_.tensors.at(ref.tensor).dtype);
  for (const RegionPiece& p : pieces(ref))
    std::memcpy(out + p.offset * elem, pointer(p), p.elements * elem);
}

void MemoryLayout::writeRegion(const ir::TensorRef& ref, const std::uint8_t* in) {
  if (!functional_) return;
  const std::size_t elem = ir::sizeOf(exe_.tensors.at(ref.tensor).dtype);
  for (const RegionPiece& p : pieces(ref))
    std::memcpy(pointer(p), in + p.offset * elem, p.elements * elem);
}

void MemoryLayout::read(ir::Id tensor, std::uint8_t* out) const {
  const ir::Tensor& t = exe_.tensors.at(tensor);
  readRegion({tensor, 0, t.numElements()}, out);
}

void MemoryLayout::write(ir::Id tensor, const std::uint8_t* in) {
  const ir::Tensor& t = exe_.tensors.at(tensor);
  writeRegion({tensor, 0, t.numElements()}, in);
}

}  // namespace ipusim::model::hardware
