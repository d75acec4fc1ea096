#include "sim/cli/commands.hpp"
#include "sim/cli/run_graph.hpp"
#include "sim/cli/run_on_ranks.hpp"
#include "sim/cli/run_workload.hpp"
#include "sim/cli/workload_overrides.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace ipusim::sim {
namespace {

// The flags every simulation takes, a workload's or a serialized graph's.
struct CommonFlags {
  std::string engineOptions;
  bool synthetic = false, json = false;
  std::uint32_t threads = 0;
  TargetFlags target;
};

void addCommonFlags(CLI::App& cmd, const std::shared_ptr<CommonFlags>& f) {
  cmd.add_option("--engine-options", f->engineOptions,
                 "engine options as a JSON object; POPLAR_ENGINE_OPTIONS wins over it (see `ipusim options`)");
  cmd.add_flag("--synthetic-data", f->synthetic, "skip the numerics and host data, keep identical timing");
  cmd.add_flag("--json", f->json, "print the summary as one JSON object");
  cmd.add_option("--threads", f->threads,
                 "host threads for the functional work, at most 64 as IPUSIM_WORKER_THREADS (0 or absent: "
                 "IPUSIM_WORKER_THREADS, else 2 when 2 CPUs are allowed, else 1; the second is used only while that "
                 "is measured faster, epoch by epoch); results do not change")
      ->check(wholeNumberFrom(0, 64));  // --threads 1000000 started a million threads
  f->target.addTo(cmd);
}

// The flags of a workload's run (`run WORKLOAD`, `evaluate`, `predict`),
// each returned so that `run` can refuse them with --graph; `finish` fills
// the arguments once parsed.
struct WorkloadFlags {
  std::vector<CLI::Option*> options;
  CLI::Option* workload = nullptr;
  std::function<void(RunWorkloadArgs&)> finish;
};

// `afterWorkload` adds the options that come next (run's --graph: CLI11
// names the clash of two options in the order they were added).
WorkloadFlags addWorkloadFlags(CLI::App& cmd, const std::shared_ptr<RunWorkloadArgs>& args, const char* what,
                               const std::function<void()>& afterWorkload = {}) {
  WorkloadFlags flags;
  flags.workload = cmd.add_option("workload", args->workloadPath, "the workload (see workloads/README.md)");
  if (afterWorkload) afterWorkload();
  auto* keras = cmd.add_option(
      "--keras", args->kerasPath,
      std::string("a Keras model: a model.to_json() file (Keras 1, 2, TF 2.x or Keras 3) or a Keras 3 .keras archive (its "
                  "config.json; its weights with --weights), ") + what + " with the defaults for the rest (see workloads/README.md)");
  keras->excludes(flags.workload);
  flags.options.push_back(keras);
  flags.options.push_back(cmd.add_option("--steps", args->steps, "steps, a batch each (overrides training.steps)")
                              ->check(wholeNumberAtLeastOne()));
  flags.options.push_back(cmd.add_option("--steps-per-execution", args->stepsPerExecution,
                                         "steps per Engine::run with feeds (overrides training.steps_per_execution)")
                              ->check(wholeNumberAtLeastOne(std::numeric_limits<std::uint32_t>::max())));
  flags.options.push_back(cmd.add_option("--workload-set", args->workloadSets,
                                         "set a workload key before compiling: key.path=value (repeatable; e.g. "
                                         "training.outfeed.mode=LAST, model.layers[0].units=64)")
                              ->allow_extra_args(false));
  auto weights = std::make_shared<std::string>();
  flags.options.push_back(cmd.add_option("--weights", *weights,
                                         "a Keras 3 model's trained weights (its .keras archive, or a .weights.h5 file): "
                                         "the weights start from them (as model.weights; needs a Keras model)")
                              ->check(nonEmptyFileName()));
  auto inputShape = std::make_shared<std::string>();
  flags.options.push_back(cmd.add_option("--input-shape", *inputShape,
                                         "H,W,C (any rank): the per-example input shape, for a Keras file that leaves "
                                         "sizes unknown (as dataset.input_shape)"));
  auto feeds = std::make_shared<bool>(false), noFeeds = std::make_shared<bool>(false);
  auto* feedsFlag = cmd.add_flag("--feeds", *feeds, "use infeed/outfeed queues");
  flags.options.push_back(feedsFlag);
  flags.options.push_back(
      cmd.add_flag("--no-feeds", *noFeeds, "one step per Engine::run, data copied with each run")->excludes(feedsFlag));
  auto fullReplicas = std::make_shared<bool>(false);
  flags.options.push_back(cmd.add_flag("--full-replicas", *fullReplicas,
                                       "with --synthetic-data and replicas: lay out and time every replica in full (by "
                                       "default one replica's program stands for all, with identical cycles; see "
                                       "sim/README.md)"));
  auto tileByTile = std::make_shared<bool>(false);
  flags.options.push_back(cmd.add_flag("--tile-by-tile", *tileByTile,
                                       "compute each matrix product as its tile program lists it (gathered blocks, "
                                       "partials, reductions), so that tile memory also holds its temporaries; slower, "
                                       "the same results (by default a product is computed whole, bit for bit the "
                                       "same; model/README.md)"));
  flags.finish = [=](RunWorkloadArgs& a) {
    if (!a.kerasPath.empty()) a.workloadPath = a.kerasPath;  // names the run in messages
    std::vector<std::string> from;
    if (!inputShape->empty()) from.push_back("--input-shape");
    if (const char* vary = std::getenv(kWorkloadSetsFromVariable)) {  // a sweep's point: its --vary values
      if (!a.workloadSets.empty() && *vary) from.push_back(vary);
      ::unsetenv(kWorkloadSetsFromVariable);
    } else if (!a.workloadSets.empty()) {
      from.push_back("--workload-set");
    }
    if (!weights->empty()) from.push_back("--weights");
    if (!from.empty()) {
      a.workloadSetsFrom = from[0];
      for (std::size_t i = 1; i < from.size(); ++i) a.workloadSetsFrom += (i + 1 < from.size() ? ", " : " and ") + from[i];
    }
    if (!inputShape->empty())  // first, so that --workload-set can still say otherwise
      a.workloadSets.insert(a.workloadSets.begin(), "dataset.input_shape=" + inputShapeJson(*inputShape).dump());
    if (!weights->empty()) {  // a path from here, wherever the workload is
      // It becomes the workload's model.weights, a JSON string: a name that
      // is not UTF-8 failed with the JSON library's "invalid UTF-8 byte".
      const nlohmann::json path = std::filesystem::absolute(*weights).string();
      const std::string shown = nlohmann::json(*weights).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      try {
        a.workloadSets.push_back("model.weights=" + path.dump());
      } catch (const nlohmann::json::type_error&) {
        throw std::invalid_argument("--weights " + shown + ": the file name is not UTF-8 text (U+FFFD shows each "
                                    "byte that is not); expected UTF-8, as model.weights in a workload file");
      }
    }
    if (*feeds) a.feeds = true;
    if (*noFeeds) a.feeds = false;
    a.fullReplicas = *fullReplicas;
    a.tileByTile = *tileByTile;
  };
  return flags;
}

void useCommonFlags(RunWorkloadArgs& a, const CommonFlags& f) {
  a.engineOptions = f.engineOptions;
  a.synthetic = f.synthetic;
  a.json = f.json;
  a.threads = f.threads;
  a.target = f.target;
}

}  // namespace

void addRunCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("run", "Simulate a workload (WORKLOAD.json; its task, fit by default) or a "
                                        "serialized graph (--graph)");
  cmd->footer(
      "Under mpirun (mpirun -n H ipusim run WORKLOAD): each rank is an instance computing R/H of the workload's R "
      "replicas (rank r: replicas r*R/H .. (r+1)*R/H-1, R divisible by H), fed its replicas' shares of each global "
      "batch; the gradients cross ranks at the all-reduce, bit for bit as in one process. Rank 0 prints the "
      "summary; each rank writes its own reports, named by rank: profile.rankK.pop (and "
      "serialized_graph.rankK.json) in autoReport.directory (sim/README.md, \"Instances\").");
  auto workload = std::make_shared<RunWorkloadArgs>();
  auto graph = std::make_shared<RunGraphArgs>();
  CLI::Option* graphOption = nullptr;
  const WorkloadFlags flags = addWorkloadFlags(*cmd, workload, "trained", [&] {
    graphOption = cmd->add_option("--graph", graph->graphPath,
                                  "serialized executable (serialized_graph.json, workloads/graphs/*.json)");
  });
  // A flag of the other kind of run is refused, not ignored: `run --graph G
  // --steps 100` ran the graph's default runs, `run W --runs 5` the
  // workload's steps, without a word.
  flags.workload->excludes(graphOption);
  for (CLI::Option* option : flags.options) option->excludes(graphOption);
  cmd->add_option("--entry", graph->entry, "with --graph: entry point to run (default: the first)")->needs(graphOption);
  cmd->add_option("--runs", graph->runs, "with --graph: how many times to call Engine::run")
      ->check(wholeNumberAtLeastOne())
      ->needs(graphOption);
  auto common = std::make_shared<CommonFlags>();
  addCommonFlags(*cmd, common);
  cmd->callback([=, &exitCode] {
    if (!graph->graphPath.empty()) {
      graph->engineOptions = common->engineOptions;
      graph->synthetic = common->synthetic;
      graph->json = common->json;
      graph->threads = common->threads;
      graph->target = common->target;
      exitCode = runGraph(*graph);
      return;
    }
    useCommonFlags(*workload, *common);
    // (Under mpirun these errors are the set-up's: said once.)
    exitCode = runWorkloadOnRanks(*workload, [=](RunWorkloadArgs& a) {
      if (a.workloadPath.empty() && a.kerasPath.empty())
        throw std::invalid_argument(
            "run: give a workload file (e.g. workloads/mnist_with_feeds.json), --keras MODEL.json or --graph FILE");
      flags.finish(a);
    });
  });
}

void addTaskCommand(CLI::App& app, int& exitCode, scheduler::Task task) {
  const bool predict = task == scheduler::Task::Predict;
  auto* cmd = app.add_subcommand(
      scheduler::taskName(task),
      predict ? "Simulate Keras's model.predict on a workload's dataset: forward passes only, the outputs outfed "
                "(and written with --predictions), with each batch's latency"
              : "Simulate Keras's model.evaluate on a workload's dataset: forward passes, the loss and metrics "
                "outfed, no gradient");
  auto workload = std::make_shared<RunWorkloadArgs>();
  const WorkloadFlags flags = addWorkloadFlags(*cmd, workload, predict ? "predicting" : "evaluated");
  if (predict) {
    cmd->add_option("--predictions", workload->predictionsPath,
                    "write the predictions to FILE.npy (a NumPy float32 array, a row per example) or FILE.csv")
        ->check(outputFileName());
    cmd->add_flag("--force", workload->force, "with --predictions: replace an existing file");
  }
  auto common = std::make_shared<CommonFlags>();
  addCommonFlags(*cmd, common);
  cmd->callback([=, &exitCode] {
    useCommonFlags(*workload, *common);
    workload->task = task;
    exitCode = runWorkloadOnRanks(*workload, [=](RunWorkloadArgs& a) {
      if (a.workloadPath.empty() && a.kerasPath.empty())
        throw std::invalid_argument(std::string(scheduler::taskName(task)) + ": give a workload file (e.g. "
                                    "workloads/mnist_with_feeds.json) or --keras MODEL.json");
      flags.finish(a);
    });
  });
}

}  // namespace ipusim::sim
