#include "scheduler/layers/merge_layers.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

std::size_t addMerge(OpGraph& g, const LayerSpec& l, const std::vector<std::size_t>& inputs, std::uint64_t batch) {
  namespace k = layer_kind;
  std::vector<std::uint64_t> shape{batch};
  shape.insert(shape.end(), l.outputShape.begin(), l.outputShape.end());
  const ir::DType type = g.values[inputs[0]].dtype;
  for (std::size_t in : inputs)
    if (g.values[in].dtype != type)
      throw std::invalid_argument("layer '" + l.name + "': its inputs have different types ('" + g.values[inputs[0]].name +
                                  "' and '" + g.values[in].name + "')");
  auto output = [&](const std::string& name) {
    return g.addValue({l.name + "/" + name, shape, type, ValueKind::Activation, l.name});
  };
  if (l.kind == k::kConcatenate) {
    // Row-major, the output is `rows` rows (every dimension before the axis,
    // the batch's included), each the inputs' rows side by side.
    std::uint64_t rows = batch;
    for (std::size_t d = 0; d + 1 < std::size_t(l.axis); ++d) rows *= l.outputShape[d];
    Op op{OpKind::Concat, "concat", l.name, inputs, {}};
    op.rows = rows;
    for (std::size_t in : inputs) op.blocks.push_back(g.values[in].numElements() / rows);
    op.outputs = {output("concat")};
    g.addOp(op);
    return op.outputs[0];
  }
  const OpKind kind = l.kind == k::kAdd ? OpKind::Add : l.kind == k::kSubtract ? OpKind::Sub
                     : l.kind == k::kMaximum ? OpKind::Maximum : l.kind == k::kMinimum ? OpKind::Minimum : OpKind::Mul;
  const std::string name = l.kind == k::kAdd ? "add" : l.kind == k::kSubtract ? "sub"
                           : l.kind == k::kMaximum ? "max" : l.kind == k::kMinimum ? "min" : "mul";
  std::size_t acc = inputs[0];
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const std::size_t out = output(i == 1 ? name : name + "_" + std::to_string(i - 1));
    g.addOp({kind, i == 1 ? name : name + "_" + std::to_string(i - 1), l.name, {acc, inputs[i]}, {out}});
    acc = out;
  }
  return acc;
}

void addMergeGrad(OpGraph& g, const std::string& kind, const std::vector<Op>& ops, const std::vector<std::size_t>& inputs,
                  std::size_t outputGrad, const std::function<bool(std::size_t)>& wants,
                  const std::function<void(std::size_t, std::size_t)>& deliver) {
  namespace k = layer_kind;
  const Op& lastOp = ops.back();
  const std::string& layer = lastOp.layer;
  const ir::DType type = g.values[outputGrad].dtype;
  auto gradient = [&](std::size_t input, const std::string& name) {
    return g.addValue({layer + "/" + name, g.values[input].shape, type, ValueKind::Gradient, layer});
  };
  if (kind == k::kMaximum || kind == k::kMinimum) {
    // Back through the chain acc_i = op(acc_{i-1}, in_i): in_i gets the
    // gradient where it won, acc_{i-1} where it did.
    std::size_t grad = outputGrad;
    for (std::size_t i = ops.size(); i-- > 0;) {
      const Op& op = ops[i];
      auto routed = [&](std::size_t operand, const std::string& name) {
        const std::size_t out = gradient(op.inputs[operand], name);
        Op r{OpKind::ExtremumGrad, name, layer, {op.inputs[0], op.inputs[1], grad}, {out}};
        r.codelet = kind == k::kMaximum ? "MaximumGrad" : "MinimumGrad";
        r.index = operand;
        g.addOp(r);
        return out;
      };
      if (wants(inputs[i + 1])) deliver(inputs[i + 1], routed(1, "input_grad" + std::to_string(i + 1)));
      if (i == 0) {
        if (wants(inputs[0])) deliver(inputs[0], routed(0, "input_grad0"));
      } else {
        grad = routed(0, "chain_grad" + std::to_string(i));
      }
    }
    return;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!wants(inputs[i])) continue;
    const std::string suffix = inputs.size() > 1 ? std::to_string(i) : "";
    if (kind == k::kAdd || (kind == k::kSubtract && i == 0)) {
      deliver(inputs[i], outputGrad);
    } else if (kind == k::kSubtract) {
      const std::size_t neg = gradient(inputs[i], "input_grad" + suffix);
      g.addOp({OpKind::Neg, "input_grad" + suffix, layer, {outputGrad}, {neg}});
      deliver(inputs[i], neg);
    } else if (kind == k::kMultiply) {
      std::size_t acc = outputGrad;
      std::size_t step = 0;
      for (std::size_t j = 0; j < inputs.size(); ++j) {
        if (j == i) continue;
        const std::string name = "input_grad" + suffix + (step ? "_" + std::to_string(step) : "");
        const std::size_t out = gradient(inputs[i], name);
        g.addOp({OpKind::Mul, name, layer, {acc, inputs[j]}, {out}});
        acc = out, ++step;
      }
      deliver(inputs[i], acc);
    } else if (kind == k::kConcatenate) {
      std::uint64_t offset = 0, total = 0;
      for (std::size_t j = 0; j < lastOp.blocks.size(); ++j) {
        if (j < i) offset += lastOp.blocks[j];
        total += lastOp.blocks[j];
      }
      const std::size_t piece = gradient(inputs[i], "input_grad" + suffix);
      Op op{OpKind::Slice, "input_grad" + suffix, layer, {outputGrad}, {piece}};
      op.rows = lastOp.rows;
      op.blocks = {offset, lastOp.blocks[i], total};
      g.addOp(op);
      deliver(inputs[i], piece);
    } else {
      throw std::logic_error("addMergeGrad: '" + kind + "' is not a merge");
    }
  }
}

}  // namespace ipusim::scheduler
