#pragma once
// A tensor: shape, element type, and where each of its elements lives
// (tile mapping + per-tile byte address, set by a memory plan).
#include "model/ir/types.hpp"

#include <optional>
#include <vector>

namespace ipusim::ir {

// Elements [begin, end) of a tensor live on `tile` (a global tile index:
// ipu = tile / tilesPerIpu) starting at byte `address` of that tile's memory.
struct TileInterval {
  std::uint32_t tile = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t address = kUnplaced;
  static constexpr std::uint64_t kUnplaced = ~0ull;
};

// Initial values drawn when the executable is loaded rather than stored in
// it (a 37 M-weight model's executable stays small and compiles in
// seconds): uniform in [-limit, limit] — Glorot uniform, as Keras draws
// kernels — from std::mt19937_64(seed), one draw per element in order, its
// 53 high bits as the unit fraction, rounded to float (the device's values).
struct UniformInit {
  std::uint64_t seed = 0;
  double limit = 0;
  bool operator==(const UniformInit& o) const { return seed == o.seed && limit == o.limit; }
};

// Memory categories reported per tile in the profile (tile_memory.category).
// Free-form strings; the scheduler uses: "weights", "activations",
// "gradients", "optimizer", "stream_buffers", "temporaries", "constants".
struct Tensor {
  Id id = kNoId;
  std::string name;
  std::vector<std::uint64_t> shape;
  DType dtype = DType::Float;
  std::vector<TileInterval> mapping;  // sorted by begin, covering [0, numElements)
  std::string category = "temporaries";
  bool alwaysLive = true;             // false: address may be shared with other not-always-live tensors
  std::vector<double> initialValue;   // empty: zero-initialised (or uniformInit); else numElements values
  std::optional<UniformInit> uniformInit;  // values drawn at load instead of stored (not with initialValue)
  DebugInfo debug;

  std::uint64_t numElements() const {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  std::uint64_t numBytes() const { return numElements() * sizeOf(dtype); }
};

// The n values of `init`, in element order (the one definition of the draw).
std::vector<double> uniformValues(const UniformInit& init, std::uint64_t n);
// A tensor's initial values: initialValue, or drawn from uniformInit, or
// none (zero-initialised).
std::vector<double> initialValues(const Tensor& t);

}  // namespace ipusim::ir
