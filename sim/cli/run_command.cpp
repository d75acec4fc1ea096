#include "sim/cli/commands.hpp"
#include "sim/cli/run_graph.hpp"
#include "sim/cli/run_workload.hpp"
#include "sim/cli/workload_overrides.hpp"

namespace ipusim::sim {

void addRunCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("run", "Simulate a training workload (WORKLOAD.json) or a serialized graph (--graph)");
  auto workload = std::make_shared<RunWorkloadArgs>();
  auto graph = std::make_shared<RunGraphArgs>();
  auto feeds = std::make_shared<bool>(false);
  auto noFeeds = std::make_shared<bool>(false);
  auto* workloadOption =
      cmd->add_option("workload", workload->workloadPath, "training workload (see workloads/README.md)");
  auto* graphOption = cmd->add_option(
      "--graph", graph->graphPath, "serialized executable (serialized_graph.json, workloads/graphs/*.json)");
  workloadOption->excludes(graphOption);
  auto* kerasOption = cmd->add_option(
      "--keras", workload->kerasPath,
      "a Keras model: a model.to_json() file (Keras 1, 2, TF 2.x or Keras 3) or a Keras 3 .keras archive (its "
      "config.json; the weights are not read), trained with the defaults for the rest (see workloads/README.md)");
  kerasOption->excludes(workloadOption)->excludes(graphOption);
  // A flag of the other kind of run is refused, not ignored: `run --graph G
  // --steps 100` ran the graph's default runs, `run W --runs 5` the
  // workload's steps, without a word.
  std::vector<CLI::Option*> workloadOnly;
  workloadOnly.push_back(
      cmd->add_option("--steps", workload->steps, "training steps (overrides training.steps)")->check(wholeNumberAtLeastOne()));
  workloadOnly.push_back(cmd->add_option("--steps-per-execution", workload->stepsPerExecution,
                  "steps per Engine::run with feeds (overrides training.steps_per_execution)")
      ->check(wholeNumberAtLeastOne(std::numeric_limits<std::uint32_t>::max())));
  workloadOnly.push_back(cmd->add_option("--workload-set", workload->workloadSets,
                  "set a workload key before compiling: key.path=value (repeatable; e.g. training.outfeed.mode=LAST)")
      ->allow_extra_args(false));
  auto inputShape = std::make_shared<std::string>();
  workloadOnly.push_back(cmd->add_option("--input-shape", *inputShape,
                  "H,W,C (any rank): the per-example input shape, for a Keras file that leaves sizes unknown "
                  "(as dataset.input_shape)"));
  auto* feedsFlag = cmd->add_flag("--feeds", *feeds, "use infeed/outfeed queues");
  workloadOnly.push_back(feedsFlag);
  workloadOnly.push_back(
      cmd->add_flag("--no-feeds", *noFeeds, "one step per Engine::run, data copied with each run")->excludes(feedsFlag));
  cmd->add_option("--entry", graph->entry, "with --graph: entry point to run (default: the first)")->needs(graphOption);
  cmd->add_option("--runs", graph->runs, "with --graph: how many times to call Engine::run")
      ->check(wholeNumberAtLeastOne())
      ->needs(graphOption);
  auto engineOptions = std::make_shared<std::string>();
  cmd->add_option("--engine-options", *engineOptions,
                  "engine options as a JSON object; POPLAR_ENGINE_OPTIONS wins over it (see `ipusim options`)");
  auto synthetic = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--synthetic-data", *synthetic, "skip the numerics and host data, keep identical timing");
  auto fullReplicas = std::make_shared<bool>(false);
  workloadOnly.push_back(cmd->add_flag("--full-replicas", *fullReplicas,
                "with --synthetic-data and replicas: lay out and time every replica in full (by default one replica's "
                "program stands for all, with identical cycles; see sim/README.md)"));
  cmd->add_flag("--json", *json, "print the summary as one JSON object");
  auto threads = std::make_shared<std::uint32_t>(0);
  cmd->add_option("--threads", *threads,
                  "host threads for the functional work, at most 64 as IPUSIM_WORKER_THREADS (0 or absent: "
                  "IPUSIM_WORKER_THREADS, else 2 when 2 CPUs are allowed, else 1; the second is used only while that "
                  "is measured faster, epoch by epoch); results do not change")
      ->check(wholeNumberFrom(0, 64));  // --threads 1000000 started a million threads
  auto tileByTile = std::make_shared<bool>(false);
  workloadOnly.push_back(cmd->add_flag("--tile-by-tile", *tileByTile,
                "compute each matrix product as its tile program lists it (gathered blocks, partials, reductions), "
                "so that tile memory also holds its temporaries; slower, the same results (by default a product "
                "is computed whole, bit for bit the same; model/README.md)"));
  for (CLI::Option* option : workloadOnly) option->excludes(graphOption);
  auto target = std::make_shared<TargetFlags>();
  target->addTo(*cmd);
  cmd->callback([=, &exitCode] {
    if (!graph->graphPath.empty()) {
      graph->engineOptions = *engineOptions;
      graph->synthetic = *synthetic;
      graph->json = *json;
      graph->threads = *threads;
      graph->target = *target;
      exitCode = runGraph(*graph);
      return;
    }
    if (workload->workloadPath.empty() && workload->kerasPath.empty())
      throw std::invalid_argument("run: give a workload file (e.g. workloads/mnist_with_feeds.json), --keras MODEL.json or --graph FILE");
    if (!workload->kerasPath.empty()) workload->workloadPath = workload->kerasPath;  // names the run in messages
    if (!inputShape->empty())  // first, so that --workload-set can still say otherwise
      workload->workloadSets.insert(workload->workloadSets.begin(),
                                    "dataset.input_shape=" + inputShapeJson(*inputShape).dump());
    if (*feeds) workload->feeds = true;
    if (*noFeeds) workload->feeds = false;
    workload->engineOptions = *engineOptions;
    workload->synthetic = *synthetic;
    workload->fullReplicas = *fullReplicas;
    workload->json = *json;
    workload->threads = *threads;
    workload->tileByTile = *tileByTile;
    workload->target = *target;
    exitCode = runWorkload(*workload);
  });
}

}  // namespace ipusim::sim
