#pragma once
// CellOps: differentiable ops for a layer built of many small ops (a
// recurrent cell unrolled over time steps): each adds its op to the training
// graph and records its gradient on the builder's tape, so the backward pass
// (backpropagation through time included) follows from the forward ops.
// Values are [rows, columns] of the compute type (a batched product's [groups,
// rows, columns]), named "<layer>/<name>";
// every op belongs to `layer` (its profile rows, its shard).
#include "scheduler/graph/training_graph.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

class CellOps {
 public:
  CellOps(TrainingGraphBuilder& b, std::string layer) : b_(b), layer_(std::move(layer)) {}

  // Columns [offset, offset + width) of every row of `x` (a Slice); its
  // gradient joins the other slices' in one Concat (Backward::deliverColumns).
  std::size_t sliceColumns(std::size_t x, std::uint64_t offset, std::uint64_t width, const std::string& name);
  // The parts' rows side by side (a Concat); each part gets its columns of the gradient.
  std::size_t concatColumns(const std::vector<std::size_t>& parts, const std::string& name);
  // Batched products out[g] = op(a[g]) . op(b[g]) (one BatchMatMul: a [G, m,
  // k], or [G, k, m] with transposeA; b [G, k, n], or [G, n, k] with
  // transposeB; out [G, m, n]); each operand's gradient is another.
  std::size_t batchMatMul(std::size_t a, std::size_t b, bool transposeA, bool transposeB, const std::string& name);
  // `x`, read in `shape` (row-major), with its axes permuted (output axis i
  // is axis perm[i]: one CopyView, view_ops.hpp); its gradient the inverse permutation.
  std::size_t transpose(std::size_t x, const std::vector<std::uint64_t>& shape, const std::vector<std::size_t>& perm,
                        const std::string& name);
  // x * mask / (1 - rate), the mask drawn on the device from (seed, step,
  // element) (a Dropout op; its gradient the same mask's DropoutGrad).
  std::size_t dropout(std::size_t x, double rate, std::uint64_t seed, const std::string& name);
  // Step `step`'s gates of a mask (Keras's mask_zero): `ids` [rows, steps]
  // (int), column `step` sliced out, then {keep, padding} [rows, width]:
  // 1 where the id is not 0 (is 0), else 0 (IdMask ops; no gradient).
  std::pair<std::size_t, std::size_t> stepMask(std::size_t ids, std::uint64_t step, std::uint64_t width,
                                               const std::string& name);
  std::size_t add(std::size_t x, std::size_t y, const std::string& name);
  std::size_t subtract(std::size_t x, std::size_t y, const std::string& name);
  std::size_t multiply(std::size_t x, std::size_t y, const std::string& name);
  std::size_t activation(Activation a, const ActivationParams& p, std::size_t x, const std::string& name);
  // x [rows, k] . kernel [k, n], `kernel` a trainable weight read through
  // `used` (its cast to the compute type, or itself): its gradient x^T . grad
  // joins the weight's (summed over calls, as a shared layer's), x's is grad . used^T.
  // With `width`: only the kernel's columns [offset, offset + width) (a
  // Slice of it first; their gradient joins the weight's columns).
  std::size_t matmul(std::size_t x, std::size_t kernel, std::size_t used, const std::string& name,
                     std::uint64_t offset = 0, std::uint64_t width = 0);
  // x + bias over every row, read through `used`: the whole bias (as many
  // elements as x has columns), or with `width` its elements [offset, offset + width).
  std::size_t addBias(std::size_t x, std::size_t bias, std::size_t used, const std::string& name,
                      std::uint64_t offset = 0, std::uint64_t width = 0);

 private:
  std::size_t value(const std::string& name, const std::vector<std::uint64_t>& shape, ValueKind kind = ValueKind::Activation);
  // Columns [offset, offset + width) of `used`, read as [rows, columns] (a Slice, no gradient of its own).
  std::size_t columnsOf(std::size_t used, std::uint64_t rows, std::uint64_t offset, std::uint64_t width,
                        std::vector<std::uint64_t> shape, const std::string& name);
  TrainingGraphBuilder& b_;
  std::string layer_;
};

}  // namespace ipusim::scheduler
