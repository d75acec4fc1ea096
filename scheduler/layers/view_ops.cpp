#include "scheduler/layers/view_ops.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

std::vector<std::uint64_t> rowMajorStrides(const std::vector<std::uint64_t>& shape) {
  std::vector<std::uint64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::size_t addCopyView(OpGraph& g, std::size_t input, std::vector<ViewDim> view, std::vector<std::uint64_t> shape,
                        const std::string& layer, const std::string& name, ValueKind kind) {
  std::uint64_t viewed = 1;
  for (const ViewDim& d : view) viewed *= d.size;
  if (viewed != elementsOf(shape))
    throw std::logic_error("addCopyView: layer '" + layer + "': the view has " + std::to_string(viewed) +
                           " elements, the output " + shapeText(shape));
  const std::size_t out = g.addValue({layer + "/" + name, std::move(shape), g.values[input].dtype, kind, layer});
  Op op{OpKind::CopyView, name, layer, {input}, {out}};
  op.view = std::move(view);
  g.addOp(op);
  return out;
}

std::vector<std::size_t> inversePermutation(const std::vector<std::size_t>& perm) {
  std::vector<std::size_t> inverse(perm.size(), perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] >= perm.size() || inverse[perm[i]] != perm.size())
      throw std::logic_error("inversePermutation: not a permutation of the axes");
    inverse[perm[i]] = i;
  }
  return inverse;
}

std::size_t addTranspose(OpGraph& g, std::size_t input, const std::vector<std::uint64_t>& in,
                         const std::vector<std::size_t>& perm, const std::string& layer, const std::string& name,
                         ValueKind kind) {
  if (perm.size() != in.size()) throw std::logic_error("addTranspose: layer '" + layer + "': a permutation of the axes");
  inversePermutation(perm);  // checks it is one
  const std::vector<std::uint64_t> strides = rowMajorStrides(in);
  std::vector<ViewDim> view;
  std::vector<std::uint64_t> shape;
  for (std::size_t axis : perm) {
    view.push_back({in[axis], strides[axis]});
    shape.push_back(in[axis]);
  }
  return addCopyView(g, input, std::move(view), std::move(shape), layer, name, kind);
}

std::size_t addRepeat(OpGraph& g, std::size_t input, const std::vector<std::uint64_t>& in,
                      const std::vector<std::uint64_t>& repeats, const std::string& layer, const std::string& name) {
  if (repeats.size() != in.size()) throw std::logic_error("addRepeat: layer '" + layer + "': a repeat count per axis");
  const std::vector<std::uint64_t> strides = rowMajorStrides(in);
  // Each axis, then its copies (stride 0).
  std::vector<ViewDim> view;
  std::vector<std::uint64_t> shape;
  for (std::size_t d = 0; d < in.size(); ++d) {
    view.push_back({in[d], strides[d]});
    view.push_back({repeats[d], 0});
    shape.push_back(in[d] * repeats[d]);
  }
  return addCopyView(g, input, std::move(view), std::move(shape), layer, name, ValueKind::Activation);
}

std::size_t addRepeatGrad(OpGraph& g, std::size_t repeatOp, std::size_t outputGrad) {
  const Op repeat = g.ops.at(repeatOp);  // a copy: the op list grows
  if (repeat.kind != OpKind::CopyView || repeat.view.size() % 2)
    throw std::logic_error("addRepeatGrad: op " + repeat.name + " is not a repeat");
  if (g.values[outputGrad].numElements() != g.values[repeat.outputs[0]].numElements())
    throw std::logic_error("addRepeatGrad: the gradient's size differs from the output's");
  // The gradient in the output's shape, as [copies..., elements...]: along
  // output axis d, copy k of element i is at (i repeats + k) x stride.
  const std::vector<std::uint64_t> strides = rowMajorStrides(g.values[repeat.outputs[0]].shape);
  std::vector<std::uint64_t> in;
  std::vector<ViewDim> copies, elements;
  std::uint64_t copyCount = 1;
  for (std::size_t d = 0; d < strides.size(); ++d) {
    in.push_back(repeat.view[2 * d].size);
    const std::uint64_t r = repeat.view[2 * d + 1].size;
    copies.push_back({r, strides[d]});
    elements.push_back({in[d], r * strides[d]});
    copyCount *= r;
  }
  copies.insert(copies.end(), elements.begin(), elements.end());
  const std::string& layer = repeat.layer;
  const std::uint64_t n = elementsOf(in);
  const std::size_t blocks = addCopyView(g, outputGrad, std::move(copies), {copyCount, n}, layer,
                                         repeat.name + "_grad_copies", ValueKind::Gradient);
  const ir::DType type = g.values[outputGrad].dtype;
  const std::size_t sum = g.addValue({layer + "/" + repeat.name + "_grad_sum", {n}, type, ValueKind::Gradient, layer});
  g.addOp({OpKind::ReduceRows, repeat.name + "_grad_sum", layer, {blocks}, {sum}});
  const std::size_t grad = g.addValue({layer + "/" + repeat.name + "_grad", in, type, ValueKind::Gradient, layer});
  g.addOp({OpKind::Reshape, repeat.name + "_grad", layer, {sum}, {grad}});
  return grad;
}

}  // namespace ipusim::scheduler
