#pragma once
// The compiler: a Workload -> an executable, as Poplar/PopLibs would build it.
//   op graph (forward, autodiff, SGD) -> schedule -> tile mapping and
//   lowering -> memory plan -> entry point "train".
// The workload's task (Workload::task) picks the step: fit's (below),
// evaluate's (entry point "evaluate": forward, loss and metrics outfed as
// fit's, no gradient) or predict's (entry point "predict": forward only, no
// labels stream, the outputs outfed on stream "predictions").
// "train" runs steps_per_execution training steps when feeds are on (a
// Repeat over one step) and one step without feeds; each step is a Sequence
// with marksStep: StreamCopy images, StreamCopy labels, forward, backward,
// update, and StreamCopy loss (outfeed mode ALL; with LAST the loss stays on
// the device and one StreamCopy follows the loop). The loss of a step is the
// batch mean cross-entropy (a scalar). Fit with validation adds the entry
// point "validation" (CompiledWorkload::validationOutfeed).
#include "model/ir/code_memory.hpp"
#include "model/ir/executable.hpp"
#include "model/target.hpp"
#include "scheduler/planning/conv_plan.hpp"
#include "scheduler/planning/matmul_plan.hpp"
#include "scheduler/models/auto_checkpoints.hpp"
#include "scheduler/models/workload.hpp"

#include <functional>

#include <string>

namespace ipusim::scheduler {

// Called with the name of each compile stage as it starts.
using CompileProgress = std::function<void(const std::string& stage)>;

struct CompileReport {
  std::string schedule;                // the algorithm used (choose_best names its pick)
  std::uint32_t tilesUsed = 0;
  std::uint64_t peakLivenessBytes = 0; // of the op schedule (not-always-live values)
  // The up-front estimate of one replica's device memory, made from the layer
  // shapes before the op graph is built (scheduler/models/memory_estimate.hpp;
  // a lower bound), in all and per tile; saturated at 2^64 - 1.
  std::uint64_t estimatedModelBytes = 0;
  std::uint64_t estimatedModelBytesPerTile = 0;
  std::uint64_t maxTileBytes = 0;
  double meanTileBytes = 0;            // over the tiles used
  std::uint64_t estimatedStepCycles = 0;  // one step's compute, exchange and syncs (no host transfers)
  std::uint64_t estimatedValidationStepCycles = 0;  // the same of a validation step (fit with validation)
  std::size_t computeSets = 0, exchanges = 0;
  std::uint32_t tilesOverCapacity = 0;  // with allow_out_of_memory; over all replicas (the profile's count)
  // The model's weights, in elements (one replica's): every layer's
  // (OpGraph::modelWeights), and those the optimizer updates (OpGraph::
  // weights); the rest are frozen layers' (trainable: false). Keras's
  // "Trainable params"; its "Non-trainable params" add the moving statistics.
  std::uint64_t weightElements = 0, trainableWeightElements = 0;
  // With compile.code_memory: one replica's code and vertex state, summed
  // over its tiles (model/ir/code_memory.hpp); zero without.
  ir::CodeBytes codeBytes;
  // What the step recomputes (graph/recomputation.hpp): no ops, checkpoints
  // or mode when the recomputation asked for finds nothing to recompute,
  // which the summaries then do not claim (models/auto_checkpoints.hpp).
  RecomputationSummary recomputation;
  std::vector<PlannedMatMul> matMulPlans;  // in program order
  std::vector<PlannedConv> convPlans;      // in program order
  std::vector<std::string> warnings;       // what the user should know about the model compiled (OpGraph::warnings)
};

struct CompiledWorkload {
  ir::Executable exe;
  model::Target target;
  ir::Id imagesStream = ir::kNoId, labelsStream = ir::kNoId, lossStream = ir::kNoId;
  ir::Id imagesTensor = ir::kNoId, labelsTensor = ir::kNoId, lossTensor = ir::kNoId;
  std::vector<ir::Id> weightTensors;   // every layer's weights (kernel, bias, ...) in layer order, frozen ones too
  // What each float of one outfeed copy (per replica) holds, in order: "loss",
  // then "accuracy" (every loss but mean_squared_error), "learning_rate" (a schedule's).
  std::vector<std::string> outfeed;
  // Predict (Workload::task): the outfeed ("predictions" stream, lossStream)
  // holds a row of this many floats per example (per step of a sequence's
  // class per step), the model's outputs side by side; 0 otherwise.
  std::uint64_t predictionWidth = 0;
  std::uint32_t stepsPerRun = 1;       // steps one run of the entry point executes
  // Fit with validation (ValidationSpec): entry point "validation" runs
  // validationStepsPerRun steps of the validation pass, each reading a batch
  // from its own streams into the training step's input tensors (the
  // weights, state and inputs are the training step's) and outfeeding
  // validationOutfeed's values (loss, accuracy, metrics, regularization).
  ir::Id validationImagesStream = ir::kNoId, validationLabelsStream = ir::kNoId, validationLossStream = ir::kNoId;
  std::vector<std::string> validationOutfeed;
  std::uint32_t validationStepsPerRun = 0;
  CompileReport report;
};

// The target the workload asks for (arch preset, tile override).
model::Target targetFor(const Workload& w);
// The forward ops a fit of `w` would recompute as "auto" makes it
// (withAutoRecomputation: a pipeline's recomputation_mode "Auto", else
// training.recompute_checkpoints "auto"): 0 when it recomputes none (no
// checkpoint found, or every activation the backward pass reads is kept
// already: a first stage of one dense layer, "auto"'s one checkpoint after a
// flatten). From the training step's op graph alone (no planning or
// lowering: a small part of a compile). What the insights may offer.
std::size_t autoRecomputedOps(const Workload& w);

// Throws std::invalid_argument for a workload that cannot be compiled (an
// out-of-memory tile names the tile, its need and its capacity).
CompiledWorkload compile(const Workload& w, const CompileProgress& progress = {});
CompiledWorkload compile(const Workload& w, const model::Target& target, const CompileProgress& progress = {});

}  // namespace ipusim::scheduler
