// simple_rnn, lstm and gru (Keras's SimpleRNN, LSTM and GRU) over a
// [steps, features] input, as Keras's cells compute them (keras/src/layers/rnn/):
//   SimpleRNN: h = activation(x W + h U + b)
//   LSTM:      z = x W + h U + b, split into i, f, c~, o (Keras's order);
//              i, f, o = recurrent_activation(.), c = f c + i activation(c~),
//              h = o activation(c)
//   GRU:       x W + b_in split into x_z, x_r, x_h; z = ra(x_z + r_z),
//              r = ra(x_r + r_r), h~ = activation(x_h + r_h'), h = z h + (1 - z) h~
//              (computed h~ + z (h - h~)), where with reset_after (bias [2, 3 units])
//              r_z, r_r, r_h = h U + b_rec and r_h' = r r_h, else (bias [3 units])
//              r_z, r_r = h U[:, :2 units] and r_h' = (r h) U[:, 2 units:]
// from zero states, every step's input projection x W + b computed for all
// steps at once (one matmul over [batch x steps, features]); the output the
// last step's h, or every step's ([steps, units]) with return_sequences, in
// the order the steps ran (go_backwards: last to first, as Keras returns it).
// Unrolled: each step's ops are in the training graph (CellOps), so the
// backward pass is backpropagation through time, every step's activations
// kept. (popnn runs the steps in a device-side loop with the weights
// stationary; the unrolled program computes the same and costs each step's
// ops as their own compute sets, without the loop's overhead.)
// Weights as Keras stores them: kernel [features, gates x units] (Glorot
// uniform), recurrent_kernel [units, gates x units] (Orthogonal), bias
// [gates x units] (zeros; LSTM's forget gate's block ones, unit_forget_bias;
// GRU with reset_after [2, 3 units]: the input's bias, then the recurrent one).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/recurrent_cell.hpp"
#include "scheduler/models/workload_limits.hpp"

namespace ipusim::scheduler {
namespace {

// Each step's ops are in the program: a bound on its size (an estimate of
// what compiles in reasonable time and memory; popnn's loop has none).
constexpr std::uint64_t kMaxUnrolledSteps = 1024;
constexpr std::size_t kNoRecurrentBias = ~std::size_t(0);

bool isLstm(const LayerSpec& l) { return l.kind == layer_kind::kLstm; }
bool isGru(const LayerSpec& l) { return l.kind == layer_kind::kGru; }
bool hasGates(const LayerSpec& l) { return isLstm(l) || isGru(l); }
std::uint64_t gatesOf(const LayerSpec& l) { return isLstm(l) ? 4 : isGru(l) ? 3 : 1; }

// One GRU step from the step's input projection (x W + b_in, [batch, 3 units]).
std::size_t gruStep(CellOps& cell, const LayerSpec& l, std::size_t input, std::size_t h, std::size_t recurrent,
                    std::size_t recurrentUsed, std::size_t bias, std::size_t biasUsed, const std::string& at) {
  const std::uint64_t u = l.units;
  auto part = [&](std::size_t v, std::uint64_t k, const char* name) { return cell.sliceColumns(v, k * u, u, at + name); };
  auto gate = [&](std::size_t v, const char* name) {
    return cell.activation(l.recurrentActivation, l.recurrentActivationParams, v, at + name);
  };
  std::size_t z, r, candidate;
  if (l.resetAfter) {
    std::size_t inner = cell.matmul(h, recurrent, recurrentUsed, at + "recurrent");
    if (l.useBias) inner = cell.addBias(inner, bias, biasUsed, at + "recurrent_bias", 3 * u, 3 * u);
    z = gate(cell.add(part(input, 0, "x_z"), part(inner, 0, "r_z"), at + "z_in"), "z");
    r = gate(cell.add(part(input, 1, "x_r"), part(inner, 1, "r_r"), at + "r_in"), "r");
    candidate = cell.multiply(r, part(inner, 2, "r_h"), at + "r_r_h");
  } else {
    const std::size_t inner = cell.matmul(h, recurrent, recurrentUsed, at + "recurrent", 0, 2 * u);
    z = gate(cell.add(part(input, 0, "x_z"), part(inner, 0, "r_z"), at + "z_in"), "z");
    r = gate(cell.add(part(input, 1, "x_r"), part(inner, 1, "r_r"), at + "r_in"), "r");
    candidate = cell.matmul(cell.multiply(r, h, at + "r_h"), recurrent, recurrentUsed, at + "recurrent_h", 2 * u, u);
  }
  const std::size_t hh = cell.activation(l.activation, l.activationParams,
                                         cell.add(part(input, 2, "x_h"), candidate, at + "h_in"), at + "h_candidate");
  // z h + (1 - z) h~ = h~ + z (h - h~)
  return cell.add(hh, cell.multiply(z, cell.subtract(h, hh, at + "h_minus_candidate"), at + "z_h"), at + "h");
}

// unit_forget_bias: the forget gate's block of the bias starts at 1 (the
// others as the bias initializer gives them: a constant).
void forgetGateBiasOnes(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t bias, std::uint64_t units) {
  Value& v = b.graph().values[bias];
  if (v.drawnInit)
    throw std::invalid_argument("layer '" + l.name + "': unit_forget_bias with a random bias_initializer is not "
                                "modelled (a constant initializer, or unit_forget_bias false)");
  std::vector<double> values(v.numElements(), v.initialFill);
  for (std::uint64_t u = units; u < 2 * units; ++u) values[u] = 1.0;
  v.initialValues = values;
  v.initialFill = 0;
}

}  // namespace

std::vector<std::size_t> runRecurrent(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t input) {
  const std::uint64_t steps = l.inputShape[0], features = l.inputShape[1], units = l.units, gates = gatesOf(l);
  const std::uint64_t batch = b.batch(), width = gates * units;
  CellOps cell(b, l.name);
  auto used = [&](std::size_t weight, const char* name) {
    return b.cast(weight, b.compute(), l.name + "/" + name + "_cast", l.name, ValueKind::Activation);
  };
  const std::size_t kernel = b.weight(l, "kernel", {features, width}, [&] { return b.glorotUniform(features, width); });
  const std::size_t recurrent = b.weight(l, "recurrent_kernel", {units, width});
  const std::size_t kernelUsed = used(kernel, "kernel"), recurrentUsed = used(recurrent, "recurrent_kernel");

  // Every step's input projection at once: [batch x steps, features] . W (+ b), read per step as columns of [batch, steps x width].
  std::size_t projection = cell.matmul(b.reshape(input, {batch * steps, features}, l.name, "rows"), kernel,
                                       kernelUsed, "input_projection");
  // GRU with reset_after: bias [2, width], the input's row then the recurrent one.
  const bool twoBiases = isGru(l) && l.resetAfter;
  std::size_t bias = kNoRecurrentBias, biasUsed = kNoRecurrentBias;
  if (l.useBias) {
    bias = twoBiases ? b.weight(l, "bias", {2, width}) : b.weight(l, "bias", {width});
    if (isLstm(l) && l.unitForgetBias) forgetGateBiasOnes(b, l, bias, units);
    biasUsed = used(bias, "bias");
    projection = cell.addBias(projection, bias, biasUsed, "input_bias", 0, width);
  }
  const std::size_t perStep = b.reshape(projection, {batch, steps * width}, l.name, "steps");

  // Keras's mask (an Embedding's mask_zero on the input): the token ids, [batch, steps].
  std::size_t maskIds = b.maskOf(input);
  if (maskIds != kNoMask) {
    if (b.graph().values[maskIds].numElements() != batch * steps)
      throw std::invalid_argument("layer '" + l.name + "': the mask of its input has " +
                                  std::to_string(b.graph().values[maskIds].numElements() / batch) +
                                  " steps per example, the input " + std::to_string(steps) + ": the shapes do not fit");
    maskIds = b.reshape(maskIds, {batch, steps}, l.name, "mask_ids");
  }
  // Zero states (Keras's initial states), read, never written.
  const std::size_t zero = b.state(l, "initial_state", {batch, units}, b.compute(), 0);
  std::size_t h = zero, c = zero;
  std::vector<std::size_t> outputs;
  for (std::uint64_t k = 0; k < steps; ++k) {
    const std::uint64_t t = l.goBackwards ? steps - 1 - k : k;
    const std::string at = "t" + std::to_string(t) + "/";
    const std::size_t projected = cell.sliceColumns(perStep, t * width, width, at + "input");
    const std::size_t hBefore = h, cBefore = c;
    if (isGru(l)) {
      h = gruStep(cell, l, projected, h, recurrent, recurrentUsed, bias, biasUsed, at);
    } else {
      const std::size_t z = cell.add(projected, cell.matmul(h, recurrent, recurrentUsed, at + "recurrent"), at + "z");
      if (!isLstm(l)) {
        h = cell.activation(l.activation, l.activationParams, z, at + "h");
      } else {
        auto gate = [&](std::uint64_t g, Activation a, const ActivationParams& p, const char* name) {
          return cell.activation(a, p, cell.sliceColumns(z, g * units, units, at + "z_" + name), at + name);
        };
        const std::size_t i = gate(0, l.recurrentActivation, l.recurrentActivationParams, "i");
        const std::size_t f = gate(1, l.recurrentActivation, l.recurrentActivationParams, "f");
        const std::size_t g = gate(2, l.activation, l.activationParams, "g");
        const std::size_t o = gate(3, l.recurrentActivation, l.recurrentActivationParams, "o");
        c = cell.add(cell.multiply(f, c, at + "f_c"), cell.multiply(i, g, at + "i_g"), at + "c");
        h = cell.multiply(o, cell.activation(l.activation, l.activationParams, c, at + "c_activation"), at + "h");
      }
    }
    if (maskIds == kNoMask) {
      outputs.push_back(h);
      continue;
    }
    // A masked step keeps the states it read (Keras's rnn: where(mask, new,
    // previous)), written keep h + padding h_before with gates of exactly 1
    // and 0, so the result is the chosen value itself.
    const auto [keep, padding] = cell.stepMask(maskIds, t, units, at + "mask");
    const std::size_t kept = cell.multiply(keep, h, at + "h_kept");
    h = cell.add(kept, cell.multiply(padding, hBefore, at + "h_carried"), at + "h_masked");
    if (isLstm(l))
      c = cell.add(cell.multiply(keep, c, at + "c_kept"), cell.multiply(padding, cBefore, at + "c_carried"), at + "c_masked");
    // The step's output: zeros where masked with zero_output_for_mask (a
    // Bidirectional's returned sequences), else the carried h.
    outputs.push_back(l.zeroOutputForMask && l.returnSequences ? kept : h);
  }
  return outputs;
}

namespace {

// Keras's default recurrent initializer.
InitializerSpec orthogonalSpec() {
  return readInitializer(nlohmann::json("Orthogonal"), [](const std::string& what) {
    throw std::logic_error("recurrent layers: Keras's default recurrent initializer: " + what);
  });
}

class RecurrentLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kSimpleRnn, layer_kind::kLstm, layer_kind::kGru}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Consumes; }
  std::vector<std::string> kerasClasses() const override { return {"SimpleRNN", "LSTM", "GRU"}; }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    std::set<std::string> keys{"units", "activation", "use_bias", "return_sequences", "go_backwards"};
    if (kind == layer_kind::kLstm) keys.insert({"recurrent_activation", "unit_forget_bias"});
    if (kind == layer_kind::kGru) keys.insert({"recurrent_activation", "reset_after"});
    return keys;
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
    spec.units = l.count32("units", 0, true);
    spec.activation = Activation::Tanh;
    if (l.has("activation")) readActivation(l, spec, false);
    spec.activationParams = defaultParams(spec.activation);
    if (hasGates(spec)) {
      const std::string name = l.string("recurrent_activation", "sigmoid");
      if (!parseActivation(name, spec.recurrentActivation) || spec.recurrentActivation == Activation::Softmax)
        l.fail(l.key("recurrent_activation"), "'" + name + "' is not one of " + activationNames() + " (softmax excluded)");
      spec.recurrentActivationParams = defaultParams(spec.recurrentActivation);
    }
    if (isLstm(spec)) spec.unitForgetBias = l.boolean("unit_forget_bias", true);
    if (isGru(spec)) spec.resetAfter = l.boolean("reset_after", true);
    if (spec.activation == Activation::Softmax) l.fail(l.key("activation"), "softmax is not modelled in a recurrent cell");
    spec.useBias = l.boolean("use_bias", true);
    spec.returnSequences = l.boolean("return_sequences", false);
    spec.goBackwards = l.boolean("go_backwards", false);
    spec.initializers["recurrent_kernel"] = orthogonalSpec();
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "LSTM" ? layer_kind::kLstm : cls == "GRU" ? layer_kind::kGru : layer_kind::kSimpleRnn;
    spec.units = c.count32("units");
    readActivationKey(c, "activation", Activation::Tanh, spec.activation, spec.activationParams);
    if (spec.activation == Activation::Softmax) c.fail("activation", "softmax is not modelled in a recurrent cell");
    if (hasGates(spec)) {
      readActivationKey(c, "recurrent_activation", Activation::Sigmoid, spec.recurrentActivation,
                        spec.recurrentActivationParams);
      if (spec.recurrentActivation == Activation::Softmax)
        c.fail("recurrent_activation", "softmax is not modelled in a recurrent cell");
    }
    if (isLstm(spec)) spec.unitForgetBias = c.boolean("unit_forget_bias", true);
    // GRU's reset_after: absent from Keras 2.0-2.2's files, whose GRU reset before the product (false).
    if (isGru(spec)) spec.resetAfter = c.boolean("reset_after", false);
    spec.useBias = c.boolean("use_bias", true);
    spec.returnSequences = c.boolean("return_sequences", false);
    spec.goBackwards = c.boolean("go_backwards", false);
    spec.initializers["recurrent_kernel"] = orthogonalSpec();
    c.requireInitializer("kernel_initializer", {"GlorotUniform"});
    c.requireInitializer("recurrent_initializer", {"Orthogonal"});
    c.requireInitializer("bias_initializer", {"Zeros"});
    readPenalties(c, {"kernel", "recurrent", "bias"});
    for (const char* key : {"dropout", "recurrent_dropout"})
      if (c.has(key) && c.number(key, 0) != 0) c.fail(key, c.at(key).dump() + " is not modelled (only 0)");
    if (c.boolean("return_state", false)) c.fail("return_state", "true is not modelled yet (the states as outputs)");
    if (c.boolean("stateful", false)) c.fail("stateful", "true is not modelled (states kept across batches)");
    if (c.boolean("time_major", false)) c.fail("time_major", "true is not modelled (inputs are [batch, steps, features])");
    // The same arithmetic however Keras schedules it (unroll, implementation,
    // use_cudnn), and the seed of the dropouts refused above.
    c.ignore({"unroll", "implementation", "use_cudnn", "seed"});
    spec.zeroOutputForMask = c.boolean("zero_output_for_mask", false);
    readInputLength(c, spec);  // checked against the input by outputShape()
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    if (in[0].size() != 2)
      fail("", "expects a [steps, features] input, got " + shapeText(in[0]) + " (Keras's RNNs read 3-D inputs)");
    if (!spec.targetShape.empty() && in[0][0] != std::uint64_t(spec.targetShape[0]))
      fail("input_length", std::to_string(spec.targetShape[0]) + " differs from the input's " + std::to_string(in[0][0]) + " steps");
    if (spec.returnSequences) return {in[0][0], spec.units};
    return {spec.units};
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    constexpr std::uint64_t kFloat = 4;
    const WideCount kernel = WideCount(l.inputShape.back() + l.units) * gatesOf(l) * l.units * kFloat;
    if (kernel > kMaxTensorBytes)
      fail("units", std::to_string(l.units) + " needs " + wideText(kernel) + " bytes of float kernels; " + tensorLimitText());
    const WideCount steps = WideCount(batch) * l.inputShape[0] * gatesOf(l) * l.units * kFloat;
    if (steps > kMaxTensorBytes)
      fail("units", std::to_string(l.units) + " needs " + wideText(steps) + " bytes of gate activations (batch " +
                        std::to_string(batch) + "); " + tensorLimitText());
    if (l.inputShape[0] > kMaxUnrolledSteps)
      fail("", std::to_string(l.inputShape[0]) + " steps: unrolled, at most " + std::to_string(kMaxUnrolledSteps) +
                   " are modelled (each step's ops are in the program)");
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const long double g = gatesOf(l);
    Footprint f{{{"kernel", (long double)l.inputShape.back() * g * l.units}, {"recurrent_kernel", (long double)l.units * g * l.units}},
                0, "input", 0};
    if (l.useBias) f.weights.push_back({"bias", (isGru(l) && l.resetAfter ? 2 : 1) * g * l.units});
    // Backpropagation through time keeps every step's gates and states.
    f.keptElements = (long double)l.inputShape[0] * (l.inputShape[1] + (g + 2) * l.units);
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::vector<std::size_t> outputs = runRecurrent(b, l, inputs[0]);
    if (!l.returnSequences) return outputs.back();
    const std::size_t out =
        b.shaped(CellOps(b, l.name).concatColumns(outputs, "sequence"), l.outputShape, l.name, "sequence_shape");
    if (b.maskOf(inputs[0]) != kNoMask) b.setMask(out, b.maskOf(inputs[0]));  // Keras: the sequence keeps the mask
    return out;
  }

};

}  // namespace

std::unique_ptr<Layer> makeRecurrentLayer() { return std::make_unique<RecurrentLayer>(); }

}  // namespace ipusim::scheduler
