#include "scheduler/graph/gradient_clipping.hpp"

namespace ipusim::scheduler {
namespace {

// A gradient's clipped value: its shape and type, beside it in the graph.
std::size_t clippedValue(OpGraph& g, std::size_t grad) {
  const Value& v = g.values[grad];
  return g.addValue({v.name + "/clipped", v.shape, v.dtype, ValueKind::Gradient, v.layer});
}

std::size_t normSquared(OpGraph& g, const std::string& name, const std::string& layer) {
  return g.addValue({name, {1}, ir::DType::Float, ValueKind::Activation, layer});
}

}  // namespace

std::map<std::size_t, std::size_t> clipGradients(OpGraph& g, const OptimizerSpec& o,
                                                 const std::map<std::size_t, std::size_t>& weightGrad) {
  std::map<std::size_t, std::size_t> clipped = weightGrad;
  if (o.globalClipnorm > 0) {
    // One norm over every gradient (in the weights' order), one clip of them all.
    Op sum{OpKind::SumOfSquares, "global_norm", "optimizer", {}, {}};
    Op clip{OpKind::ClipByNorm, "clip_by_global_norm", "optimizer", {}, {}};
    for (std::size_t w : g.weights) {
      sum.inputs.push_back(weightGrad.at(w));
      clip.inputs.push_back(weightGrad.at(w));
      clip.outputs.push_back(clipped[w] = clippedValue(g, weightGrad.at(w)));
    }
    const std::size_t norm = normSquared(g, "optimizer/global_norm_squared", "optimizer");
    sum.outputs = {norm};
    g.addOp(sum);
    clip.inputs.push_back(norm);
    clip.scale = o.globalClipnorm;
    clip.index = 1;
    g.addOp(clip);
    return clipped;
  }
  for (std::size_t w : g.weights) {
    const std::size_t grad = weightGrad.at(w);
    const std::string layer = g.values[w].layer;
    const std::string shortName = g.values[w].name.substr(g.values[w].name.find('/') + 1);
    if (o.clipnorm > 0) {
      const std::size_t norm = normSquared(g, g.values[grad].name + "/norm_squared", layer);
      g.addOp({OpKind::SumOfSquares, shortName + "_norm", layer, {grad}, {norm}});
      Op clip{OpKind::ClipByNorm, shortName + "_clip_by_norm", layer, {grad, norm}, {clippedValue(g, grad)}};
      clip.scale = o.clipnorm;
      clipped[w] = clip.outputs[0];
      g.addOp(clip);
    } else if (o.clipvalue > 0) {
      Op clip{OpKind::ClipByValue, shortName + "_clip_by_value", layer, {grad}, {clippedValue(g, grad)}};
      clip.scale = o.clipvalue;
      clipped[w] = clip.outputs[0];
      g.addOp(clip);
    }
  }
  return clipped;
}

}  // namespace ipusim::scheduler
