// bidirectional (Keras's Bidirectional): a recurrent layer (simple_rnn, lstm,
// gru) run over the steps forward and, with its own weights, backward (its
// go_backwards flipped, as Keras builds the backward layer, or the file's
// backward_layer); with return_sequences the backward outputs are put back in
// time order (Keras's flip), and the two merged per step by merge_mode:
// concat (forward then backward on the last axis), sum, mul or ave. The
// layers' weights live under "<name>/forward" and "<name>/backward"
// (Keras's forward_<layer> and backward_<layer>).
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/recurrent_cell.hpp"
#include "scheduler/models/keras1_spellings.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/keras_layer.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <algorithm>

namespace ipusim::scheduler {
namespace {

bool recurrentKind(const std::string& kind) {
  return kind == layer_kind::kSimpleRnn || kind == layer_kind::kLstm || kind == layer_kind::kGru;
}

const char* sideName(std::size_t k) { return k ? "backward" : "forward"; }

// Wrapped layer k of `l` as it is built: its name and weights' owner under l's.
LayerSpec side(const LayerSpec& l, std::size_t k) {
  LayerSpec w = l.wrapped.at(k);
  w.name = l.name + "/" + sideName(k);
  w.weightsOf = l.weightsOf.empty() ? "" : l.weightsOf + "/" + sideName(k);
  w.shard = l.shard, w.stage = l.stage;
  return w;
}

class BidirectionalLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kBidirectional}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Consumes; }
  std::vector<std::string> kerasClasses() const override { return {"Bidirectional"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"layer", "merge_mode"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("layer")) l.fail(l.key("layer"), "missing (expected the recurrent layer: {\"type\": \"lstm\", ...})");
    const WorkloadReader inner = l.object("layer");
    if (!inner.has("type")) inner.fail(inner.key("type"), "missing (expected simple_rnn, lstm or gru)");
    LayerSpec forward;
    forward.kind = inner.string("type", "", {layer_kind::kSimpleRnn, layer_kind::kLstm, layer_kind::kGru});
    std::set<std::string> keys = layerOfKind(forward.kind).workloadKeys(forward.kind);
    keys.insert("type");
    inner.allowOnly(keys);
    layerOfKind(forward.kind).readWorkload(inner, forward);
    spec.mergeMode = l.string("merge_mode", "concat", {"concat", "sum", "mul", "ave"});
    setSides(spec, forward, std::nullopt);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kBidirectional;
    if (c.isNull("merge_mode")) c.fail("merge_mode", "null (both outputs, unmerged) is not modelled");
    spec.mergeMode = c.string("merge_mode", "concat");
    if (spec.mergeMode != "concat" && spec.mergeMode != "sum" && spec.mergeMode != "mul" && spec.mergeMode != "ave")
      c.fail("merge_mode", "'" + spec.mergeMode + "' is not one of concat, sum, mul, ave");
    c.require("layer", "the wrapped recurrent layer ({\"class_name\", \"config\"})");
    const LayerSpec forward = wrappedOf(c, "layer");
    std::optional<LayerSpec> backward;
    if (c.has("backward_layer")) backward = wrappedOf(c, "backward_layer");
    c.ignore({"layer", "backward_layer"});
    if (backward && (backward->kind != forward.kind || backward->returnSequences != forward.returnSequences ||
                     backward->goBackwards == forward.goBackwards))
      c.fail("backward_layer", "must be a layer of the same class and return_sequences with the other go_backwards "
                               "(as Keras requires)");
    setSides(spec, forward, backward);
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    std::vector<Shape> outs;
    for (LayerSpec& w : spec.wrapped) {
      w.inputShape = in[0];
      w.outputShape = layerOfKind(w.kind).outputShape(w, in, fail);
      outs.push_back(w.outputShape);
    }
    Shape out = outs[0];
    if (spec.mergeMode == "concat") out.back() += outs[1].back();
    else if (outs[0] != outs[1])
      fail("merge_mode", "'" + spec.mergeMode + "' needs both layers' outputs of one shape, got " + shapeText(outs[0]) +
                             " and " + shapeText(outs[1]));
    return out;
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    for (const LayerSpec& w : l.wrapped) layerOfKind(w.kind).checkLimits(w, batch, fail);
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    Footprint f;
    for (std::size_t k = 0; k < 2; ++k) {
      const Footprint w = layerOfKind(l.wrapped[k].kind).footprint(l.wrapped[k]);
      for (const auto& [name, n] : w.weights) f.weights.push_back({std::string(sideName(k)) + "/" + name, n});
      f.keptElements += w.keptElements;
      f.kept = w.kept;
    }
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    std::vector<std::size_t> forward = runRecurrent(b, side(l, 0), inputs[0]);
    std::vector<std::size_t> backward = runRecurrent(b, side(l, 1), inputs[0]);
    const bool sequences = l.wrapped[0].returnSequences;
    std::reverse(backward.begin(), backward.end());  // Keras flips the backward layer's outputs
    CellOps cell(b, l.name);
    if (!sequences) forward = {forward.back()}, backward = {backward.front()};
    std::vector<std::size_t> merged;
    for (std::size_t t = 0; t < forward.size(); ++t) {
      const std::string at = sequences ? "t" + std::to_string(t) + "/" : std::string();
      if (l.mergeMode == "concat") {
        merged.push_back(forward[t]);
        merged.push_back(backward[t]);
      } else if (l.mergeMode == "mul") {
        merged.push_back(cell.multiply(forward[t], backward[t], at + "mul"));
      } else {
        const std::size_t sum = cell.add(forward[t], backward[t], at + "sum");
        if (l.mergeMode == "sum") merged.push_back(sum);
        else merged.push_back(cell.multiply(sum, b.state(l, "half", b.graph().values[sum].shape, b.compute(), 0.5), at + "ave"));
      }
    }
    const std::size_t out = merged.size() == 1 ? merged[0] : cell.concatColumns(merged, "merged");
    if (!sequences) return out;
    const std::size_t sequence = b.shaped(out, l.outputShape, l.name, "sequence_shape");
    if (b.maskOf(inputs[0]) != ~std::size_t(0)) b.setMask(sequence, b.maskOf(inputs[0]));  // Keras: compute_mask
    return sequence;
  }

 private:
  // The recurrent layer of config key `key`, in Keras 2's words.
  static LayerSpec wrappedOf(KerasConfig& c, const char* key) {
    const nlohmann::json& wrapped = c.at(key);
    const std::string cls = kerasClassName(wrapped);
    const Layer* layer = layerOfKerasClass(cls);
    LayerSpec probe;
    if (!layer || cls == "Bidirectional" || !wrapped.contains("config") || !wrapped.at("config").is_object())
      c.fail(key, "expected a SimpleRNN, LSTM or GRU ({\"class_name\", \"config\"}), got " + wrapped.dump().substr(0, 80));
    const std::string where = c.where() + ": " + key + " (" + cls + ")";
    std::optional<Keras2Spelling> keras2;
    if (c.format() == "tf2") keras2 = keras2Spelling(cls, wrapped.at("config"), c.file(), where);
    KerasConfig inner(keras2 ? keras2->config : wrapped.at("config"), c.file(), where);
    if (keras2) inner.setFileKeys(keras2->fileKeys);
    inner.setFormat(c.format());
    LayerSpec spec = readKerasLayer(inner, keras2 ? keras2->cls : cls).spec;
    if (!recurrentKind(spec.kind)) c.fail(key, cls + " is not a recurrent layer (SimpleRNN, LSTM or GRU are wrapped)");
    if (spec.regularizers.count(kActivityRegularizer))
      c.fail(key, "an activity_regularizer of the wrapped layer is not modelled");
    return spec;
  }

  static void setSides(LayerSpec& spec, const LayerSpec& forward, const std::optional<LayerSpec>& backward) {
    LayerSpec back = backward ? *backward : forward;
    if (!backward) back.goBackwards = !forward.goBackwards;
    spec.wrapped = {forward, back};
    // Keras forces zero_output_for_mask = return_sequences on both layers.
    for (LayerSpec& w : spec.wrapped) w.zeroOutputForMask = w.returnSequences;
    spec.returnSequences = forward.returnSequences;
  }
};

}  // namespace

std::unique_ptr<Layer> makeBidirectionalLayer() { return std::make_unique<BidirectionalLayer>(); }

}  // namespace ipusim::scheduler
