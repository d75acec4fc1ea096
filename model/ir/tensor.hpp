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
// seconds), with the distributions of Keras's initializers: uniform in
// [center - limit, center + limit] (Glorot uniform, Keras's default for
// kernels; RandomUniform; VarianceScaling's uniform), normal (mean center,
// deviation stddev), or that normal truncated at two deviations (values
// beyond are drawn again, as TF's truncated_normal; VarianceScaling's
// default); Keras's Orthogonal: the tensor read as a rows x cols matrix
// (rows the product of all dimensions but the last), gain times a random
// matrix with orthonormal columns (rows < cols: rows), from
// rows x cols standard normal draws (model/ir/orthogonal.hpp); Keras's
// Identity: gain on the diagonal of the rows x cols matrix, zero elsewhere
// (no draw; kept here so that a large layer's executable stays small). From
// std::mt19937_64(seed), element by element in order, each uniform its 53
// high bits as the unit fraction, a normal by Box-Muller from two of them;
// rounded to float (the device's values). The distributions are Keras's;
// the streams of numbers are ipusim's own.
struct DrawnInit {
  enum class Distribution { Uniform, Normal, TruncatedNormal, Orthogonal, Identity };
  std::uint64_t seed = 0;
  double limit = 0;   // Uniform: the half width
  Distribution distribution = Distribution::Uniform;
  double center = 0;  // Uniform: the middle; normal: the mean
  double stddev = 0;  // normal: the deviation (before truncation)
  double gain = 1;    // Orthogonal, Identity: the factor
  std::uint64_t rows = 0, cols = 0;  // Orthogonal, Identity: the matrix (rows * cols = the tensor's elements)
  bool operator==(const DrawnInit& o) const {
    return seed == o.seed && limit == o.limit && distribution == o.distribution && center == o.center &&
           stddev == o.stddev && gain == o.gain && rows == o.rows && cols == o.cols;
  }
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
  std::vector<double> initialValue;   // empty: zero-initialised (or drawnInit); else numElements values
  std::optional<DrawnInit> drawnInit;  // values drawn at load instead of stored (not with initialValue)
  DebugInfo debug;

  std::uint64_t numElements() const {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  std::uint64_t numBytes() const { return numElements() * sizeOf(dtype); }
};

// The n values of `init`, in element order (the one definition of the draw).
// Throws std::invalid_argument when an Orthogonal or Identity matrix's
// rows * cols is not n.
std::vector<double> drawnValues(const DrawnInit& init, std::uint64_t n);
// A tensor's initial values: initialValue, or drawn from drawnInit, or
// none (zero-initialised).
std::vector<double> initialValues(const Tensor& t);

}  // namespace ipusim::ir
