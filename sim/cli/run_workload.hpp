#pragma once
// `ipusim run WORKLOAD` (and `evaluate`, `predict`): compiles a workload for
// its task and simulates it with the host runtime (the loop, dataset, feeds)
// in this process.
#include "model/ipu_system.hpp"
#include "profiler/recorder/step_breakdown.hpp"
#include "scheduler/models/auto_checkpoints.hpp"
#include "scheduler/models/workload.hpp"
#include "sim/cli/target_flags.hpp"
#include "sim/engine/replica_peers.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::sim {

struct RunWorkloadArgs {
  std::string workloadPath;
  std::string kerasPath;  // --keras MODEL.json instead of a workload file
  std::optional<std::uint64_t> steps;
  std::optional<std::uint32_t> stepsPerExecution;
  std::optional<bool> feeds;
  bool synthetic = false;
  // --full-replicas: with --synthetic-data, lay out and time every replica
  // (otherwise identical replicas are compiled once: model/ir/replica_mirror.hpp).
  bool fullReplicas = false;
  bool json = false;
  std::uint32_t threads = 0;
  // --tile-by-tile: compute the matrix products as their tile programs list
  // them (model::LoadOptions::fuseMatMuls off).
  bool tileByTile = false;
  std::string engineOptions;
  TargetFlags target;
  std::vector<std::string> workloadSets;  // --workload-set key.path=value
  // The flags the assignments came from, as errors name them: --weights and
  // --input-shape are assignments too (model.weights, dataset.input_shape),
  // and their errors said "--workload-set" when it was not given.
  std::string workloadSetsFrom = "--workload-set";
  // `ipusim evaluate` / `predict`: the task, over the workload's "task" key.
  std::optional<scheduler::Task> task;
  std::string predictionsPath;  // predict --predictions FILE.npy | FILE.csv
  bool force = false;           // replace an existing predictions file
  // Under mpirun (run_on_ranks.hpp): the other instances; this process
  // computes its share of the replicas (sim/engine/instance_share.hpp).
  ReplicaPeers* peers = nullptr;
  // Under mpirun: called once the set-up has succeeded (the workload, its
  // data, the compile, the load, the predictions file begun), before the
  // ranks agree on the run; throws when another rank's set-up failed
  // (run_on_ranks.hpp). Every error before it is a set-up error.
  std::function<void()> setUpDone;
};

// The summary `ipusim run` prints (and, with --json, the object it prints).
struct RunSummary {
  std::string workload;
  std::string task = "fit";  // scheduler::taskName: fit | evaluate | predict
  std::uint64_t steps = 0, engineRuns = 0, stepsPerRun = 0;
  std::uint64_t examplesPerStep = 0;  // batch size x replicas
  std::uint32_t ipus = 0;             // every IPU of the job
  bool feeds = false;
  // What was fed: the dataset's format, its images file (none: synthetic),
  // and how its pixels were scaled (DatasetSpec::preprocessing; none for token ids).
  std::string datasetFormat, datasetImages, preprocessing;
  // The last step's loss (NaN or inf when the training diverged); none without numbers (synthetic data).
  std::optional<double> finalLoss;
  // weights_digest.hpp: replica 0's trained weights (this instance's first replica under mpirun); none without numbers.
  std::optional<std::string> weightsDigest;
  // The last step's other outfed values (accuracy, metrics, regularization, learning rate); none without numbers.
  std::vector<std::pair<std::string, double>> finalValues;
  // Fit with validation (training.validation): the validations run, the
  // steps of each and between them, and the last one's values (val_loss,
  // val_accuracy, ...: means over its batches; none without numbers).
  std::uint64_t validations = 0, validationStepsEach = 0, stepsBetweenValidations = 0;
  std::vector<std::pair<std::string, double>> validationValues;
  std::uint64_t cycles = 0;
  double simulatedSeconds = 0, wallSeconds = 0;
  std::uint64_t peakRssBytes = 0;  // the process's peak resident memory (getrusage), at the end of the run
  // The compiler's up-front estimate of one replica's device memory, made
  // before the run (scheduler/models/memory_estimate.hpp), in all and per tile.
  std::uint64_t memoryEstimateBytes = 0, memoryEstimateBytesPerTile = 0;
  std::uint64_t stepCycles = 0;  // compiler's estimate of one step's device cycles
  std::uint32_t tilesUsed = 0;
  double compileSeconds = 0;             // wall time of the compile alone
  std::uint64_t maxTileBytes = 0;        // the compiler's per-tile peak (= the profile's)
  std::uint64_t tileCapacity = 0;
  std::uint32_t tilesOverCapacity = 0;   // > 0 only with debug.allowOutOfMemory or compile.allow_out_of_memory
  std::string allowedOutOfMemoryBy;      // which of the two (the engine option wins)
  // What the fit's compiled step recomputes (checkpoints as chosen for "auto",
  // the mode with "Auto" resolved); nothing when it recomputes no op.
  scheduler::RecomputationSummary recomputation;
  std::uint64_t streamingMemoryBytes = 0;  // the remote buffers' bytes (training.offload_optimizer_state)
  std::string arch;
  profiler::StepCycles step;  // one steady-state step's device cycles, measured
  std::string profile;
  // Under mpirun: the ranks whose profiles (profile.rankK.pop, each its IPUs) make the run's; 0 otherwise.
  std::uint32_t profileInstances = 0;
  // From the profile, by profiler/analysis' one definition; absent without a
  // profile, NaN (--json: null) when it captured no run.
  std::optional<double> ipuWaitingForHost;
  // Each batch's latency (sim/host/batch_latency.hpp), in seconds; none with outfeed mode LAST.
  std::uint64_t latencyBatches = 0;
  double latencyP50 = 0, latencyP99 = 0, latencyMax = 0;
  std::string predictions;  // the predictions file written, if any
  std::vector<std::string> fittedParams;  // host parameters the absolute times rest on
  model::IpuSystem::HostThreads hostThreads;  // how the functional work used the host's threads
};

int runWorkload(const RunWorkloadArgs& args);

}  // namespace ipusim::sim
