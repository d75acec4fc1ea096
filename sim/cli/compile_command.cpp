// `ipusim compile WORKLOAD`: compile only, and say how — the time of each
// compile stage, the fullest tile against its capacity, the estimated step
// against the AMP lower bound, and every matmul's and convolution's plan. The figures a user
// needs before spending a simulation on a model (and what bench/ records).
#include "model/codelets/per_worker.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/auto_checkpoints.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/compile_errors.hpp"
#include "sim/cli/target_flags.hpp"
#include "sim/cli/workload_overrides.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/options/engine_options.hpp"
#include "traces/output_file.hpp"

#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::sim {
namespace {

struct CompileArgs {
  std::string workloadPath, kerasPath, graphPath, engineOptions, output, inputShape;
  std::vector<std::string> workloadSets;  // --workload-set key.path=value, as run's
  bool json = false, force = false;
  TargetFlags target;
};

// The multiply-accumulates of one convolution pass: every element of its
// input (input gradient: of the undilated deltas) or of its output (forward,
// weight update: of the deltas) meets a whole kernel window, the border
// products of a same padding included; in conv groups, each output channel
// meets its group's input channels only.
double convMacs(const scheduler::ConvShape& s) {
  const double window = double(s.kernelH) * double(s.kernelW) * double(s.groups);
  if (s.pass == scheduler::ConvPass::InputGrad)
    return double(s.batch) * double(s.inH) * double(s.inW) * double(s.inChans) * window * double(s.outChans);
  return double(s.batch) * double(s.outH) * double(s.outW) * double(s.outChans) * window * double(s.inChans);
}

// Multiply-accumulates of one training step's matmuls and convolutions, from the plans' shapes.
double stepMacs(const scheduler::CompileReport& r) {
  double macs = 0;
  for (const auto& p : r.matMulPlans) macs += p.macs;
  for (const auto& p : r.convPlans) macs += convMacs(p.shape);
  return macs;
}

int compileWorkload(const CompileArgs& args) {
  // --workload-set as `run` applies it: a what-if compiled without a copy of
  // the file (compile.code_memory=true), the checks naming the flag.
  // --input-shape too, as run takes it: a Keras model leaving its sizes
  // unknown is refused with that remedy (it was run's flag only).
  std::vector<std::string> assignments = args.workloadSets;
  std::string from = assignments.empty() ? "" : "--workload-set";
  if (!args.inputShape.empty()) {  // first, so that --workload-set can still say otherwise
    assignments.insert(assignments.begin(), "dataset.input_shape=" + inputShapeJson(args.inputShape).dump());
    from = from.empty() ? "--input-shape" : "--input-shape and " + from;
  }
  const bool sets = !assignments.empty();
  const bool keras = !args.kerasPath.empty();
  const std::string& file = keras ? args.kerasPath : args.workloadPath;
  scheduler::Workload workload = keras  ? kerasWorkload(args.kerasPath, assignments, from)
                                 : sets ? loadWorkloadWith(args.workloadPath, assignments, from)
                                        : scheduler::loadWorkload(args.workloadPath);
  // As run checks it (the compiler's own refusals name no file).
  const std::string madeFor = "the workload made for " + args.kerasPath;
  scheduler::checkTask(workload, keras  ? (sets ? from + " on " + madeFor : madeFor)
                                 : sets ? args.workloadPath + " with " + from
                                        : args.workloadPath);
  const model::Target target = args.target.apply(scheduler::targetFor(workload));
  const EngineOptions options = resolveEngineOptions(nlohmann::json::object(), args.engineOptions);
  if (options.allowOutOfMemory) workload.allowOutOfMemory = true;
  // The serialized graph is written as `export` writes (traces/output_file.hpp):
  // never onto an input (the workload, its Keras file and weights, its dataset and validation data), never over
  // a file without --force, through a temporary file renamed when complete.
  // Checked before compiling: a refused output costs nothing.
  std::optional<traces::OutputFile> output;
  if (!args.output.empty()) {
    traces::OutputPolicy policy{args.force, {file}};
    for (const std::string* input :
         {&workload.kerasModel, &workload.kerasWeights, &workload.dataset.images, &workload.dataset.labels,
          &workload.training.validation.images, &workload.training.validation.labels})
      if (!input->empty()) policy.inputs.push_back(*input);
    output.emplace(args.output, policy);
  }
  const auto start = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::vector<std::pair<std::string, double>> stages;  // name, start second
  const scheduler::CompiledWorkload c = namingWorkloadFile(file, [&] {
    return scheduler::compile(workload, target, [&](const std::string& stage) { stages.push_back({stage, since()}); });
  });
  const double seconds = since();
  if (output) {
    try {
      ir::writeJson(c.exe, output->stream());  // bounded, element by element (model/ir/executable.hpp)
    } catch (const std::length_error& e) {
      throw std::invalid_argument(args.output + ": " + e.what());  // the OutputFile leaves nothing
    }
    output->commit();
  }
  const scheduler::CompileReport& r = c.report;
  std::uint64_t remoteBytes = 0;  // training.offload_optimizer_state's remote buffers
  for (const ir::RemoteBuffer& b : c.exe.remoteBuffers) remoteBytes += b.numBytes();
  // The graph's size, as Poplar's graph report counts it (a per-worker
  // vertex as its worker vertices), and ipusim's own vertices.
  std::uint64_t vertices = 0, edges = 0, params = 0, irVertices = 0;
  model::WorkerVertexCount workerVertices(target.tile);
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) {
      const std::uint64_t n = workerVertices(v);
      ++irVertices, vertices += n, edges += n * v.fields.size(), params += n * v.params.size();
    }
  // The AMP's rate for the model's compute type (float32, or half for float16 and mixed_float16).
  const bool half = workload.dtype != "float32";
  const double ampPeak = double(half ? target.tile.ampHalfMacsPerCycle : target.tile.ampFloatMacsPerCycle) *
                         target.tile.tilesPerIpu * target.numIpus();
  const double lowerBound = stepMacs(r) / ampPeak;
  nlohmann::json stageJson = nlohmann::json::object();
  for (std::size_t i = 0; i < stages.size(); ++i)
    stageJson[stages[i].first] = (i + 1 < stages.size() ? stages[i + 1].second : seconds) - stages[i].second;
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& p : r.matMulPlans)
    plans.push_back({{"op", p.op}, {"m", p.m}, {"k", p.k}, {"n", p.n}, {"groups", p.groups}, {"pg", p.plan.pg},
                     {"pm", p.plan.pm}, {"pk", p.plan.pk}, {"pn", p.plan.pn}, {"serial", p.plan.serial}, {"tiles", p.plan.tiles()},
                     {"estimated_cycles", p.plan.cost.total()}, {"amp_cycles", p.plan.cost.compute},
                     {"amp_efficiency", p.macs / ampPeak / double(p.plan.cost.compute)},
                     {"temporary_bytes_per_tile", p.plan.cost.temporaryBytesPerTile}});
  nlohmann::json convs = nlohmann::json::array();
  for (const auto& p : r.convPlans)
    convs.push_back({{"op", p.op}, {"batch", p.shape.batch}, {"in_h", p.shape.inH}, {"in_w", p.shape.inW},
                     {"in_chans", p.shape.groups * p.shape.inChans}, {"out_h", p.shape.outH}, {"out_w", p.shape.outW},
                     {"out_chans", p.shape.groups * p.shape.outChans}, {"kernel_h", p.shape.kernelH},
                     {"kernel_w", p.shape.kernelW}, {"groups", p.shape.groups}, {"pg", p.plan.pg},
                     {"pb", p.plan.pb}, {"ph", p.plan.ph}, {"pci", p.plan.pci}, {"pco", p.plan.pco},
                     {"vertex", scheduler::toString(p.plan.method)},
                     {"estimated_cycles", p.plan.cost.total()}, {"amp_cycles", p.plan.cost.compute},
                     {"amp_efficiency", convMacs(p.shape) / ampPeak / double(std::max<ir::Cycles>(1, p.plan.cost.compute))},
                     {"temporary_bytes_per_tile", p.plan.cost.temporaryBytesPerTile}});
  // compile.code_memory's bytes over every tile (null without it).
  const nlohmann::json codeBytes = workload.codeMemory ? nlohmann::json{{"vertex_code", r.codeBytes.vertexCode},
                                                                        {"vertex_state", r.codeBytes.vertexState},
                                                                        {"control_code", r.codeBytes.controlCode},
                                                                        {"exchange_code", r.codeBytes.exchangeCode}}
                                                       : nlohmann::json(nullptr);
  if (args.json) {
    std::cout << profileJson(nlohmann::json{{"workload", workload.name}, {"arch", target.arch},
                                {"compile_seconds", seconds}, {"stages", stageJson},
                                {"compute_sets", c.exe.computeSets.size()}, {"vertices", vertices},
                                {"ir_vertices", irVertices},
                                {"edges", edges}, {"vertex_params", params}, {"tensors", c.exe.tensors.size()},
                                {"weight_elements", r.weightElements},
                                {"trainable_weight_elements", r.trainableWeightElements},
                                {"tiles_used", r.tilesUsed}, {"max_tile_bytes", r.maxTileBytes},
                                {"code_bytes", codeBytes},
                                {"memory_estimate_bytes", r.estimatedModelBytes},
                                {"memory_estimate_bytes_per_tile", r.estimatedModelBytesPerTile},
                                {"tile_capacity_bytes", target.tile.memoryBytes},
                                {"tiles_over_capacity", r.tilesOverCapacity},
                                {"estimated_step_cycles", r.estimatedStepCycles},
                                {"dtype", workload.dtype}, {"amp_macs_per_cycle", ampPeak},
                                {"step_macs", stepMacs(r)}, {"amp_lower_bound_cycles", lowerBound},
                                // What the step recomputes, as the run's --json gives it.
                                {"recompute_checkpoints", r.recomputation.checkpoints},
                                {"recomputation_mode", r.recomputation.mode.empty()
                                                           ? nlohmann::json(nullptr)
                                                           : nlohmann::json(r.recomputation.mode)},
                                {"recomputed_ops", r.recomputation.ops},
                                {"streaming_memory_bytes", remoteBytes},
                                {"matmuls", plans}, {"convolutions", convs}})
              << "\n";
    return 0;
  }
  std::cout << "workload          " << workload.name << " on " << target.arch << " (" << target.totalTiles() << " tiles)\n"
            << "compile           " << std::fixed << std::setprecision(3) << seconds << " s:";
  for (const auto& [name, at] : stages) std::cout << " " << name << " " << stageJson[name].get<double>() << " s;";
  std::cout << "\ngraph             " << c.exe.computeSets.size() << " compute sets, " << vertices << " vertices ("
            << irVertices << " in ipusim's graph: per-worker vertices), " << edges << " edges, " << c.exe.tensors.size()
            << " tensors"
            << "\nweights           " << r.weightElements << " elements, " << r.trainableWeightElements
            << " trainable"
            << (r.weightElements > r.trainableWeightElements
                    ? ", " + std::to_string(r.weightElements - r.trainableWeightElements) + " frozen (trainable: false)"
                    : std::string())
            << "\ntiles used        " << r.tilesUsed << "\n"
            << "fullest tile      " << r.maxTileBytes << " of " << target.tile.memoryBytes << " bytes"
            << (r.tilesOverCapacity ? " (" + std::to_string(r.tilesOverCapacity) +
                                          (r.tilesOverCapacity == 1 ? " tile" : " tiles") + " OVER capacity)"
                                    : std::string())
            << "\nestimated step    " << r.estimatedStepCycles << " cycles (compute, exchange, syncs; no host transfers)\n";
  // One replica's code (CompileReport::codeBytes): "over the tiles" read as
  // every IPU's, a quarter of it on 4 replicas.
  const std::uint32_t replicas =
      c.exe.ipusPerReplica ? std::max<std::uint32_t>(1, target.numIpus() / c.exe.ipusPerReplica) : 1;
  if (workload.codeMemory)
    std::cout << "code              " << r.codeBytes.total() << " bytes over "
              << (replicas > 1 ? "each of the " + std::to_string(replicas) + " replicas' tiles"
                               : std::string("the tiles"))
              << ": vertex code "
              << r.codeBytes.vertexCode << ", vertex state " << r.codeBytes.vertexState << ", control code "
              << r.codeBytes.controlCode << ", exchange code " << r.codeBytes.exchangeCode
              << " (compile.code_memory; in the tiles' memory)\n";
  if (remoteBytes)
    std::cout << "Streaming Memory  " << remoteBytes << " bytes of optimizer state in " << c.exe.remoteBuffers.size()
              << " remote buffers (training.offload_optimizer_state)\n";
  if (scheduler::recomputes(workload)) {
    // What the step recomputes; what was asked for, as "nothing to recompute",
    // when the compiled graph recomputes no op.
    const scheduler::RecomputationSummary asked{0, workload.training.recomputeCheckpoints,
                                                workload.pipeline.recomputationMode};
    const scheduler::RecomputationSummary& shown = r.recomputation.ops ? r.recomputation : asked;
    std::cout << "recomputation     " << (r.recomputation.ops ? "" : "nothing to recompute ")
              << scheduler::describe(shown);
    for (std::size_t k = 0; k < shown.checkpoints.size(); ++k) std::cout << (k ? " " : ": ") << shown.checkpoints[k];
    std::cout << "\n";
  }
  std::cout
            << "AMP lower bound   " << std::llround(lowerBound) << " cycles (" << std::setprecision(0) << stepMacs(r)
            << " MACs / " << ampPeak << " " << (half ? "half" : "float") << " MACs per cycle): step at "
            << std::setprecision(2)
            << double(r.estimatedStepCycles) / std::max(1.0, lowerBound) << "x\n"
            << "matmul plans (partition pm x pk x pn of m x k x n, serial passes, estimated cycles, AMP phase efficiency;\n"
            << "  a batched product's groups: \"groups G in pg\", its groups dealt over the tiles in pg blocks):\n";
  for (const auto& p : plans) {
    const std::uint64_t groups = p["groups"].get<std::uint64_t>();
    std::cout << "  " << std::left << std::setw(28) << p["op"].get<std::string>() << std::right << std::setw(6)
              << p["m"].get<std::uint64_t>() << " x" << std::setw(6) << p["k"].get<std::uint64_t>() << " x"
              << std::setw(6) << p["n"].get<std::uint64_t>() << "   " << std::setw(4) << p["pm"].get<std::uint64_t>()
              << " x" << std::setw(4) << p["pk"].get<std::uint64_t>() << " x" << std::setw(4)
              << p["pn"].get<std::uint64_t>() << "  serial " << p["serial"].get<std::uint64_t>() << std::setw(10)
              << p["estimated_cycles"].get<std::uint64_t>() << " cycles  " << std::setprecision(0)
              << 100 * p["amp_efficiency"].get<double>() << "%"
              << (groups > 1 ? "  groups " + std::to_string(groups) + " in " + std::to_string(p["pg"].get<std::uint64_t>())
                             : std::string())
              << "\n";
  }
  if (convs.empty()) return 0;
  std::cout << "convolution plans (input b x h x w x c -> output h x w x c, kernel[, conv groups]; partition "
               "pg x pb x ph x pci x pco, vertex, estimated cycles, AMP phase efficiency):\n";
  for (const auto& p : convs) {
    auto n = [&](const char* key) { return std::to_string(p[key].get<std::uint64_t>()); };
    std::cout << "  " << std::left << std::setw(28) << p["op"].get<std::string>() << std::right << " "
              << n("batch") + "x" + n("in_h") + "x" + n("in_w") + "x" + n("in_chans") << " -> "
              << n("out_h") + "x" + n("out_w") + "x" + n("out_chans") << ", " << n("kernel_h") + "x" + n("kernel_w")
              << (p["groups"].get<std::uint64_t>() > 1 ? ", " + n("groups") + " groups" : std::string()) << ";  "
              << n("pg") + " x " + n("pb") + " x " + n("ph") + " x " + n("pci") + " x " + n("pco") << " "
              << p["vertex"].get<std::string>() << std::setw(10)
              << p["estimated_cycles"].get<std::uint64_t>() << " cycles  " << std::setprecision(0)
              << 100 * p["amp_efficiency"].get<double>() << "%\n";
  }
  return 0;
}

}  // namespace

void addCompileCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand(
      "compile", "Compile a workload without running it: stage times, fullest tile, estimated step, matmul plans");
  auto args = std::make_shared<CompileArgs>();
  auto* workload = cmd->add_option("workload", args->workloadPath, "training workload (see workloads/README.md)");
  // As run takes them; without them CLI11 answered "The following argument was not expected: --keras".
  cmd->add_option("--keras", args->kerasPath,
                  "a Keras model (a model.to_json() file or a Keras 3 .keras archive) compiled with the defaults for "
                  "the rest, as `run --keras` runs it")
      ->excludes(workload);
  cmd->add_option("--graph", args->graphPath,
                  "refused: a serialized graph is compiled already (`run --graph` runs it)");
  cmd->add_option("--engine-options", args->engineOptions,
                  "engine options as a JSON object (debug.allowOutOfMemory); POPLAR_ENGINE_OPTIONS wins over it");
  cmd->add_option("-o,--output", args->output, "also write the executable as a serialized graph (JSON)")
      ->check(outputFileName());
  cmd->add_flag("--force", args->force,
                "replace the --output file if it exists (never an input, a directory, a device or a FIFO)");
  cmd->add_flag("--json", args->json, "print the result as one JSON object");
  // (Without it, CLI11 answered "The following arguments were not expected: compile.code_memory=true
  // --workload-set", which named neither the command nor what it takes.)
  cmd->add_option("--workload-set", args->workloadSets,
                  "set a workload key before compiling, as run does: key.path=value (repeatable; e.g. "
                  "compile.code_memory=true, model.layers[0].units=64)")
      ->allow_extra_args(false);
  cmd->add_option("--input-shape", args->inputShape,
                  "H,W,C (any rank): the per-example input shape, for a Keras file that leaves sizes unknown (as "
                  "dataset.input_shape), as run takes it");
  args->target.addTo(*cmd);
  cmd->callback([args, &exitCode] {
    if (!args->graphPath.empty())
      throw std::invalid_argument("compile --graph " + args->graphPath +
                                  ": a serialized graph is compiled already; `ipusim run --graph " + args->graphPath +
                                  "` runs it, `ipusim compile WORKLOAD` or `compile --keras MODEL` compiles a model");
    if (args->workloadPath.empty() && args->kerasPath.empty())
      throw std::invalid_argument(
          "compile: give a workload file (e.g. workloads/mnist_with_feeds.json) or --keras MODEL.json");
    exitCode = compileWorkload(*args);
  });
}

}  // namespace ipusim::sim
