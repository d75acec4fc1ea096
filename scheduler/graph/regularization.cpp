#include "scheduler/graph/regularization.hpp"

namespace ipusim::scheduler {

void addRegularization(OpGraph& g, const std::vector<Penalty>& penalties) {
  if (penalties.empty()) return;
  const std::uint64_t index = g.values[g.loss].shape.at(0);
  g.values[g.loss].shape[0] = index + 1;
  g.outfeed.push_back("regularization");
  Op sum{OpKind::Regularization, "regularization", "loss", {}, {}};
  for (const Penalty& p : penalties) {
    sum.inputs.push_back(p.value);
    sum.coefficients.push_back({p.l1, p.l2});
  }
  sum.inputs.push_back(g.loss);
  sum.index = index;
  const std::size_t written = g.addOp(sum);
  Op total{OpKind::AddLossTerm, "add_regularization", "loss", {g.loss}, {}};
  total.index = index;
  // (It reads the element the Regularization op writes, which no edge from
  // the loss's producer orders.)
  g.addOrderEdge(written, g.addOp(total));
}

std::size_t addPenaltyGradient(OpGraph& g, const Penalty& p, ir::DType dtype) {
  const Value v = g.values[p.value];  // a copy: addValue grows the list
  const std::size_t grad = g.addValue({v.name + "/penalty_grad", v.shape, dtype, ValueKind::Gradient, v.layer});
  Op op{OpKind::RegularizerGrad, "penalty_grad", v.layer, {p.value}, {grad}};
  op.coefficients = {{p.l1, p.l2}};
  g.addOp(op);
  return grad;
}

void addWeightPenaltyGradients(OpGraph& g, const std::vector<Penalty>& penalties,
                               std::map<std::size_t, std::size_t>& weightGrad) {
  for (const Penalty& p : penalties) {
    if (p.activity) continue;
    const auto it = weightGrad.find(p.value);
    const ir::DType dtype = it == weightGrad.end() ? g.values[p.value].dtype : g.values[it->second].dtype;
    const std::size_t penalty = addPenaltyGradient(g, p, dtype);
    if (it == weightGrad.end()) {  // (a weight nothing after it reads: only its penalty)
      weightGrad[p.value] = penalty;
      continue;
    }
    const Value w = g.values[p.value];
    const std::size_t sum = g.addValue({w.name + "/grad_with_penalty", w.shape, dtype, ValueKind::Gradient, w.layer});
    g.addOp({OpKind::Add, "grad_with_penalty", w.layer, {it->second, penalty}, {sum}});
    it->second = sum;
  }
}

}  // namespace ipusim::scheduler
