#include "scheduler/layers/dense_product.hpp"

#include "scheduler/graph/training_graph.hpp"

namespace ipusim::scheduler {

std::size_t addDenseProduct(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t x, const DenseProduct& p) {
  OpGraph& g = b.graph();
  const std::size_t kernel = b.weight(l, "kernel", {p.inner, p.columns},
                                      [&] { return b.glorotUniform(p.fanIn, p.fanOut); }, 0, p.kerasKernel);
  const std::size_t kernelUsed = b.cast(kernel, b.compute(), l.name + "/kernel_cast", l.name, ValueKind::Activation);
  const std::size_t mm = b.value(l.name + "/matmul", {p.rows, p.columns}, b.compute(), ValueKind::Activation, l.name);
  g.addOp({OpKind::MatMul, "matmul", l.name, {x, kernelUsed}, {mm}});
  b.record({x}, mm, b.trains(kernel), [&b, l, x, kernel, kernelUsed](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::vector<std::uint64_t> kshape = g.values[kernel].shape, shape = g.values[x].shape;
    if (bw.trains(kernel)) {
      // dKernel = x^T . grad (x stored rows x inner: transposed a), its
      // partials in float, delivered in the variables' type.
      const std::size_t dk = b.value(l.name + "/kernel_grad", kshape, b.variables(), ValueKind::Gradient, l.name);
      Op dkOp{OpKind::MatMul, "kernel_grad", l.name, {x, bw.grad}, {dk}};
      dkOp.transposeA = true;
      g.addOp(dkOp);
      bw.weightGradient(kernel, dk);
    }
    if (bw.wants(x)) {  // dx = grad . kernel^T (kernel stored inner x columns: transposed b)
      const std::size_t dx = b.value(l.name + "/input_grad", shape, b.compute(), ValueKind::Gradient, l.name);
      Op dxOp{OpKind::MatMul, "input_grad", l.name, {bw.grad, kernelUsed}, {dx}};
      dxOp.transposeB = true;
      g.addOp(dxOp);
      bw.deliver(x, dx);
    }
  });
  return b.bias(l, mm, p.kerasBias);
}

}  // namespace ipusim::scheduler
