// ipusim-torch-dump WORKLOAD STEPS OUT.json [--trajectory]: trains WORKLOAD for STEPS steps
// in the SystemC model (functional; one IPU, replicas of one IPU each, or one pipeline) and writes what an independent
// implementation needs to train the same model the same way: the layer
// graph (kinds, configs, inputs, shapes), the initial weights as the
// executable draws them, every batch fed, the optimizer (its schedule as
// Keras serializes it, clipping, weight decay) and loss, the losses the
// device computed (and a schedule's learning rate each step) and its
// weights after the last step (with --trajectory, also its weights and SGD
// momentum before every step, for bench/torch/teacher_forced.py).
// bench/torch/torch_check.py trains it in
// PyTorch and compares (bench/torch/README.md). A workload with
// training.validation then runs one validation (its "validation" entry
// point, training.validation.steps batches of the validation data) and
// writes its batches, losses and accuracies, and every batch
// normalization's moving statistics, for bench/torch/validation_check.py.
#include "model/clock.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_limits.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/engine/engine.hpp"
#include "traces/output_file.hpp"

#include <nlohmann/json.hpp>
#include <systemc>

#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>

namespace {

using namespace ipusim;
using nlohmann::json;

// The values a dump may hold (design choice: 2^24, about 0.5 GB as JSON in
// memory; the largest of bench/torch's workloads, embedding.json, holds
// about 2 million at 20 steps with --trajectory).
constexpr std::uint64_t kMaxDumpValues = 1ull << 24;

json layerJson(const scheduler::LayerSpec& l) {
  json j = {{"kind", l.kind},           {"name", l.name},         {"units", l.units},
            {"activation", scheduler::toString(l.activation)},    {"use_bias", l.useBias},
            {"window", l.window},       {"strides", l.strides},   {"padding", l.padding},
            {"rate", l.rate},           {"momentum", l.momentum}, {"epsilon", l.epsilon},
            {"center", l.center},       {"scale", l.scale},       {"keepdims", l.keepDims},
            {"axis", l.axis},           {"pads", l.pads},         {"input_shape", l.inputShape},
            {"output_shape", l.outputShape},                      {"dilation", l.dilation},
            {"groups", l.groups},       {"depth_multiplier", l.depthMultiplier},
            {"output_padding", l.outputPadding ? json(*l.outputPadding) : json(nullptr)},
            {"axes", l.axes},           {"channel_groups", l.channelGroups}, {"input_dim", l.inputDim}};
  const scheduler::ActivationParams& p = l.activationParams;
  j["activation_params"] = {{"negative_slope", p.negativeSlope},
                            {"max_value", p.maxValue ? json(*p.maxValue) : json(nullptr)},
                            {"threshold", p.threshold},
                            {"alpha", p.alpha},
                            {"hard_sigmoid_slope", p.hardSigmoidSlope}};
  const scheduler::ActivationParams& r = l.recurrentActivationParams;
  j["recurrent_activation"] = scheduler::toString(l.recurrentActivation);
  j["recurrent_activation_params"] = {{"negative_slope", r.negativeSlope},
                                      {"max_value", r.maxValue ? json(*r.maxValue) : json(nullptr)},
                                      {"threshold", r.threshold},
                                      {"alpha", r.alpha},
                                      {"hard_sigmoid_slope", r.hardSigmoidSlope}};
  j["heads"] = l.heads;
  j["key_dim"] = l.keyDim;
  j["value_dim"] = l.valueDim;
  j["causal_mask"] = l.causalMask;
  j["input_shapes"] = l.inputShapes;
  j["return_sequences"] = l.returnSequences;
  j["go_backwards"] = l.goBackwards;
  j["zero_output_for_mask"] = l.zeroOutputForMask;
  j["mask_zero"] = l.maskZero;
  j["trainable"] = l.trainable;
  j["mask_value"] = l.maskValue;
  j["equation"] = l.equation;
  j["bias_axes"] = l.useBias ? json(l.biasAxes) : json(nullptr);
  j["reset_after"] = l.resetAfter;
  j["merge_mode"] = l.mergeMode;
  j["wrapped"] = json::array();
  for (std::size_t k = 0; k < l.wrapped.size(); ++k) {  // a bidirectional's layers, named as built
    scheduler::LayerSpec side = l.wrapped[k];
    side.name = l.name + (k ? "/backward" : "/forward");
    j["wrapped"].push_back(layerJson(side));
  }
  json inputs = json::array();
  for (std::size_t i : l.inputs) inputs.push_back(i == scheduler::kModelInput ? json(-1) : json(i));
  j["inputs"] = inputs;
  // Regularizers, by the weight they penalize ("kernel", ...) or "activity".
  j["regularizers"] = json::object();
  for (const auto& [weight, r] : l.regularizers) j["regularizers"][weight] = {{"l1", r.l1}, {"l2", r.l2}};
  return j;
}

// A learning-rate schedule as Keras serializes it (null without one).
json scheduleJson(const scheduler::LearningRateSchedule& s) {
  if (!s.enabled()) return nullptr;
  json config;
  if (s.type == "piecewise_constant_decay") {
    config = {{"boundaries", s.boundaries}, {"values", s.values}};
  } else {
    config = {{"initial_learning_rate", s.initialLearningRate}, {"decay_steps", s.decaySteps}};
    if (s.type == "exponential_decay" || s.type == "inverse_time_decay")
      config.update({{"decay_rate", s.decayRate}, {"staircase", s.staircase}});
    if (s.type == "cosine_decay")
      config.update({{"alpha", s.alpha}, {"warmup_target", s.warmup ? json(s.warmupTarget) : json(nullptr)},
                     {"warmup_steps", s.warmupSteps}});
    if (s.type == "polynomial_decay")
      config.update({{"end_learning_rate", s.endLearningRate}, {"power", s.power}, {"cycle", s.cycle}});
  }
  return {{"class_name", s.className()}, {"config", config}};
}

// Runs the training's runs, then a validation's, as a SystemC thread; then stops.
class DumpLoop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DumpLoop);
  DumpLoop(sc_core::sc_module_name name, sim::Engine& engine, std::uint64_t trainingRuns, std::uint64_t validationRuns)
      : sc_module(name), engine_(engine), trainingRuns_(trainingRuns), validationRuns_(validationRuns) {
    SC_THREAD(main);
  }
  void rethrowFailure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void main() {
    try {
      for (std::uint64_t r = 0; r < trainingRuns_; ++r) engine_.run(engine_.entryIndex("train"));
      for (std::uint64_t r = 0; r < validationRuns_; ++r) engine_.run(engine_.entryIndex("validation"));
    } catch (...) {
      failure_ = std::current_exception();
    }
    sc_core::sc_stop();
  }
  sim::Engine& engine_;
  std::uint64_t trainingRuns_, validationRuns_;
  std::exception_ptr failure_;
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const bool trajectory = argc == 5 && std::string(argv[4]) == "--trajectory";
  if (argc != 4 && !trajectory) {
    std::cerr << "usage: ipusim-torch-dump WORKLOAD STEPS OUT.json [--trajectory]\n";
    return 2;
  }
  try {
    // (std::stoull said only "stoull" for "abc", and took "0" and "-1"
    // (wrapped round to 2^64 - 1) as steps.) At most what a workload may
    // train (training.steps); the dump's own bound, by its size, follows
    // the compile.
    const std::string stepsText = argv[2];
    const bool digits = !stepsText.empty() && stepsText.size() <= 18 &&
                        stepsText.find_first_not_of("0123456789") == std::string::npos;
    const std::uint64_t steps = digits ? std::stoull(stepsText) : 0;
    if (steps == 0 || steps > scheduler::kMaxSteps)
      throw std::invalid_argument("STEPS '" + stepsText + "': expected a positive whole number of training steps " +
                                  "(from 1 to " + std::to_string(scheduler::kMaxSteps) + ")");
    scheduler::Workload w = scheduler::loadWorkload(argv[1]);
    // Replicas of one IPU each take their batches from one source of R x batch_size (replica r the r-th);
    // "losses" are replica 0's, "final_weights" every replica's copies (tests compare runs bit for bit).
    // A pipeline (not replicated) takes its mini-batches one after another, as accumulation does.
    const std::uint32_t replicas = scheduler::replicasOf(w);
    if (scheduler::ipusPerReplica(w) != 1 && !(w.pipeline.enabled() && replicas == 1))
      throw std::invalid_argument(std::string(argv[1]) +
                                  ": one IPU per replica, or one pipeline not replicated, only (no shards)");
    w.training.steps = steps;
    // The dump never replaces what it reads (`ipusim-torch-dump w.json 2
    // w.json` replaced the workload with the dump): it is written as every
    // ipusim output is (traces/output_file.hpp), over an earlier dump but
    // never over an input; checked before the training.
    std::vector<std::string> inputs{argv[1], w.kerasModel, w.kerasWeights};
    if (w.dataset.format != "synthetic") {
      inputs.insert(inputs.end(), {w.dataset.images, w.dataset.labels});
      if (w.training.validation.enabled())
        inputs.insert(inputs.end(), {w.training.validation.images, w.training.validation.labels});
    }
    const traces::OutputPolicy outputPolicy{true, inputs};
    traces::checkOutputPath(argv[3], outputPolicy);
    const scheduler::CompiledWorkload c = scheduler::compile(w);
    if (steps % c.stepsPerRun)
      throw std::invalid_argument("STEPS " + stepsText + ": expected a multiple of the " +
                                  std::to_string(c.stepsPerRun) + " steps of one Engine::run (" + argv[1] +
                                  ": training.steps_per_execution)");
    // The dump holds every step's batch (and with --trajectory its weights
    // and momentum) in memory until it is written: STEPS 999999999999999998
    // was taken and grew without bound. Checked before the training.
    std::uint64_t weightElements = 0;
    for (ir::Id t : c.weightTensors) weightElements += c.exe.tensors[t].numElements();
    const std::uint64_t example = std::uint64_t(w.dataset.features) + std::max<std::uint64_t>(1, w.dataset.labelSteps);
    const std::uint64_t perStep =
        std::uint64_t(w.dataset.batchSize) * replicas * example + 4 + (trajectory ? 2 * weightElements : 0);
    if (steps > kMaxDumpValues / perStep) {
      const std::uint64_t most = kMaxDumpValues / perStep / c.stepsPerRun * c.stepsPerRun;
      throw std::invalid_argument(
          "STEPS " + stepsText + ": the dump would hold about " + std::to_string(perStep) + " values a step (" +
          argv[1] + "'s batches" + (trajectory ? " and, with --trajectory, its weights and momentum" : "") +
          "), over its limit of " + std::to_string(kMaxDumpValues) + " values: expected STEPS from " +
          (most ? std::to_string(c.stepsPerRun) + " to " + std::to_string(most) +
                      (c.stepsPerRun > 1 ? " (a multiple of " + std::to_string(c.stepsPerRun) + ")" : "")
                : std::string("1, but one step alone is over it: expected a smaller dataset.batch_size")));
    }

    json out;
    out["workload"] = w.name;
    out["batch_size"] = w.dataset.batchSize;
    out["input_shape"] = w.dataset.inputShape;
    out["classes"] = w.dataset.classes;
    out["dtype"] = w.dtype;
    out["replicas"] = replicas;
    out["gradient_accumulation_count"] = w.training.gradientAccumulationCount;
    out["pipeline_stages"] = w.pipeline.stages;
    out["loss"] = {{"type", w.loss.type},
                   {"from_logits", w.loss.fromLogits},
                   {"label_smoothing", w.loss.labelSmoothing},
                   {"delta", w.loss.delta},
                   {"label_is_target", w.loss.labelIsTarget},
                   {"target_elements", w.loss.targetElements}};
    const auto& o = w.optimizer;
    out["optimizer"] = {{"type", o.type},         {"learning_rate", o.learningRate}, {"momentum", o.momentum},
                        {"nesterov", o.nesterov}, {"beta_1", o.beta1},               {"beta_2", o.beta2},
                        {"epsilon", o.epsilon},   {"rho", o.rho},                    {"centered", o.centered},
                        {"initial_accumulator_value", o.initialAccumulatorValue},
                        {"weight_decay", o.weightDecay}, {"clipnorm", o.clipnorm},   {"clipvalue", o.clipvalue},
                        {"global_clipnorm", o.globalClipnorm}, {"schedule", scheduleJson(o.schedule)}};
    for (const auto& l : w.layers) out["layers"].push_back(layerJson(l));
    for (ir::Id t : c.weightTensors) {
      const ir::Tensor& tensor = c.exe.tensors[t];
      std::vector<double> init = ir::initialValues(tensor);
      if (init.empty()) init.assign(tensor.numElements(), 0.0);
      out["weights"].push_back({{"name", tensor.name}, {"shape", tensor.shape}, {"values", init}});
    }

    sim::dataset::BatchSource batches(sim::dataset::loadExamples(w.dataset), w.dataset.batchSize * replicas,
                                      w.dataset.shuffleSeed);
    sim::Engine engine(c.exe, c.target, sim::EngineOptions{}, {});
    sim::dataset::Batch current;
    // SGD's momentum slots ("<weight>/momentum"), in the weights' order, if any.
    std::vector<ir::Id> momentum;
    for (ir::Id t : c.weightTensors)
      for (ir::Id s = 0; s < c.exe.tensors.size(); ++s)
        if (c.exe.tensors[s].name == c.exe.tensors[t].name + "/momentum") momentum.push_back(s);
    if (momentum.size() != c.weightTensors.size()) momentum.clear();
    auto valuesOf = [&](const std::vector<ir::Id>& tensors) {
      json all = json::array();
      for (ir::Id t : tensors) {
        const model::Bytes bytes = engine.system().readTensor(t);
        std::vector<float> values(c.exe.tensors[t].numElements());
        std::memcpy(values.data(), bytes.data(), std::min(bytes.size(), values.size() * sizeof(float)));
        all.push_back(values);
      }
      return all;
    };
    auto weightsNow = [&] { return valuesOf(c.weightTensors); };
    engine.stream("images").connect([&](model::Bytes& b) {
      // A step's images are copied in before any of its ops runs, after
      // the previous step's updates: the weights it starts from.
      if (trajectory) out["weights_before"].push_back(weightsNow());
      if (trajectory && !momentum.empty()) out["momentum_before"].push_back(valuesOf(momentum));
      current = batches.next();
      out["batches"].push_back({{"images", current.images}, {"labels", current.labels}});
      // Token ids stream as int32 (the images hold them as floats, exactly).
      b.resize(current.images.size() * 4);
      if (current.tokens.empty()) std::memcpy(b.data(), current.images.data(), b.size());
      else std::memcpy(b.data(), current.tokens.data(), b.size());
    });
    engine.stream("labels").connect([&](model::Bytes& b) {
      const auto bytes = sim::dataset::labelBytes(current.labels, w.loss, w.dataset.classes);
      b.assign(bytes.begin(), bytes.end());
    });
    engine.stream("loss").connect([&](model::Bytes& b) {
      // The loss, then (CompiledWorkload::outfeed) the accuracy, the regularization term and a schedule's learning rate.
      for (std::size_t i = 0; i < c.outfeed.size() && (i + 1) * sizeof(float) <= b.size(); ++i) {
        float v;
        std::memcpy(&v, b.data() + i * sizeof v, sizeof v);
        if (c.outfeed[i] == "loss") out["losses"].push_back(v);
        if (c.outfeed[i] == "learning_rate") out["learning_rates"].push_back(v);
        if (c.outfeed[i] == "regularization") out["regularizations"].push_back(v);
      }
    });
    // One validation after the training (training.validation): its batches in order, its outfeed.
    const bool validating = w.training.validation.enabled();
    sim::dataset::BatchSource validationBatches(
        sim::dataset::loadExamples(validating ? sim::dataset::validationDataset(w) : w.dataset), w.dataset.batchSize,
        w.dataset.shuffleSeed + 1, false);
    if (validating) {
      engine.stream("validation_images").connect([&](model::Bytes& b) {
        current = validationBatches.next();
        out["validation"]["batches"].push_back({{"images", current.images}, {"labels", current.labels}});
        b.resize(current.images.size() * 4);
        if (current.tokens.empty()) std::memcpy(b.data(), current.images.data(), b.size());
        else std::memcpy(b.data(), current.tokens.data(), b.size());
      });
      engine.stream("validation_labels").connect([&](model::Bytes& b) {
        const auto bytes = sim::dataset::labelBytes(current.labels, w.loss, w.dataset.classes);
        b.assign(bytes.begin(), bytes.end());
      });
      engine.stream("validation_loss").connect([&](model::Bytes& b) {
        for (std::size_t i = 0; i < c.validationOutfeed.size() && (i + 1) * sizeof(float) <= b.size(); ++i) {
          float v;
          std::memcpy(&v, b.data() + i * sizeof v, sizeof v);
          if (c.validationOutfeed[i] == "loss") out["validation"]["losses"].push_back(v);
          if (c.validationOutfeed[i] == "accuracy") out["validation"]["accuracies"].push_back(v);
        }
      });
    }
    DumpLoop loop("dump_loop", engine, steps / c.stepsPerRun,
                  validating ? w.training.validation.steps / c.validationStepsPerRun : 0);
    sc_core::sc_start();
    loop.rethrowFailure();
    out["final_weights"] = weightsNow();
    // Batch normalization's moving statistics after the training (what the validation read).
    out["moving_statistics"] = json::object();
    for (const auto& layer : w.layers)
      for (const char* name : {"moving_mean", "moving_variance"})
        for (ir::Id id = 0; id < c.exe.tensors.size(); ++id)
          if (c.exe.tensors[id].name == layer.name + "/" + name) out["moving_statistics"][layer.name][name] = valuesOf({id})[0];
    if (trajectory && !momentum.empty()) out["final_momentum"] = valuesOf(momentum);
    traces::OutputFile f(argv[3], outputPolicy);
    f.stream() << out.dump();
    f.commit();
    std::cerr << "ipusim-torch-dump: " << steps << " steps of " << w.name << " -> " << argv[3] << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ipusim-torch-dump: error: " << e.what() << "\n";
    return 1;
  }
}
