// permute (Keras's Permute): the axes after the batch in the order `dims`
// gives (1-based, a permutation of 1..rank: output axis i is input axis
// dims[i]), kept in LayerSpec::axes. Forward: a transpose, one CopyView op
// (view_ops.hpp) lowered to one Copy, as Poplar copies a dimShuffled view;
// backward: the inverse permutation of the gradient, another. The identity
// permutation is the input itself.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

class PermuteLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {"permute"}; }
  std::vector<std::string> kerasClasses() const override { return {"Permute"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"dims"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override { spec.axes = l.integers("dims"); }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = "permute";
    spec.axes = readIntegers(c, "dims");
  }

  // Keras: dims must be a permutation of 1..rank (the batch axis stays first).
  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::size_t rank = in[0].size();
    std::vector<bool> seen(rank, false);
    for (std::int64_t d : l.axes) {
      if (l.axes.size() != rank || d < 1 || d > std::int64_t(rank) || seen[std::size_t(d - 1)])
        fail("dims", nlohmann::json(l.axes).dump() + " is not a permutation of the axes 1.." + std::to_string(rank) + " of its " +
                         shapeText(in[0]) + " input (Keras counts them from 1 after the batch axis)");
      seen[std::size_t(d - 1)] = true;
    }
    Shape out;
    for (std::int64_t d : l.axes) out.push_back(in[0][std::size_t(d - 1)]);
    return out;
  }

  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    std::vector<std::size_t> perm{0};  // the batch axis first
    for (std::int64_t d : l.axes) perm.push_back(std::size_t(d));
    bool identity = true;
    for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == i;
    if (identity) return inputs[0];
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    return CellOps(b, l.name).transpose(x, b.graph().values[x].shape, perm, "permute");
  }
};

}  // namespace

std::unique_ptr<Layer> makePermuteLayer() { return std::make_unique<PermuteLayer>(); }

}  // namespace ipusim::scheduler
