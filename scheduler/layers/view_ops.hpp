#pragma once
// Graph building for layers that move elements without computing
// (Permute, UpSampling1D/2D): a strided view of the input copied into a new
// tensor (OpKind::CopyView, one Copy program: view_copy.hpp lowers it), and
// the gradient of a repeat (the sum of each element's copies: the gradient
// viewed as [copies, elements] and reduced over its rows, ReduceRows). That
// gradient is an estimate of popops's reduction over the repeated axes:
// popops reduces where the elements lie first, here they are rearranged by
// one more exchange before the column reduction gathers them.
#include "scheduler/graph/op_graph.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// The row-major strides of `shape`, in elements.
std::vector<std::uint64_t> rowMajorStrides(const std::vector<std::uint64_t>& shape);

// Adds CopyView "<layer>/<name>" over `input` at `view`: an output of
// `shape` (as many elements as the view), the input's type, of `kind`.
std::size_t addCopyView(OpGraph& g, std::size_t input, std::vector<ViewDim> view, std::vector<std::uint64_t> shape,
                        const std::string& layer, const std::string& name, ValueKind kind);

// The elements of `input` (a gradient may come flattened) are read in
// `shape`, row-major, by the two ops below.
// `input` with its axes permuted (numpy's transpose): output axis i is
// input axis perm[i]. Throws std::logic_error unless perm permutes the axes.
std::size_t addTranspose(OpGraph& g, std::size_t input, const std::vector<std::uint64_t>& shape,
                         const std::vector<std::size_t>& perm, const std::string& layer, const std::string& name,
                         ValueKind kind);
// The permutation undoing `perm`.
std::vector<std::size_t> inversePermutation(const std::vector<std::size_t>& perm);

// `input` with each element repeated repeats[d] times along each axis d in
// turn (numpy's repeat, Keras's ops.repeat): output axis d has in[d] x
// repeats[d] elements, element i of it in's element i / repeats[d].
std::size_t addRepeat(OpGraph& g, std::size_t input, const std::vector<std::uint64_t>& shape,
                      const std::vector<std::uint64_t>& repeats, const std::string& layer, const std::string& name);
// The input gradient of addRepeat's op `repeatOp` from its output's
// gradient: each input element's copies summed ("<name>_grad_copies", a
// CopyView to [copies, elements]; "<name>_grad_sum", a ReduceRows;
// "<name>_grad", in the shape the input was read in).
std::size_t addRepeatGrad(OpGraph& g, std::size_t repeatOp, std::size_t outputGrad);

}  // namespace ipusim::scheduler
