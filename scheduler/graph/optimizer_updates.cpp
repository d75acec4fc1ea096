#include "scheduler/graph/optimizer_updates.hpp"

#include "scheduler/graph/gradient_clipping.hpp"

namespace ipusim::scheduler {
namespace {

constexpr std::size_t kNoUpdateInput = ~std::size_t(0);

std::size_t perTile(OpGraph& g, const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype) {
  return g.addValue({name, std::move(shape), dtype, ValueKind::PerTile, "optimizer"});
}

// The step's learning rate on every tile: the schedule at the step count
// (a piecewise schedule reads its boundaries and values, constants each
// tile holds).
std::size_t addLearningRate(OpGraph& g, const OptimizerSpec& o, std::size_t step) {
  Op op{OpKind::LearningRate, "learning_rate", "optimizer", {step}, {}};
  op.optimizer = o;
  const LearningRateSchedule& s = o.schedule;
  if (s.type == "piecewise_constant_decay") {
    const std::size_t boundaries = perTile(g, "optimizer/boundaries", {s.boundaries.size()}, ir::DType::Int);
    g.values[boundaries].initialValues.assign(s.boundaries.begin(), s.boundaries.end());
    const std::size_t values = perTile(g, "optimizer/values", {s.values.size()}, ir::DType::Float);
    g.values[values].initialValues = s.values;
    op.inputs.push_back(boundaries);
    op.inputs.push_back(values);
  }
  const std::size_t lr = perTile(g, "optimizer/learning_rate", {1}, ir::DType::Float);
  op.outputs = {lr};
  g.addOp(op);
  return lr;
}

// The learning rate joins the step's outfeed: one more element of g.loss,
// after the loss and the accuracy (tile 0's copy, written where the loss is).
void outfeedLearningRate(OpGraph& g, std::size_t lr) {
  const std::uint64_t index = g.values[g.loss].shape.at(0);
  g.values[g.loss].shape[0] = index + 1;
  g.outfeed.push_back("learning_rate");
  Op op{OpKind::MeanLoss, "learning_rate_outfeed", "optimizer", {lr, g.loss}, {}};
  op.index = index;
  g.addOp(op);
}

}  // namespace

void addOptimizerUpdates(OpGraph& g, const OptimizerSpec& o, const std::map<std::size_t, std::size_t>& weightGrad,
                         const std::function<std::size_t()>& stepCounter, bool offloadState) {
  const std::map<std::size_t, std::size_t> grads = clipGradients(g, o, weightGrad);
  const std::string rule = o.rule();
  const std::size_t lr = o.schedule.enabled() ? addLearningRate(g, o, stepCounter()) : kNoUpdateInput;
  if (lr != kNoUpdateInput) outfeedLearningRate(g, lr);
  std::size_t product = kNoUpdateInput, productOp = kNoUpdateInput;
  if (rule == "nadam") {  // Keras's _u_product, 1 before the first step
    product = perTile(g, "optimizer/momentum_product", {1}, ir::DType::Float);
    g.values[product].initialFill = 1.0;
    Op op{OpKind::NadamMomentumProduct, "momentum_product", "optimizer", {stepCounter(), product}, {}};
    op.optimizer = o;
    productOp = g.addOp(op);
  }
  const std::vector<std::size_t> weights = g.weights;
  for (std::size_t wv : weights) {
    const std::string weightName = g.values[wv].name;
    const std::string layer = g.values[wv].layer;
    const std::string shortName = weightName.substr(weightName.find('/') + 1);
    auto slot = [&](const std::string& name, double initial = 0) {
      Value v{weightName + "/" + name, g.values[wv].shape, g.values[wv].dtype, ValueKind::OptimizerState, layer};
      v.initialFill = initial;
      v.inStreamingMemory = offloadState;
      return g.addValue(std::move(v));
    };
    Op up{OpKind::SgdUpdate, shortName + "_update", layer, {wv, grads.at(wv)}, {}};
    up.optimizer = o;
    if (rule == "sgd" && o.momentum == 0 && !o.schedule.enabled() && o.weightDecay == 0) {
      up.scale = -o.learningRate;  // a ScaledAdd (of the clipped gradient, when clipping)
    } else if (rule == "sgd" && o.momentum == 0) {
      up.kind = OpKind::GradientDescentUpdate;
    } else if (rule == "sgd") {
      up.kind = OpKind::MomentumUpdate;
      up.inputs.push_back(slot("momentum"));
    } else if (rule == "adam") {
      up.kind = OpKind::AdamUpdate;
      up.inputs.push_back(slot("m"));
      up.inputs.push_back(slot("v"));
      up.inputs.push_back(stepCounter());
    } else if (rule == "rmsprop") {
      up.kind = OpKind::RmspropUpdate;
      up.inputs.push_back(slot("velocity"));
      if (o.centered) up.inputs.push_back(slot("average_gradient"));
      if (o.momentum > 0) up.inputs.push_back(slot("momentum"));
    } else if (rule == "adagrad") {
      up.kind = OpKind::AdagradUpdate;
      up.inputs.push_back(slot("accumulator", o.initialAccumulatorValue));
    } else if (rule == "adamax") {
      up.kind = OpKind::AdamaxUpdate;
      up.inputs.push_back(slot("m"));
      up.inputs.push_back(slot("u"));
      up.inputs.push_back(stepCounter());
    } else {  // nadam
      up.kind = OpKind::NadamUpdate;
      up.inputs.push_back(slot("m"));
      up.inputs.push_back(slot("v"));
      up.inputs.push_back(stepCounter());
      up.inputs.push_back(product);
    }
    if (lr != kNoUpdateInput) up.inputs.push_back(lr);
    const std::size_t id = g.addOp(up);
    for (std::size_t op = 0; op < id; ++op)
      for (std::size_t in : g.ops[op].inputs)
        if (in == wv) g.addOrderEdge(op, id);
    if (productOp != kNoUpdateInput) g.addOrderEdge(productOp, id);  // the product is updated in place first
  }
}

}  // namespace ipusim::scheduler
