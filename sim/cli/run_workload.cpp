#include "sim/cli/run_workload.hpp"

#include "profiler/analysis/throughput.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/auto_checkpoints.hpp"
#include "scheduler/models/workload_limits.hpp"
#include "model/clock.hpp"
#include "model/util/fnv1a.hpp"
#include "model/util/json_error_text.hpp"
#include "profiler/analysis/host_wait.hpp"
#include "profiler/analysis/job_cycles.hpp"
#include "profiler/analysis/json_number.hpp"
#include "profiler/analysis/text_format.hpp"
#include "profiler/recorder/step_breakdown.hpp"
#include "sim/cli/compile_errors.hpp"
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/simulated_memory_bound.hpp"
#include "sim/cli/weights_digest.hpp"
#include "sim/cli/workload_overrides.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/dataset/batch_source.hpp"
#include "model/sanitizer_stack.hpp"
#include "sim/engine/engine.hpp"
#include "sim/host/interrupt.hpp"
#include "sim/host/predictions_file.hpp"
#include "sim/host/training_host.hpp"
#include "traces/output_file.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sys/resource.h>
#include <unistd.h>
#include <iomanip>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>

namespace ipusim::sim {

namespace {

// The dataset's batches as the raw bytes of the images and labels tensors.
class DatasetBatches : public BatchProvider {
 public:
  // `restartEvery` batches: from the first batch again (0: never).
  DatasetBatches(dataset::BatchSource source, scheduler::LossSpec loss, std::uint32_t classes,
                 std::uint64_t restartEvery = 0)
      : source_(std::move(source)), loss_(std::move(loss)), classes_(classes), restartEvery_(restartEvery) {}
  void next(model::Bytes& images, model::Bytes& labels) override {
    if (restartEvery_ && served_ && served_ % restartEvery_ == 0) source_.restart();
    ++served_;
    // Straight into the stream's buffer (operator new's alignment suits floats
    // and int32 token ids, both 4 bytes).
    images.resize(std::size_t(source_.batchSize()) * source_.features() * 4);
    labelIndices_.resize(std::size_t(source_.batchSize()) * source_.labelSteps());
    if (source_.holdsTokens()) source_.nextTokensInto(reinterpret_cast<std::int32_t*>(images.data()), labelIndices_.data());
    else source_.nextInto(reinterpret_cast<float*>(images.data()), labelIndices_.data());
    labels = dataset::labelBytes(labelIndices_, loss_, classes_);
  }

 private:
  dataset::BatchSource source_;
  scheduler::LossSpec loss_;
  std::uint32_t classes_;
  std::uint64_t restartEvery_, served_ = 0;
  std::vector<std::int32_t> labelIndices_;  // reused from step to step
};

// Fit's validation data (ValidationSpec, dataset::validationDataset), in
// order, from its first batch at each validation as Keras reads it.
std::unique_ptr<DatasetBatches> validationData(const scheduler::Workload& w, const std::string& workloadPath,
                                               std::uint64_t globalBatch) {
  const scheduler::ValidationSpec& validation = w.training.validation;
  const scheduler::DatasetSpec spec = dataset::validationDataset(w);
  dataset::Examples examples = dataset::loadExamples(spec);
  const std::uint64_t wholeBatches = examples.count / globalBatch;
  if (validation.steps > wholeBatches)
    throw std::invalid_argument(workloadPath + ": training.validation.steps: " + std::to_string(validation.steps) +
                                " batches of " + std::to_string(globalBatch) + " examples need more than the " +
                                std::to_string(examples.count) + " examples of the validation data" +
                                (spec.format == "synthetic" ? " (dataset.examples)" : " (" + spec.images + ")") +
                                ": at most " + std::to_string(wholeBatches) + " (Keras reads each once per validation)");
  return std::make_unique<DatasetBatches>(
      dataset::BatchSource(std::move(examples), std::uint32_t(globalBatch), spec.shuffleSeed, false), w.loss,
      w.dataset.classes, validation.steps);
}

std::string seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(s < 10 ? 3 : 2) << s << " s";
  return out.str();
}

std::string milliseconds(double s) {
  std::ostringstream out;
  out << std::setprecision(4) << s * 1e3 << " ms";
  return out.str();
}

std::string stepLine(const RunSummary& s) {
  const auto& c = s.step;
  if (c.steps == 0 || c.total <= 0) return "n/a";
  std::ostringstream out;
  auto part = [&](const char* name, double v) {
    out << ", " << name << " " << std::llround(v) << " (" << std::setprecision(3) << 100.0 * v / c.total << "%)";
  };
  out << std::llround(c.total) << " cycles on " << s.arch << ", " << s.tilesUsed << " tiles";
  part("compute", c.compute);
  part("exchange", c.exchange);
  if (c.ipuLink > 0) part("IPU link", c.ipuLink);
  if (c.collective > 0) part("collective", c.collective);
  part("sync", c.sync);
  part("stream copy", c.streamCopy);
  if (c.streamingMemory > 0) part("Streaming Memory", c.streamingMemory);
  part("idle", c.idle());
  return out.str();
}

// "2 (large phases on the pool: 324 of 30000; the rest on one thread)":
// the worker pool's adaptive choice, for a user asking what the second
// thread did.
std::string hostThreadsLine(const model::IpuSystem::HostThreads& h) {
  std::ostringstream out;
  out << h.threads;
  if (h.threads > 1)
    out << " (large phases on the pool: " << h.pooledPhases << " of " << h.largePhases << "; the rest on one thread)";
  return out.str();
}

// A loss as `run` prints it: NaN and infinities say what they mean.
std::string lossText(double loss, bool trained) {
  // Six decimals where they hold the value's figures; otherwise six
  // significant ones: std::to_string printed a loss of 3e-7 as "0.000000"
  // and a diverging 6.6e29 as 30 digits.
  if (std::isfinite(loss) && std::fabs(loss) >= 1e-3 && std::fabs(loss) < 1e6) return std::to_string(loss);
  if (std::isfinite(loss)) return profiler::analysis::numberText(loss);
  // (evaluate trains nothing: its loss overflows from the weights or the data)
  return profiler::analysis::numberText(loss) + (trained ? " (the training diverged)" : " (not finite)");
}

// The last step's other outfed values, as `run` prints them: one line
// ("final values     accuracy 0.8125, regularization 0.0421"), none when there are none.
std::string finalValuesLine(const std::vector<std::pair<std::string, double>>& values, const std::string& label) {
  if (values.empty()) return "";
  std::string line = label;
  for (std::size_t i = 0; i < values.size(); ++i)
    line += (i ? ", " : " ") + values[i].first + " " + profiler::analysis::numberText(values[i].second);
  return line + "\n";
}

nlohmann::json finalValuesJson(const std::vector<std::pair<std::string, double>>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values) out[name] = profiler::analysis::jsonNumber(value);
  return out;
}

// "idx: IMAGES, pixels / 255": what the model was fed.
std::string datasetLine(const RunSummary& s) {
  if (s.datasetFormat == "none") return "none (--synthetic-data: timing only)";
  std::string line =
      s.datasetFormat + (s.datasetImages.empty() ? std::string() : ": " + util::oneLineText(s.datasetImages));
  if (s.preprocessing == "divide_by_255") line += ", pixels / 255 (dataset.preprocessing)";
  else if (s.preprocessing == "none") line += ", raw pixels 0-255 (dataset.preprocessing none)";
  return line;
}

void print(const RunSummary& s, bool json) {
  if (json) {
    nlohmann::json out = {{"workload", s.workload},
                          {"task", s.task},
                          {"steps", s.steps},
                          {"steps_per_run", s.stepsPerRun},
                          {"feeds", s.feeds},
                          {"dataset", {{"format", s.datasetFormat},
                                       {"images", s.datasetImages.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.datasetImages)},
                                       {"preprocessing", s.preprocessing.empty() ? nlohmann::json(nullptr)
                                                                                 : nlohmann::json(s.preprocessing)}}},
                          {"final_loss", s.finalLoss ? profiler::analysis::jsonNumber(*s.finalLoss) : nlohmann::json(nullptr)},
                          {"final_values", finalValuesJson(s.finalValues)},
                          {"weights_digest",
                           s.weightsDigest ? nlohmann::json(*s.weightsDigest) : nlohmann::json(nullptr)},
                          {"validation", s.validations ? nlohmann::json{{"validations", s.validations},
                                                                        {"steps_each", s.validationStepsEach},
                                                                        {"every_steps", s.stepsBetweenValidations},
                                                                        {"last", finalValuesJson(s.validationValues)}}
                                                       : nlohmann::json(nullptr)},
                          {"cycles", s.cycles},
                          {"simulated_seconds", s.simulatedSeconds},
                          {"examples_per_second", profiler::analysis::examplesPerSecond(s.steps, s.examplesPerStep, s.simulatedSeconds)},
                          {"examples_per_second_per_ipu", profiler::analysis::examplesPerSecondPerIpu(s.steps, s.examplesPerStep,
                                                                                                      s.simulatedSeconds, s.ipus)},
                          {"engine_runs", s.engineRuns},
                          {"wall_seconds", s.wallSeconds},
                          {"peak_rss_bytes", s.peakRssBytes},
                          {"memory_estimate_bytes", s.memoryEstimateBytes},
                          {"memory_estimate_bytes_per_tile", s.memoryEstimateBytesPerTile},
                          {"speed_factor", s.wallSeconds > 0 ? s.simulatedSeconds / s.wallSeconds : 0.0},
                          {"tiles_used", s.tilesUsed},
                          {"step_cycles", {{"total", s.step.total}, {"compute", s.step.compute},
                                           {"exchange", s.step.exchange}, {"ipu_link", s.step.ipuLink},
                                           {"collective", s.step.collective},
                                           {"sync", s.step.sync},
                                           {"stream_copy", s.step.streamCopy},
                                           {"streaming_memory", s.step.streamingMemory}, {"idle", s.step.idle()}}},
                          {"estimated_step_cycles", s.stepCycles},
                          {"compile_seconds", s.compileSeconds},
                          {"max_tile_bytes", s.maxTileBytes},
                          {"tile_capacity_bytes", s.tileCapacity},
                          {"tiles_over_capacity", s.tilesOverCapacity},
                          {"recompute_checkpoints", s.recomputation.checkpoints},
                          {"recomputation_mode", s.recomputation.mode.empty() ? nlohmann::json(nullptr)
                                                                              : nlohmann::json(s.recomputation.mode)},
                          {"recomputed_ops", s.recomputation.ops},
                          {"streaming_memory_bytes", s.streamingMemoryBytes},
                          {"ipu_waiting_for_host", s.ipuWaitingForHost ? nlohmann::json(*s.ipuWaitingForHost)
                                                                       : nlohmann::json(nullptr)},
                          {"fitted_parameters", s.fittedParams},
                          {"host_threads", {{"threads", s.hostThreads.threads},
                                            {"pooled_phases", s.hostThreads.pooledPhases},
                                            {"large_phases", s.hostThreads.largePhases}}},
                          {"profile", s.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.profile)},
                          {"batch_latency_seconds", s.latencyBatches ? nlohmann::json{{"batches", s.latencyBatches},
                                                                                      {"p50", s.latencyP50},
                                                                                      {"p99", s.latencyP99},
                                                                                      {"max", s.latencyMax}}
                                                                    : nlohmann::json(nullptr)},
                          {"predictions", s.predictions.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.predictions)}};
    std::cout << profileJson(out) << "\n";
    return;
  }
  const bool predict = s.task == "predict";
  std::cout << "workload         " << s.workload << (s.feeds ? " (infeed/outfeed)" : " (no feeds)")
            << (s.task == "fit" ? "" : ", " + s.task) << "\n"
            << "steps            " << s.steps << " in " << s.engineRuns << " Engine::run calls (" << s.stepsPerRun
            << " per run)\n"
            << "dataset          " << datasetLine(s) << "\n";
  if (!predict)
    std::cout << (s.task == "fit" ? "final loss       " : "loss (mean)      ")
              << (s.finalLoss ? lossText(*s.finalLoss, s.task == "fit") : std::string("n/a (synthetic data)")) << "\n"
              << finalValuesLine(s.finalValues, s.task == "fit" ? "final values    " : "means           ");
  if (s.validations)
    std::cout << "validation       " << s.validations << " x " << s.validationStepsEach << " steps, every "
              << s.stepsBetweenValidations << " training steps; "
              << (s.validationValues.empty() ? std::string("no values (synthetic data)\n")
                                             : finalValuesLine(s.validationValues, "the last (means):"));
  // (Paths as a line shows them: an autoReport.directory holding a newline split the profile's line.)
  if (predict)
    std::cout << "predictions      "
              << (s.predictions.empty() ? "(not written: --predictions FILE)" : util::oneLineText(s.predictions))
              << "\n";
  if (s.latencyBatches)
    std::cout << "batch latency    p50 " << milliseconds(s.latencyP50) << ", p99 " << milliseconds(s.latencyP99)
              << ", max " << milliseconds(s.latencyMax) << " (" << s.latencyBatches << " batches; from the infeed to the host holding "
              << (predict ? "its predictions" : "its loss") << ")\n";
  std::cout
            << "compile          " << seconds(s.compileSeconds) << ", fullest tile " << s.maxTileBytes << " of "
            << s.tileCapacity << " bytes" << (s.tilesOverCapacity ? " (" + std::to_string(s.tilesOverCapacity) +
                                               (s.tilesOverCapacity == 1 ? " tile" : " tiles") +
                                               " OVER capacity: " + s.allowedOutOfMemoryBy + ")" : std::string())
            << (s.recomputation.ops ? ", recomputing " + scheduler::describe(s.recomputation) : std::string())
            << (s.streamingMemoryBytes ? ", optimizer state in Streaming Memory " + std::to_string(s.streamingMemoryBytes) +
                                             " bytes (training.offload_optimizer_state)"
                                       : std::string())
            << "\n"
            << "one step         " << stepLine(s) << "\n"
            << "simulated time   " << seconds(s.simulatedSeconds) << " (" << s.cycles << " cycles)\n"
            << "throughput       "
            << profiler::analysis::formatNumber(profiler::analysis::examplesPerSecond(s.steps, s.examplesPerStep, s.simulatedSeconds), 1)
            << " examples/s ("
            << profiler::analysis::formatNumber(
                   profiler::analysis::examplesPerSecondPerIpu(s.steps, s.examplesPerStep, s.simulatedSeconds, s.ipus), 1)
            << " per IPU, " << s.ipus << (s.ipus == 1 ? " IPU" : " IPUs") << "; host time included)\n"
            << "IPU waits, host  "
            << (!s.ipuWaitingForHost ? std::string("n/a (needs a profile: autoReport)")
                : std::isnan(*s.ipuWaitingForHost)
                    ? std::string("n/a (no run captured, as with autoReport.executionProfileProgramRunCount 0)")
                    : profiler::analysis::formatPercent(*s.ipuWaitingForHost) +
                          " of the captured runs and the host time before each")
            << "\n"
            << "fitted           absolute times rest on the fitted host parameters";
  for (const auto& name : s.fittedParams) std::cout << " " << name;
  std::cout << " (see `ipusim params`)\n"
            << "wall time        " << seconds(s.wallSeconds) << " (speed factor "
            << std::setprecision(3) << (s.wallSeconds > 0 ? s.simulatedSeconds / s.wallSeconds : 0.0) << ")\n"
            << "host threads     " << hostThreadsLine(s.hostThreads) << "\n"
            << "profile          " << (s.profile.empty() ? "(none: autoReport is off)" : util::oneLineText(s.profile));
  if (!s.profile.empty() && s.profileInstances > 0)
    std::cout << " (rank 0's, with its IPUs, of " << s.profileInstances << "; `ipusim report "
              << util::oneLineText(std::filesystem::path(s.profile).parent_path().string())
              << "` reads them as one system)";
  std::cout << "\n";
}

// The compile, with its stages shown on a terminal once it has taken a
// second (small models compile silently).
scheduler::CompiledWorkload compileWithProgress(const scheduler::Workload& workload, const model::Target& target,
                                                const std::string& file) {
  const auto start = std::chrono::steady_clock::now();
  const bool terminal = isatty(fileno(stderr));
  bool shown = false;
  auto stage = [&](const std::string& name) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!terminal || elapsed < 1.0) return;
    std::cerr << "\r\033[Kcompiling " << workload.name << ": " << name << " (" << seconds(elapsed) << ")" << std::flush;
    shown = true;
  };
  scheduler::CompiledWorkload compiled =
      namingWorkloadFile(file, [&] { return scheduler::compile(workload, target, stage); });
  if (shown) std::cerr << "\r\033[K" << std::flush;
  return compiled;
}

// The files a run reads (the profile and the predictions are never written over them).
std::vector<std::string> inputsOf(const RunWorkloadArgs& args, const scheduler::Workload& workload) {
  // (model.weights too: `--weights w.npy --predictions w.npy --force` replaced the trained weights.)
  std::vector<std::string> inputs{args.workloadPath, args.kerasPath, workload.kerasModel, workload.kerasWeights};
  if (workload.dataset.format != "synthetic") inputs.insert(inputs.end(), {workload.dataset.images, workload.dataset.labels});
  // (the validation data too: a validation labels file named profile.pop in the autoReport directory was replaced by the profile)
  const scheduler::ValidationSpec& validation = workload.training.validation;
  if (validation.enabled() && workload.dataset.format != "synthetic")
    inputs.insert(inputs.end(), {validation.images, validation.labels});
  return inputs;
}

}  // namespace

namespace {

int runWorkloadUnguarded(const RunWorkloadArgs& args) {
  const auto wallStart = std::chrono::steady_clock::now();
  // With --workload-set, --steps and --steps-per-execution join its values,
  // so the workload's checks see them together (training.steps_per_epoch=50
  // with --steps 100 against the file's steps).
  std::vector<std::string> sets = args.workloadSets;
  // Named with the flags they come from: "w.json with --workload-set:
  // training.steps: 4 must be a multiple of ..." blamed --workload-set for
  // --steps 4.
  std::vector<std::string> more;
  if (!sets.empty() && args.steps) {
    sets.push_back("training.steps=" + std::to_string(*args.steps));
    more.push_back("--steps");
  }
  if (!sets.empty() && args.stepsPerExecution) {
    sets.push_back("training.steps_per_execution=" + std::to_string(*args.stepsPerExecution));
    more.push_back("--steps-per-execution");
  }
  std::string from = args.workloadSetsFrom;  // "--workload-set", "--input-shape and --workload-set", ...
  if (!more.empty()) {
    if (const auto lastAnd = from.rfind(" and "); lastAnd != std::string::npos) from.replace(lastAnd, 5, ", ");
    from += more.size() == 1 ? " and " + more[0] : ", " + more[0] + " and " + more[1];
  }
  // The command's task too: the file's checks of fit's epochs and validation
  // do not apply to `ipusim evaluate` and `predict`.
  if (!sets.empty() && args.task) sets.push_back(std::string("task=\"") + scheduler::taskName(*args.task) + "\"");
  scheduler::Workload workload = args.kerasPath.empty() ? loadWorkloadWith(args.workloadPath, sets, from)
                                                        : kerasWorkload(args.kerasPath, sets, from);
  if (args.steps) workload.training.steps = *args.steps;
  if (args.stepsPerExecution) workload.training.stepsPerExecution = *args.stepsPerExecution;
  if (args.feeds) workload.training.feeds = *args.feeds;
  if (args.task) workload.task = *args.task;
  const bool predict = workload.task == scheduler::Task::Predict;
  // Named as the file's reader names it: a model that trains nothing because
  // `--vary model.layers[1].trainable=false` froze a layer was blamed on the
  // workload file alone, whose layers are trainable (and so was a batch
  // larger than the dataset, of `--vary dataset.batch_size=16`).
  const std::string source = sets.empty()            ? args.workloadPath
                             : args.kerasPath.empty() ? args.workloadPath + " with " + from
                                                      : from + " on the workload made for " +
                                                            args.kerasPath;
  scheduler::checkTask(workload, source);
  // Under mpirun every rank finds the same warnings: rank 0 alone says them
  // (a dataset read more than once was said once a rank), as it alone
  // writes the predictions (whose path every rank refused, each saying so).
  const bool rankZero = !args.peers || args.peers->instance() == 0;
  std::ostream nowhere(nullptr);  // (no buffer: what is written goes nowhere)
  std::ostream& warn = rankZero ? std::cerr : nowhere;
  if (!args.predictionsPath.empty() && args.synthetic)
    throw std::invalid_argument("--predictions needs the numbers: --synthetic-data computes none");
  // The predictions' path is checked before the compile (which may take minutes): never one of the inputs.
  const traces::OutputPolicy outputPolicy{args.force, inputsOf(args, workload)};
  if (!args.predictionsPath.empty() && rankZero) {
    PredictionsFile::checkName(args.predictionsPath);  // (after the compile, ResNet-50's 20 s went before the refusal)
    traces::checkOutputPath(args.predictionsPath, outputPolicy);
  }
  if (workload.training.steps == 0) throw std::invalid_argument("--steps must be positive");
  if (workload.training.stepsPerExecution == 0) throw std::invalid_argument("--steps-per-execution must be positive");
  scheduler::checkWorkloadLimits(workload, "--steps/--steps-per-execution with " + args.workloadPath);
  scheduler::checkStepCounts(workload, "--steps/--steps-per-execution with " + args.workloadPath);

  const model::Target target = args.target.apply(scheduler::targetFor(workload));
  const HostParams host = args.target.applyHost(HostParams::defaults());
  host.checkCycles(target);
  // Options first: debug.allowOutOfMemory decides whether an over-full tile stops the compile.
  const EngineOptions options = resolveEngineOptions(nlohmann::json::object(), args.engineOptions);
  // (Named as given: a workload's compile.allow_out_of_memory was called
  // debug.allowOutOfMemory in the warning and the summary.)
  const std::string allowedOutOfMemoryBy = options.allowOutOfMemory ? "debug.allowOutOfMemory"
                                           : workload.allowOutOfMemory ? "compile.allow_out_of_memory"
                                                                       : "";
  if (options.allowOutOfMemory) workload.allowOutOfMemory = true;
  // The data before the compile: its checks ("examples cannot fill one batch",
  // a bad IDX header) take milliseconds, the compile may take seconds.
  std::unique_ptr<DatasetBatches> batches, validationBatches;
  const std::uint32_t replicas = scheduler::replicasOf(workload);
  if (args.peers && replicas % args.peers->instances() != 0)
    throw std::invalid_argument(source + ": ipu.num_ipus: " + std::to_string(replicas) + " replica" +
                                    (replicas == 1 ? "" : "s") + " over " + std::to_string(args.peers->instances()) +
                                    " ranks (mpirun -n " + std::to_string(args.peers->instances()) +
                                    "): expected a number of replicas divisible by the ranks, as PopDist divides them");
  const scheduler::ValidationSpec& validation = workload.training.validation;
  const bool validating = workload.task == scheduler::Task::Fit && validation.enabled();
  std::string dataDigest;  // under mpirun: the ranks agree on their data (InstanceShare::agree)
  if (!args.synthetic) {
    dataset::Examples examples = dataset::loadExamples(workload.dataset);
    if (args.peers) {
      // A rank reading another file of the same shape ran the same run's
      // shape: evaluate and predict mixed its examples into rank 0's figures
      // without a word (FNV-1a over the examples and their order's seed).
      util::Fnv1a hash;
      hash.add(&examples.count, sizeof examples.count)
          .add(examples.pixels.data(), examples.pixels.size())
          .add(examples.labels.data(), examples.labels.size() * sizeof(std::uint16_t))
          .add(examples.tokens.data(), examples.tokens.size() * sizeof(std::int32_t))
          .add(&examples.pixelDivisor, sizeof examples.pixelDivisor)
          .add(&workload.dataset.shuffleSeed, sizeof workload.dataset.shuffleSeed);
      dataDigest = ", data " + hash.hex();
    }
    // Each replica takes its own batch: the infeed's global batch is batch_size x replicas.
    const std::uint64_t globalBatch = std::uint64_t(workload.dataset.batchSize) * replicas;
    if (examples.count < globalBatch)
      throw std::invalid_argument(source + ": dataset.batch_size: " +
                                  std::to_string(workload.dataset.batchSize) + " x " + std::to_string(replicas) +
                                  " replicas (ipu.num_ipus) is more than the " +
                                  std::to_string(examples.count) + " examples of the dataset: they cannot fill one batch");
    // Keras's evaluate and predict read each example once; the batches here
    // wrap around (a partial last batch dropped, as in fit): predictions
    // past the dataset's examples were rows of its first ones again, without a word.
    const std::uint64_t wholeBatches = examples.count / globalBatch;
    if (workload.task != scheduler::Task::Fit && workload.training.steps > wholeBatches) {
      const std::string what = std::to_string(workload.training.steps) + " steps of " + std::to_string(globalBatch) +
                               " examples read the dataset's " + std::to_string(examples.count) +
                               " examples more than once (Keras's evaluate and predict read each once: at most " +
                               std::to_string(wholeBatches) + " steps here)";
      if (!args.predictionsPath.empty() && rankZero)
        throw std::invalid_argument("--predictions " + args.predictionsPath + ": " + what +
                                    "; its rows would not be the examples in order");
      warn << "ipusim: warning: " << what << "\n";
    }
    batches = std::make_unique<DatasetBatches>(
        // Keras's evaluate and predict do not shuffle: the examples in their order.
        dataset::BatchSource(std::move(examples), std::uint32_t(globalBatch), workload.dataset.shuffleSeed,
                             workload.task == scheduler::Task::Fit),
        workload.loss, workload.dataset.classes);
    if (validating) validationBatches = validationData(workload, source, globalBatch);
  }
  // Timing only: identical replicas are compiled and laid out once (their
  // phases mirrored, model/ir/replica_mirror.hpp), unless every replica is
  // asked for or the serialized graph (which holds every replica) is written.
  workload.mirrorReplicas = args.synthetic && !args.fullReplicas && !options.outputSerializedGraph;
  workload.functional = !args.synthetic;
  const auto compileStart = std::chrono::steady_clock::now();
  scheduler::CompiledWorkload compiled =
      compileWithProgress(workload, target, args.kerasPath.empty() ? args.workloadPath : args.kerasPath);
  const double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
  for (const std::string& warning : compiled.report.warnings) warn << "ipusim: warning: " << warning << "\n";
  if (compiled.report.tilesOverCapacity)
    warn << "ipusim: warning: " << compiled.report.tilesOverCapacity
              << (compiled.report.tilesOverCapacity == 1 ? " tile is over its" : " tiles are over their")
              << " capacity of "
              << target.tile.memoryBytes << " bytes (the fullest needs " << compiled.report.maxTileBytes
              << "); compiled only because " << allowedOutOfMemoryBy
              << " is set: this program would not load on an IPU\n";

  if (!args.synthetic)
    checkSimulatedTileBytes(compiled.exe, args.kerasPath.empty() ? args.workloadPath : args.kerasPath);
  EngineConfig config;
  config.inputs = outputPolicy.inputs;
  config.functional = !args.synthetic;
  config.workerThreads = args.threads;
  config.fuseMatMuls = !args.tileByTile;
  config.workloadName = workload.name;
  config.peers = args.peers;
  config.extraMeta = {{"task", scheduler::taskName(workload.task)},
                      {"steps", workload.training.steps},
                      {"steps_per_execution", workload.training.stepsPerExecution},
                      {"feeds", workload.training.feeds ? "true" : "false"},
                      {"batch_size", workload.dataset.batchSize},
                      {"replicas", replicas},
                      {"replicas_mirrored", compiled.exe.mirror.active() ? "true" : "false"},
                      {"tiles_used", compiled.report.tilesUsed},
                      {"schedule", compiled.report.schedule}};
  // (What the insights may offer: "auto" checkpoints where it finds some,
  // recomputation where "auto" recomputes an op. Only a profile reads them.)
  if (workload.task == scheduler::Task::Fit && options.writesProfile()) {
    if (!workload.pipeline.enabled())
      config.extraMeta["recompute_auto_checkpoints"] = scheduler::autoRecomputeCheckpoints(workload).size();
    try {
      config.extraMeta["recompute_auto_ops"] = scheduler::autoRecomputedOps(workload);
    } catch (const std::exception& e) {
      // (A trial the compiled fit does not need: the profile then does not
      // say, and the insights decide as they did before the key existed.)
      warn << "ipusim: warning: recomputation as \"auto\" not tried for the profile's meta: " << e.what() << "\n";
    }
  }
  std::uint64_t streamingMemoryBytes = 0;
  for (const ir::RemoteBuffer& b : compiled.exe.remoteBuffers) streamingMemoryBytes += b.numBytes();
  Engine engine(std::move(compiled.exe), target, options, config);

  TrainingPlan plan;
  plan.steps = workload.training.steps;
  plan.stepsPerExecution = compiled.stepsPerRun;
  plan.feeds = workload.training.feeds;
  plan.replicas = replicas;
  plan.outfeed = compiled.outfeed;
  plan.entry = engine.entryIndex(scheduler::entryPointOf(workload.task));
  if (predict) {
    plan.labelsStream.clear();
    plan.lossStream = "predictions";
    plan.predictionWidth = compiled.predictionWidth;
  }
  plan.outfeedMode = workload.training.outfeedMode == "LAST" ? OutfeedMode::Last : OutfeedMode::All;
  if (validating) {
    plan.validation.everyTrainingRuns = workload.training.epochSteps() / plan.stepsPerRun() * validation.freq;
    plan.validation.stepsPerRun = compiled.validationStepsPerRun;
    plan.validation.runsEach = validation.steps / compiled.validationStepsPerRun;
    plan.validation.entry = engine.entryIndex("validation");
    plan.validation.outfeed = compiled.validationOutfeed;
  }

  TrainingHost trainer("host", engine, plan, host, batches.get(), validationBatches.get());
  // Every step's rows: the global batch's, a row per example (per step of a class per step).
  std::unique_ptr<PredictionsFile> predictions;
  // (Under mpirun, rank 0 alone writes them: every rank's outfeed copies are complete.)
  if (!args.predictionsPath.empty() && (!args.peers || args.peers->instance() == 0)) {
    const std::uint64_t rows = workload.training.steps * workload.dataset.batchSize * replicas * workload.dataset.labelSteps;
    predictions = std::make_unique<PredictionsFile>(args.predictionsPath, rows, compiled.predictionWidth, outputPolicy);
    trainer.onPredictions([&](const float* values, std::uint64_t count) { predictions->append(values, count); });
  }
  // The steady state: the second run when there is one (the first pays the pipeline's fill).
  profiler::StepBreakdown breakdown(plan.runs() > 1 ? plan.runIndexOfTrainingRun(1) : 0);
  engine.system().addObserver(&breakdown);
  // Under mpirun: the end of the set-up, which every rank reaches (a rank
  // whose set-up failed reports it there too: run_on_ranks.hpp); then the
  // ranks agree on the run before any collective.
  if (args.setUpDone) args.setUpDone();
  if (InstanceShare* share = engine.share())
    share->agree(workload.name + ": " + scheduler::taskName(workload.task) + ", " + std::to_string(plan.steps) +
                     " steps, " + std::to_string(plan.stepsPerRun()) + " a run, " +
                     (plan.feeds ? "feeds" : "no feeds") + (args.synthetic ? ", synthetic data" : "") + ", " +
                     std::to_string(plan.validation.runsEach) + " validation runs each " +
                     std::to_string(plan.validation.everyTrainingRuns) + " runs" + dataDigest,
                 engine.system().executable());
  ProgressBar progress("simulating " + workload.name, plan.steps);
  trainer.onProgress([&](std::uint64_t, std::uint64_t steps) {
    if (!progress.enabled()) return;
    const double simulated = target.cyclesToSeconds(model::nowCycles());
    progress.update(steps, "steps, " + seconds(simulated) + " simulated");
  });
  {
    const CooperativeInterrupts stopBetweenSteps;
    sc_core::sc_start();
    model::noteBackOnMainStack();  // see model/sanitizer_stack.hpp
  }
  if (interruptRequested()) {
    std::cerr << "\nipusim: interrupted after " << trainer.stepsDone() << " of " << plan.steps
              << " steps; no profile written\n";
    return kInterruptedExitCode;
  }
  trainer.rethrowFailure();
  if (predictions) predictions->commit();

  RunSummary summary;
  summary.workload = workload.name;
  summary.task = scheduler::taskName(workload.task);
  summary.predictions = predictions ? args.predictionsPath : "";
  const BatchLatencies& latencies = trainer.latencies();
  summary.latencyBatches = latencies.count();
  summary.latencyP50 = target.cyclesToSeconds(latencies.percentile(0.5));
  summary.latencyP99 = target.cyclesToSeconds(latencies.percentile(0.99));
  summary.latencyMax = target.cyclesToSeconds(latencies.max());
  summary.steps = trainer.stepsDone();
  summary.engineRuns = trainer.runsDone();
  summary.stepsPerRun = plan.stepsPerRun();
  summary.examplesPerStep = std::uint64_t(workload.dataset.batchSize) * scheduler::replicasOf(workload);
  // The IPUs the run used: the target's (ipu.num_ipus, when more than one,
  // equals it; a one-replica model on `--ipus 2` spans both IPUs' tiles, and
  // "per IPU, 1 IPU" gave twice its per-IPU figure).
  summary.ipus = target.numIpus();
  summary.feeds = plan.feeds;
  // (--synthetic-data: nothing is fed, the run is timing only.)
  summary.datasetFormat = args.synthetic ? "none" : workload.dataset.format;
  if (!args.synthetic && workload.dataset.format != "synthetic") summary.datasetImages = workload.dataset.images;
  if (!args.synthetic && !workload.dataset.vocabulary) summary.preprocessing = workload.dataset.preprocessing;
  if (!args.synthetic && workload.task == scheduler::Task::Evaluate) {
    // Keras's evaluate: the loss and metrics averaged over the batches.
    const auto means = trainer.meanValues();
    if (!means.empty()) summary.finalLoss = means.front().second;
    if (!means.empty()) summary.finalValues.assign(means.begin() + 1, means.end());
  } else if (!args.synthetic && !predict) {
    summary.finalLoss = trainer.finalLoss();
    summary.finalValues = trainer.finalValues();
  }
  if (plan.validation.enabled()) {
    summary.validations = trainer.validationsDone();
    summary.validationStepsEach = workload.training.validation.steps;
    summary.stepsBetweenValidations = plan.validation.everyTrainingRuns * plan.stepsPerRun();
    summary.validationValues = trainer.lastValidation();
  }
  if (!args.synthetic)
    summary.weightsDigest = weightsDigest(engine.system(), engine.share() ? engine.share()->firstReplica() : 0,
                                          engine.share() ? engine.share()->replicas() : replicas);
  summary.cycles = trainer.endCycle();
  summary.simulatedSeconds = target.cyclesToSeconds(trainer.endCycle());
  summary.stepCycles = compiled.report.estimatedStepCycles;
  summary.tilesUsed = compiled.report.tilesUsed;
  summary.compileSeconds = compileSeconds;
  summary.maxTileBytes = compiled.report.maxTileBytes;
  summary.memoryEstimateBytes = compiled.report.estimatedModelBytes;
  summary.memoryEstimateBytesPerTile = compiled.report.estimatedModelBytesPerTile;
  summary.tileCapacity = target.tile.memoryBytes;
  summary.tilesOverCapacity = compiled.report.tilesOverCapacity;
  summary.allowedOutOfMemoryBy = allowedOutOfMemoryBy;
  // Only what the compiled graph recomputes (a warning says when nothing is).
  summary.recomputation = compiled.report.recomputation;
  summary.streamingMemoryBytes = streamingMemoryBytes;
  summary.step = breakdown.result();
  summary.arch = target.arch;
  // Under mpirun the ranks compare their weights before the profile is
  // committed: ranks whose weights differ left each a profile that read as complete.
  if (InstanceShare* share = engine.share(); share && summary.weightsDigest)
    share->agreeOnWeights(*summary.weightsDigest);
  summary.profile = engine.finish();
  if (const InstanceShare* share = engine.share()) summary.profileInstances = share->instances();
  summary.fittedParams = fittedHostParams();
  summary.hostThreads = engine.system().hostThreads();
  if (!summary.profile.empty()) {
    // The figures every output shares come from the profile, by their one definition.
    const traces::ProfileReader reader(summary.profile);
    summary.cycles = std::uint64_t(profiler::analysis::jobCycles(reader));
    summary.simulatedSeconds = target.cyclesToSeconds(summary.cycles);
    summary.ipuWaitingForHost = profiler::analysis::ipuWaitingForHost(reader).share();
  }
  summary.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) == 0) summary.peakRssBytes = std::uint64_t(usage.ru_maxrss) * 1024;  // KiB on Linux
  if (InstanceShare* share = engine.share()) {
    // Each rank says what it computed and what its gathers cost; rank 0
    // alone prints the run's summary, as one process does.
    const InstanceShare::Traffic& t = share->traffic();
    std::ostringstream line;
    line.precision(3);
    line << "ipusim: rank " << args.peers->instance() << " of " << args.peers->instances() << ": ";
    // Every rank times every replica; a functional run divides the numbers'
    // work, a timing-only one has none to divide (its share named none).
    if (args.synthetic)
      line << "timing only, all " << share->replicas() << " replicas on every rank";
    else
      line << "replicas " << share->firstReplica() << "-" << share->firstReplica() + share->replicaCount() - 1
           << " of " << share->replicas();
    line << ", " << t.gathers << " gathers, " << double(t.bytesSent) / 1e6 << " MB sent, " << t.seconds
         << " s in MPI, " << summary.wallSeconds << " s in all";
    if (summary.weightsDigest) line << ", weights digest " << *summary.weightsDigest;
    line << "\n";
    std::cerr << line.str();
    if (args.peers->instance() != 0) return 0;
  }
  print(summary, args.json);
  return 0;
}

}  // namespace

// Out of memory names the file and what would need less, and suggests
// --synthetic-data only when the run computes the numbers (sim/main.cpp's
// generic message named no file and suggested it either way).
int runWorkload(const RunWorkloadArgs& args) {
  try {
    return runWorkloadUnguarded(args);
  } catch (const std::bad_alloc&) {
    rusage usage{};
    const double peakGb = getrusage(RUSAGE_SELF, &usage) == 0 ? double(usage.ru_maxrss) * 1024 / 1e9 : 0;
    std::ostringstream peak;
    peak.precision(3);
    peak << peakGb;
    const std::string& file = args.kerasPath.empty() ? args.workloadPath : args.kerasPath;
    throw std::runtime_error(file + ": out of memory: compiling and simulating this model needs more host memory than "
                             "the machine gives the process (its peak so far " + peak.str() +
                             " GB); fewer layers, pipeline stages, replicas, IPUs or tiles, or a smaller batch, need less" +
                             (args.synthetic ? std::string() : ", as does --synthetic-data (the same cycles without the numbers)"));
  }
}

}  // namespace ipusim::sim
