#include "scheduler/graph/optimizer_updates.hpp"

namespace ipusim::scheduler {

void addOptimizerUpdates(OpGraph& g, const OptimizerSpec& o, const std::map<std::size_t, std::size_t>& weightGrad,
                         const std::function<std::size_t()>& stepCounter) {
  const std::vector<std::size_t> weights = g.weights;
  for (std::size_t wv : weights) {
    const std::string weightName = g.values[wv].name;
    const std::string layer = g.values[wv].layer;
    const std::string shortName = weightName.substr(weightName.find('/') + 1);
    auto slot = [&](const std::string& name) {
      Value v{weightName + "/" + name, g.values[wv].shape, g.values[wv].dtype, ValueKind::OptimizerState, layer};
      return g.addValue(std::move(v));
    };
    Op up{OpKind::SgdUpdate, shortName + "_update", layer, {wv, weightGrad.at(wv)}, {}};
    up.optimizer = o;
    if (o.type == "sgd" && o.momentum == 0) {
      up.scale = -o.learningRate;
    } else if (o.type == "sgd") {
      up.kind = OpKind::MomentumUpdate;
      up.inputs.push_back(slot("momentum"));
    } else if (o.type == "adam") {
      up.kind = OpKind::AdamUpdate;
      up.inputs.push_back(slot("m"));
      up.inputs.push_back(slot("v"));
      up.inputs.push_back(stepCounter());
    } else {
      up.kind = OpKind::RmspropUpdate;
      up.inputs.push_back(slot("velocity"));
      if (o.centered) up.inputs.push_back(slot("average_gradient"));
      if (o.momentum > 0) up.inputs.push_back(slot("momentum"));
    }
    const std::size_t id = g.addOp(up);
    for (std::size_t op = 0; op < id; ++op)
      for (std::size_t in : g.ops[op].inputs)
        if (in == wv) g.addOrderEdge(op, id);
  }
}

}  // namespace ipusim::scheduler
