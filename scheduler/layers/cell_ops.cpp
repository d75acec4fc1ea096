#include "scheduler/layers/cell_ops.hpp"

#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/view_ops.hpp"

namespace ipusim::scheduler {
namespace {

// A value of `layer` in the compute type (for the tape's backward functions,
// which outlive the CellOps that recorded them: they hold the builder and the
// layer's name, never the CellOps).
std::size_t cellValue(TrainingGraphBuilder& b, const std::string& layer, const std::string& name,
                      const std::vector<std::uint64_t>& shape, ValueKind kind) {
  return b.value(layer + "/" + name, shape, b.compute(), kind, layer);
}

// One BatchMatMul of `layer` over a [G, ., .] and b [G, ., .] (stored as
// the transposes say), its output [G, m, n] named `name`.
std::size_t addBatchMatMul(TrainingGraphBuilder& b, const std::string& layer, std::size_t a, std::size_t bv,
                           bool transposeA, bool transposeB, const std::string& name, ValueKind kind) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t>& as = g.values[a].shape;
  const std::vector<std::uint64_t>& bs = g.values[bv].shape;
  if (as.size() != 3 || bs.size() != 3 || as[0] != bs[0] || as[transposeA ? 1 : 2] != bs[transposeB ? 2 : 1])
    throw std::logic_error(layer + "/" + name + ": batched product of mismatched operands");
  const std::size_t out = cellValue(b, layer, name, {as[0], as[transposeA ? 2 : 1], bs[transposeB ? 1 : 2]}, kind);
  Op op{OpKind::BatchMatMul, name, layer, {a, bv}, {out}};
  op.transposeA = transposeA, op.transposeB = transposeB;
  g.addOp(op);
  return out;
}

}  // namespace

std::size_t CellOps::batchMatMul(std::size_t a, std::size_t bv, bool transposeA, bool transposeB, const std::string& name) {
  const std::size_t out = addBatchMatMul(b_, layer_, a, bv, transposeA, transposeB, name, ValueKind::Activation);
  b_.record({a, bv}, out, false, [&b = b_, layer = layer_, a, bv, out, transposeA, transposeB, name](const Backward& bw) {
    OpGraph& g = b.graph();
    std::size_t grad = bw.grad;  // (read in the output's [G, m, n])
    if (g.values[grad].shape != g.values[out].shape) {
      grad = cellValue(b, layer, name + "_grad", g.values[out].shape, ValueKind::Gradient);
      g.addOp({OpKind::Reshape, name + "_grad", layer, {bw.grad}, {grad}});
    }
    // d op(a) = grad . op(b)^T and d op(b) = op(a)^T . grad, each computed in its operand's stored layout.
    if (bw.wants(a))
      bw.deliver(a, transposeA ? addBatchMatMul(b, layer, bv, grad, transposeB, true, name + "_grad_0", ValueKind::Gradient)
                               : addBatchMatMul(b, layer, grad, bv, false, !transposeB, name + "_grad_0", ValueKind::Gradient));
    if (bw.wants(bv))
      bw.deliver(bv, transposeB ? addBatchMatMul(b, layer, grad, a, true, transposeA, name + "_grad_1", ValueKind::Gradient)
                                : addBatchMatMul(b, layer, a, grad, !transposeA, false, name + "_grad_1", ValueKind::Gradient));
  });
  return out;
}

std::size_t CellOps::value(const std::string& name, const std::vector<std::uint64_t>& shape, ValueKind kind) {
  return cellValue(b_, layer_, name, shape, kind);
}

std::size_t CellOps::sliceColumns(std::size_t x, std::uint64_t offset, std::uint64_t width, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::uint64_t rows = g.values[x].shape.at(0), columns = g.values[x].numElements() / rows;
  const std::size_t out = value(name, {rows, width});
  Op op{OpKind::Slice, name, layer_, {x}, {out}};
  op.rows = rows;
  op.blocks = {offset, width, columns};
  g.addOp(op);
  b_.record({x}, out, false, [x, offset](const Backward& bw) { bw.deliverColumns(x, bw.grad, offset); });
  return out;
}

std::pair<std::size_t, std::size_t> CellOps::stepMask(std::size_t ids, std::uint64_t step, std::uint64_t width,
                                                      const std::string& name) {
  OpGraph& g = b_.graph();
  const std::uint64_t rows = g.values[ids].shape.at(0), steps = g.values[ids].numElements() / rows;
  const std::size_t column = b_.value(layer_ + "/" + name + "_ids", {rows}, ir::DType::Int, ValueKind::Activation, layer_);
  Op slice{OpKind::Slice, name + "_ids", layer_, {ids}, {column}};
  slice.rows = rows;
  slice.blocks = {step, 1, steps};
  g.addOp(slice);
  std::size_t gates[2];
  for (std::uint64_t padding = 0; padding < 2; ++padding) {
    const std::string gate = name + (padding ? "_padding" : "_keep");
    gates[padding] = value(gate, {rows, width});
    Op op{OpKind::IdMask, gate, layer_, {column}, {gates[padding]}};
    op.index = padding;
    g.addOp(op);
  }
  return {gates[0], gates[1]};
}

std::size_t CellOps::concatColumns(const std::vector<std::size_t>& parts, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::uint64_t rows = g.values[parts.at(0)].shape.at(0);
  Op op{OpKind::Concat, name, layer_, parts, {}};
  op.rows = rows;
  std::uint64_t columns = 0;
  for (std::size_t p : parts) op.blocks.push_back(g.values[p].numElements() / rows), columns += op.blocks.back();
  const std::size_t out = value(name, {rows, columns});
  op.outputs = {out};
  g.addOp(op);
  b_.record(parts, out, false, [&b = b_, layer = layer_, parts, blocks = op.blocks, rows, columns, name](const Backward& bw) {
    OpGraph& g = b.graph();
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (bw.wants(parts[i])) {
        const std::string gradName = name + "_grad_" + std::to_string(i);
        const std::size_t piece = cellValue(b, layer, gradName, {rows, blocks[i]}, ValueKind::Gradient);
        Op slice{OpKind::Slice, gradName, layer, {bw.grad}, {piece}};
        slice.rows = rows;
        slice.blocks = {offset, blocks[i], columns};
        g.addOp(slice);
        bw.deliver(parts[i], piece);
      }
      offset += blocks[i];
    }
  });
  return out;
}

std::size_t CellOps::transpose(std::size_t x, const std::vector<std::uint64_t>& shape,
                               const std::vector<std::size_t>& perm, const std::string& name) {
  const std::size_t out = addTranspose(b_.graph(), x, shape, perm, layer_, name, ValueKind::Activation);
  b_.record({x}, out, false, [&b = b_, layer = layer_, x, out, perm, name](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::vector<std::uint64_t> outShape = g.values[out].shape;
    bw.deliver(x, addTranspose(g, bw.grad, outShape, inversePermutation(perm), layer, name + "_grad", ValueKind::Gradient));
  });
  return out;
}

std::size_t CellOps::dropout(std::size_t x, double rate, std::uint64_t seed, const std::string& name) {
  if (!b_.training()) return x;  // Keras's Dropout with training=False
  OpGraph& g = b_.graph();
  const std::size_t out = value(name, g.values[x].shape);
  Op op{OpKind::Dropout, name, layer_, {x, b_.stepCounter()}, {out}};
  op.rate = rate, op.seed = seed;
  g.addOp(op);
  b_.record({x}, out, false, [&b = b_, layer = layer_, x, rate, seed, name](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::size_t pre = cellValue(b, layer, name + "_grad", g.values[x].shape, ValueKind::Gradient);
    Op op{OpKind::DropoutGrad, name + "_grad", layer, {bw.grad, b.stepCounter()}, {pre}};
    op.rate = rate, op.seed = seed;
    g.addOp(op);
    bw.deliver(x, pre);
  });
  return out;
}

std::size_t CellOps::add(std::size_t x, std::size_t y, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::size_t out = value(name, g.values[x].shape);
  g.addOp({OpKind::Add, name, layer_, {x, y}, {out}});
  b_.record({x, y}, out, false, [x, y](const Backward& bw) {
    bw.deliver(x, bw.grad);
    bw.deliver(y, bw.grad);
  });
  return out;
}

std::size_t CellOps::subtract(std::size_t x, std::size_t y, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::size_t out = value(name, g.values[x].shape);
  g.addOp({OpKind::Sub, name, layer_, {x, y}, {out}});
  b_.record({x, y}, out, false, [&b = b_, layer = layer_, x, y, name](const Backward& bw) {
    bw.deliver(x, bw.grad);
    if (!bw.wants(y)) return;
    OpGraph& g = b.graph();
    const std::size_t negated = cellValue(b, layer, name + "_grad_1", g.values[y].shape, ValueKind::Gradient);
    g.addOp({OpKind::Neg, name + "_grad_1", layer, {bw.grad}, {negated}});
    bw.deliver(y, negated);
  });
  return out;
}

std::size_t CellOps::multiply(std::size_t x, std::size_t y, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::size_t out = value(name, g.values[x].shape);
  g.addOp({OpKind::Mul, name, layer_, {x, y}, {out}});
  b_.record({x, y}, out, false, [&b = b_, layer = layer_, x, y, name](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::size_t operands[2] = {x, y};
    for (int i = 0; i < 2; ++i) {
      if (!bw.wants(operands[i])) continue;
      const std::string gradName = name + "_grad_" + std::to_string(i);
      const std::size_t d = cellValue(b, layer, gradName, g.values[operands[i]].shape, ValueKind::Gradient);
      g.addOp({OpKind::Mul, gradName, layer, {bw.grad, operands[1 - i]}, {d}});
      bw.deliver(operands[i], d);
    }
  });
  return out;
}

std::size_t CellOps::activation(Activation a, const ActivationParams& p, std::size_t x, const std::string& name) {
  return addActivationOp(b_, layer_, name, a, p, x);
}

std::size_t CellOps::columnsOf(std::size_t used, std::uint64_t rows, std::uint64_t offset, std::uint64_t width,
                               std::vector<std::uint64_t> shape, const std::string& name) {
  OpGraph& g = b_.graph();
  const std::size_t out = value(name, std::move(shape));
  Op op{OpKind::Slice, name, layer_, {used}, {out}};
  op.rows = rows;
  op.blocks = {offset, width, g.values[used].numElements() / rows};
  g.addOp(op);
  return out;
}

std::size_t CellOps::matmul(std::size_t x, std::size_t kernel, std::size_t used, const std::string& name,
                            std::uint64_t offset, std::uint64_t width) {
  OpGraph& g = b_.graph();
  const std::uint64_t k = g.values[kernel].shape.at(0), n = g.values[kernel].shape.at(1);
  const bool part = width && width != n;
  if (part) used = columnsOf(used, k, offset, width, {k, width}, name + "_kernel_columns");
  const std::size_t out = value(name, {g.values[x].shape.at(0), part ? width : n});
  g.addOp({OpKind::MatMul, name, layer_, {x, used}, {out}});
  const bool trained = b_.trains(kernel);
  b_.record({x}, out, trained, [&b = b_, layer = layer_, x, kernel, used, name, part, offset, k](const Backward& bw) {
    OpGraph& g = b.graph();
    if (bw.trains(kernel)) {
      // (As Dense: the kernel's gradient in the variables' type, the input's in the compute type.)
      const std::size_t dk =
          b.value(layer + "/" + name + "_kernel_grad", g.values[used].shape, b.variables(), ValueKind::Gradient, layer);
      Op dkOp{OpKind::MatMul, name + "_kernel_grad", layer, {x, bw.grad}, {dk}};
      dkOp.transposeA = true;
      g.addOp(dkOp);
      if (part) bw.deliverColumns(kernel, dk, offset, k);
      else bw.weightGradient(kernel, dk);
    }
    if (!bw.wants(x)) return;
    const std::size_t dx = cellValue(b, layer, name + "_input_grad", g.values[x].shape, ValueKind::Gradient);
    Op dxOp{OpKind::MatMul, name + "_input_grad", layer, {bw.grad, used}, {dx}};
    dxOp.transposeB = true;
    g.addOp(dxOp);
    bw.deliver(x, dx);
  });
  return out;
}

std::size_t CellOps::addBias(std::size_t x, std::size_t bias, std::size_t used, const std::string& name,
                             std::uint64_t offset, std::uint64_t width) {
  OpGraph& g = b_.graph();
  const bool part = width && width != g.values[bias].numElements();
  if (part) used = columnsOf(used, 1, offset, width, {width}, name + "_bias_columns");
  const std::size_t out = value(name, g.values[x].shape);
  g.addOp({OpKind::AddBias, name, layer_, {x, used}, {out}});
  const bool trained = b_.trains(bias);
  b_.record({x}, out, trained, [&b = b_, layer = layer_, x, bias, used, name, part, offset](const Backward& bw) {
    OpGraph& g = b.graph();
    if (bw.trains(bias)) {
      const std::size_t db =
          b.value(layer + "/" + name + "_bias_grad", g.values[used].shape, b.variables(), ValueKind::Gradient, layer);
      g.addOp({OpKind::ReduceRows, name + "_bias_grad", layer, {bw.grad}, {db}});
      if (part) bw.deliverColumns(bias, db, offset, 1);
      else bw.weightGradient(bias, db);
    }
    bw.deliver(x, bw.grad);
  });
  return out;
}

}  // namespace ipusim::scheduler
