// simple_rnn and lstm (Keras's SimpleRNN and LSTM) over a [steps, features]
// input, as Keras's cells compute them (keras/src/layers/rnn/):
//   SimpleRNN: h = activation(x W + h U + b)
//   LSTM:      z = x W + h U + b, split into i, f, c~, o (Keras's order);
//              i, f, o = recurrent_activation(.), c = f c + i activation(c~),
//              h = o activation(c)
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
// [gates x units] (zeros; LSTM's forget gate's block ones, unit_forget_bias).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"

namespace ipusim::scheduler {
namespace {

// Each step's ops are in the program: a bound on its size (an estimate of
// what compiles in reasonable time and memory; popnn's loop has none).
constexpr std::uint64_t kMaxUnrolledSteps = 1024;

bool isLstm(const LayerSpec& l) { return l.kind == layer_kind::kLstm; }
std::uint64_t gatesOf(const LayerSpec& l) { return isLstm(l) ? 4 : 1; }

InitializerSpec orthogonalSpec() {
  return readInitializer(nlohmann::json("Orthogonal"), [](const std::string& what) {
    throw std::logic_error("recurrent layers: Keras's default recurrent initializer: " + what);
  });
}

class RecurrentLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kSimpleRnn, layer_kind::kLstm}; }
  std::vector<std::string> kerasClasses() const override { return {"SimpleRNN", "LSTM"}; }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    std::set<std::string> keys{"units", "activation", "use_bias", "return_sequences", "go_backwards"};
    if (kind == layer_kind::kLstm) keys.insert({"recurrent_activation", "unit_forget_bias"});
    return keys;
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
    spec.units = l.count32("units", 0, true);
    spec.activation = Activation::Tanh;
    if (l.has("activation")) readActivation(l, spec, false);
    spec.activationParams = defaultParams(spec.activation);
    if (isLstm(spec)) {
      const std::string name = l.string("recurrent_activation", "sigmoid");
      if (!parseActivation(name, spec.recurrentActivation) || spec.recurrentActivation == Activation::Softmax)
        l.fail(l.key("recurrent_activation"), "'" + name + "' is not one of " + activationNames() + " (softmax excluded)");
      spec.recurrentActivationParams = defaultParams(spec.recurrentActivation);
      spec.unitForgetBias = l.boolean("unit_forget_bias", true);
    }
    if (spec.activation == Activation::Softmax) l.fail(l.key("activation"), "softmax is not modelled in a recurrent cell");
    spec.useBias = l.boolean("use_bias", true);
    spec.returnSequences = l.boolean("return_sequences", false);
    spec.goBackwards = l.boolean("go_backwards", false);
    spec.initializers["recurrent_kernel"] = orthogonalSpec();
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "LSTM" ? layer_kind::kLstm : layer_kind::kSimpleRnn;
    c.require("units", "a positive integer");
    const std::int64_t units = c.integer("units", 0);
    if (units <= 0 || units > 0xffffffffll) c.fail("units", "expected a positive integer, got " + c.at("units").dump());
    spec.units = std::uint32_t(units);
    readActivationKey(c, "activation", Activation::Tanh, spec.activation, spec.activationParams);
    if (spec.activation == Activation::Softmax) c.fail("activation", "softmax is not modelled in a recurrent cell");
    if (isLstm(spec)) {
      readActivationKey(c, "recurrent_activation", Activation::Sigmoid, spec.recurrentActivation,
                        spec.recurrentActivationParams);
      if (spec.recurrentActivation == Activation::Softmax)
        c.fail("recurrent_activation", "softmax is not modelled in a recurrent cell");
      spec.unitForgetBias = c.boolean("unit_forget_bias", true);
    }
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
    c.ignore({"unroll", "implementation", "use_cudnn", "seed", "zero_output_for_mask"});
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    if (in[0].size() != 2)
      fail("", "expects a [steps, features] input, got " + shapeText(in[0]) + " (Keras's RNNs read 3-D inputs)");
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
    if (l.useBias) f.weights.push_back({"bias", g * l.units});
    // Backpropagation through time keeps every step's gates and states.
    f.keptElements = (long double)l.inputShape[0] * (l.inputShape[1] + (g + 2) * l.units);
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
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
    std::size_t projection = cell.matmul(b.reshape(inputs[0], {batch * steps, features}, l.name, "rows"), kernel,
                                         kernelUsed, "input_projection");
    if (l.useBias) {
      const std::size_t bias = b.weight(l, "bias", {width});
      if (isLstm(l) && l.unitForgetBias) forgetGateBiasOnes(b, l, bias, units);
      projection = cell.addBias(projection, bias, used(bias, "bias"), "input_bias");
    }
    const std::size_t perStep = b.reshape(projection, {batch, steps * width}, l.name, "steps");

    // Zero states (Keras's initial states), read, never written.
    const std::size_t zero = b.state(l, "initial_state", {batch, units}, b.compute(), 0);
    std::size_t h = zero, c = zero;
    std::vector<std::size_t> outputs;
    for (std::uint64_t k = 0; k < steps; ++k) {
      const std::uint64_t t = l.goBackwards ? steps - 1 - k : k;
      const std::string at = "t" + std::to_string(t) + "/";
      const std::size_t z = cell.add(cell.sliceColumns(perStep, t * width, width, at + "input"),
                                     cell.matmul(h, recurrent, recurrentUsed, at + "recurrent"), at + "z");
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
      outputs.push_back(h);
    }
    if (!l.returnSequences) return h;
    return b.shaped(cell.concatColumns(outputs, "sequence"), l.outputShape, l.name, "sequence_shape");
  }

 private:
  // unit_forget_bias: the forget gate's block of the bias starts at 1 (the
  // others as the bias initializer gives them: a constant).
  static void forgetGateBiasOnes(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t bias, std::uint64_t units) {
    Value& v = b.graph().values[bias];
    if (v.drawnInit)
      throw std::invalid_argument("layer '" + l.name + "': unit_forget_bias with a random bias_initializer is not "
                                  "modelled (a constant initializer, or unit_forget_bias false)");
    std::vector<double> values(v.numElements(), v.initialFill);
    for (std::uint64_t u = units; u < 2 * units; ++u) values[u] = 1.0;
    v.initialValues = values;
    v.initialFill = 0;
  }
};

}  // namespace

std::unique_ptr<Layer> makeRecurrentLayer() { return std::make_unique<RecurrentLayer>(); }

}  // namespace ipusim::scheduler
