// Recomputation (training.recompute_checkpoints; scheduler/graph/
// recomputation.hpp): the backward pass of the segments before the last
// checkpoint reads recomputed copies of their activations, which run after
// the gradient reaches them; liveness and the up-front estimate fall; the
// key's errors. (That the numbers stay bit for bit the same is
// tests/e2e/test_recomputation_results.cpp.)
#include "scheduler/compiler.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/schedule.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/memory_estimate.hpp"
#include "scheduler/models/workload.hpp"
#include "training_harness.hpp"
#include "tests/test_build.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace ipusim::scheduler::recomputation_test {
namespace {

using ipusim::testing::workloadRefusal;

// Dense layers named `names` (relu; then a softmax output "out") over 64
// features at batch `batch`, `width` units each.
nlohmann::json denseChain(std::uint64_t batch = 8, std::uint64_t width = 32,
                          const std::vector<std::string>& names = {"a", "b", "c"}) {
  nlohmann::json layers = nlohmann::json::array();
  for (const std::string& name : names)
    layers.push_back({{"type", "dense"}, {"units", width}, {"activation", "relu"}, {"name", name}});
  layers.push_back({{"type", "dense"}, {"units", 10}, {"activation", "softmax"}, {"name", "out"}});
  return {{"dataset", {{"format", "synthetic"}, {"batch_size", batch}, {"features", 64}, {"classes", 10},
                       {"examples", 2 * batch}}},
          {"model", {{"layers", layers}}},
          {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.01}}},
          {"training", {{"steps", 1}, {"steps_per_execution", 1}}},
          {"ipu", {{"tiles", 16}}}};
}

nlohmann::json withCheckpoints(nlohmann::json j, const nlohmann::json& checkpoints) {
  j["training"]["recompute_checkpoints"] = checkpoints;
  return j;
}

// Whether op i of g is of the forward pass (it produces no gradient and is
// not an update).
bool producesGradient(const OpGraph& g, std::size_t op) {
  return std::any_of(g.ops[op].outputs.begin(), g.ops[op].outputs.end(),
                     [&](std::size_t v) { return g.values[v].kind == ValueKind::Gradient; });
}

TEST(Recomputation, TheBackwardPassReadsRecomputedCopiesBeforeTheLastCheckpoint) {
  const OpGraph plain = buildTrainingGraph(parseWorkload(denseChain(), "w.json"));
  const OpGraph g = buildTrainingGraph(parseWorkload(withCheckpoints(denseChain(), {"b"}), "w.json"));
  // Segment 0 is a and b; b's output (read by c) is kept; c, out and the loss are the last segment.
  std::set<std::string> recomputedLayers;
  std::size_t clones = 0;
  for (const Op& op : g.ops) {
    if (!op.recomputed) continue;
    ++clones;
    recomputedLayers.insert(op.layer);
    EXPECT_EQ(op.name.rfind("recompute/", 0), 0u) << op.name;
  }
  // b's backward reads its output (relu's gradient is taken from the relu's
  // output) and its input, a's output: only a's ops run again.
  EXPECT_EQ(recomputedLayers, (std::set<std::string>{"a"}));
  EXPECT_EQ(g.ops.size(), plain.ops.size() + clones);
  // b's output: what c's forward ops read of b.
  std::size_t firstGradient = 0;
  while (!producesGradient(g, firstGradient)) ++firstGradient;
  std::set<std::size_t> kept;
  for (std::size_t op = 0; op < firstGradient; ++op)
    for (std::size_t in : g.ops[op].inputs)
      if (g.ops[op].layer == "c" && g.producerOf[in] != ~std::size_t(0) && g.ops[g.producerOf[in]].layer == "b")
        kept.insert(in);
  ASSERT_EQ(kept.size(), 1u);
  // No backward op reads another activation of a or b: each reads a clone's.
  std::size_t cloneReads = 0;
  for (std::size_t op = firstGradient; op < g.ops.size(); ++op) {
    if (g.ops[op].recomputed) continue;
    for (std::size_t in : g.ops[op].inputs) {
      const std::size_t p = g.producerOf[in];
      if (p == ~std::size_t(0) || g.values[in].kind != ValueKind::Activation || kept.count(in)) continue;
      cloneReads += g.ops[p].recomputed;
      EXPECT_TRUE(g.ops[p].recomputed || (g.ops[p].layer != "a" && g.ops[p].layer != "b"))
          << g.ops[op].layer << "/" << g.ops[op].name << " reads " << g.values[in].name << ", not recomputed";
    }
  }
  EXPECT_GT(cloneReads, 0u);
}

TEST(Recomputation, EveryScheduleRunsTheClonesAfterTheLossGradient) {
  const OpGraph g = buildTrainingGraph(parseWorkload(withCheckpoints(denseChain(), {"a", "b"}), "w.json"));
  std::size_t lossGradient = 0;
  while (!(producesGradient(g, lossGradient) && g.ops[lossGradient].layer.rfind("loss", 0) == 0)) ++lossGradient;
  for (const std::string& algorithm : schedulingAlgorithms()) {
    const Schedule s = scheduleOps(g, algorithm);
    std::vector<std::size_t> position(g.ops.size());
    for (std::size_t i = 0; i < s.order.size(); ++i) position[s.order[i]] = i;
    for (std::size_t op = 0; op < g.ops.size(); ++op)
      if (g.ops[op].recomputed) {
        EXPECT_GT(position[op], position[lossGradient]) << algorithm << ": " << g.ops[op].layer << "/" << g.ops[op].name;
      }
  }
}

// A clone reads the weights its original reads: it runs before their
// updates, as the original does (in mixed precision the clones of the
// weights' casts to half; else the products' clones).
TEST(Recomputation, EveryScheduleRunsTheClonesBeforeTheUpdatesOfTheWeightsTheyRead) {
  for (const char* dtype : {"float32", "mixed_float16"}) {
    nlohmann::json j = withCheckpoints(denseChain(), {"b"});  // a's product, bias and relu run again
    j["model"]["dtype"] = dtype;
    j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.01}, {"momentum", 0.9}};
    const OpGraph g = buildTrainingGraph(parseWorkload(j, "w.json"));
    std::size_t checked = 0;
    for (const std::string& algorithm : schedulingAlgorithms()) {
      const Schedule s = scheduleOps(g, algorithm);
      std::vector<std::size_t> position(g.ops.size());
      for (std::size_t i = 0; i < s.order.size(); ++i) position[s.order[i]] = i;
      for (std::size_t clone = 0; clone < g.ops.size(); ++clone) {
        if (!g.ops[clone].recomputed) continue;
        for (std::size_t weight : g.ops[clone].inputs) {
          if (g.values[weight].kind != ValueKind::Weight) continue;
          for (std::size_t update = 0; update < g.ops.size(); ++update)
            if (g.ops[update].kind == OpKind::MomentumUpdate && g.ops[update].inputs.front() == weight) {
              ++checked;
              EXPECT_LT(position[clone], position[update]) << dtype << ", " << algorithm << ": "
                                                           << g.ops[clone].layer << "/" << g.ops[clone].name;
            }
        }
      }
    }
    EXPECT_GT(checked, 0u) << dtype;
  }
}

TEST(Recomputation, PeakLivenessAndTheUpFrontEstimateFall) {
  // Wide activations (batch 256 x 512 units): they, not the weights, are
  // the step's live bytes. Two recomputed segments (l1 l2, l3 l4).
  const nlohmann::json wide = denseChain(256, 512, {"l1", "l2", "l3", "l4", "l5", "l6"});
  const Workload plain = parseWorkload(wide, "w.json");
  const Workload recomputed = parseWorkload(withCheckpoints(wide, {"l2", "l4"}), "w.json");
  const std::uint64_t before = scheduleOps(buildTrainingGraph(plain), "choose_best").peakLivenessBytes;
  const std::uint64_t after = scheduleOps(buildTrainingGraph(recomputed), "choose_best").peakLivenessBytes;
  EXPECT_LT(after, before);
  EXPECT_LT(estimateModelMemory(recomputed, 16).totalBytes, estimateModelMemory(plain, 16).totalBytes);
}

TEST(Recomputation, TheStepRunsTheRecomputedOpsAndEvaluateRunsNone) {
  const CompiledWorkload plain = compile(parseWorkload(denseChain(), "w.json"));
  const CompiledWorkload recomputed = compile(parseWorkload(withCheckpoints(denseChain(), {"b"}), "w.json"));
  EXPECT_GT(recomputed.report.estimatedStepCycles, plain.report.estimatedStepCycles);
  // Outside fit there is no backward pass to recompute for: the key changes nothing.
  nlohmann::json evaluate = withCheckpoints(denseChain(), {"b"});
  evaluate["task"] = "evaluate";
  const OpGraph g = buildTrainingGraph(parseWorkload(evaluate, "w.json"));
  EXPECT_TRUE(std::none_of(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.recomputed; }));
}

// Out of memory, the summary names recomputation as a way out to a
// training step that keeps every activation, with the estimate "auto" gives
// when it is lower, and not to one that already recomputes. (On a, b, c,
// "auto" cuts at b: a's output alone is recomputed, as many bytes as the
// largest recomputed segment the bound counts, and no fall is claimed.)
TEST(Recomputation, OutOfMemoryNamesRecomputationAsAWayOut) {
  const std::string unchanged = [] {
    try {
      nlohmann::json short_ = denseChain(4096, 512);
      short_["ipu"]["tiles"] = 1;
      compile(parseWorkload(short_, "w.json"));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  }();
  EXPECT_NE(unchanged.find("(training.recompute_checkpoints: the layers whose outputs are kept, or \"auto\"), or set"),
            std::string::npos)
      << unchanged;
  nlohmann::json tooBig = denseChain(4096, 512, {"l1", "l2", "l3", "l4", "l5", "l6"});
  tooBig["ipu"]["tiles"] = 1;
  auto message = [](const nlohmann::json& j) {
    try {
      compile(parseWorkload(j, "w.json"));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  const std::string keeping = message(tooBig);
  EXPECT_NE(keeping.find("out of memory"), std::string::npos) << keeping;
  EXPECT_NE(keeping.find("recompute activations for the backward pass instead of keeping them "
                         "(training.recompute_checkpoints: the layers whose outputs are kept, or \"auto\"): with "
                         "\"auto\" this estimate falls to "),
            std::string::npos)
      << keeping;
  const std::string recomputing = message(withCheckpoints(tooBig, {"l3"}));
  EXPECT_NE(recomputing.find("out of memory"), std::string::npos) << recomputing;
  EXPECT_EQ(recomputing.find("training.recompute_checkpoints"), std::string::npos) << recomputing;
}

// Issue "Big models", criterion 2: workloads/resnet50_recomputed.json,
// ResNet-50 in float16 at Graphcore's micro-batch 18 on one Mk2 IPU with
// their available memory proportion, fits with their recomputation
// checkpoints and runs out of memory without them, the summary saying that
// "auto" checkpoints make it fit. (Three full compiles of ResNet-50: about
// 80 s and 3.5 GB.)
TEST(RecomputedResNet50, FitsOneIpuWithGraphcoresCheckpointsAndNotWithout) {
  const std::string file = std::string(IPUSIM_SOURCE_DIR) + "/workloads/resnet50_recomputed.json";
  const Workload recomputed = loadWorkload(file);
  ASSERT_EQ(recomputed.training.recomputeCheckpoints.size(), 35u);
  {  // (freed before the second compile)
    const CompiledWorkload fits = compile(recomputed);
    EXPECT_LE(fits.report.maxTileBytes, fits.target.tile.memoryBytes);
    EXPECT_EQ(fits.report.tilesOverCapacity, 0u);
  }
  Workload keeping = recomputed;
  keeping.training.recomputeCheckpoints.clear();
  try {
    compile(keeping);
    ADD_FAILURE() << "ResNet-50 at micro-batch 18 fitted without recomputation";
  } catch (const std::invalid_argument& e) {
    // The summary says what recomputation would make of it, having compiled it so.
    const std::string what = e.what();
    EXPECT_NE(what.find("Out of memory in the compiled workload"), std::string::npos) << what;
    EXPECT_NE(what.find("With recomputation (training.recompute_checkpoints \"auto\": 5 checkpoints) the step fits: "
                        "the fullest tile "),
              std::string::npos)
        << what;
  }
}

// "auto": about sqrt(n) segments, cut where the layer graph narrows to one
// value (models/auto_checkpoints.hpp).
TEST(AutoRecomputeCheckpoints, EveryCeilSqrtOfTheArticulationLayers) {
  // A chain of 8 relu layers and the output: every layer but the output is
  // a candidate; every third (ceil(sqrt(8))).
  const Workload chain =
      parseWorkload(withCheckpoints(denseChain(8, 32, {"l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8"}), "auto"), "w.json");
  EXPECT_EQ(chain.training.recomputeCheckpoints, (std::vector<std::string>{"l3", "l6"}));
  // Residual blocks: c2 and d1 lie beside r1's skip to add1, and c3 and bn2
  // beside add1's to add2: not candidates. The 8 candidates c1 bn1 r1 add1
  // add2 flatten dense dropout: every third.
  const nlohmann::json residual = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8, 8, 1], "classes": 10, "examples": 8},
    "model": {"layers": [
      {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "name": "c1"},
      {"type": "batch_normalization", "name": "bn1"},
      {"type": "activation", "activation": "relu", "name": "r1"},
      {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "name": "c2"},
      {"type": "dropout", "rate": 0.25, "name": "d1"},
      {"type": "add", "inputs": ["r1", "d1"], "name": "add1"},
      {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "name": "c3"},
      {"type": "batch_normalization", "name": "bn2"},
      {"type": "add", "inputs": ["add1", "bn2"], "name": "add2"},
      {"type": "flatten"}, {"type": "dense", "units": 8}, {"type": "dropout", "rate": 0.5},
      {"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 1, "steps_per_execution": 1, "recompute_checkpoints": "auto"}})");
  EXPECT_EQ(parseWorkload(residual, "w.json").training.recomputeCheckpoints,
            (std::vector<std::string>{"r1", "flatten"}));
}

TEST(Recomputation, TheKeysErrorsNameTheEntry) {
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), {"bb"})).find("w.json: training.recompute_checkpoints[0]: 'bb' names no "
                                                               "layer of the model (did you mean 'b'?)"),
            std::string::npos)
      << workloadRefusal(withCheckpoints(denseChain(), {"bb"}));
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), {"a", "a"})).find("recompute_checkpoints[1]: 'a' is listed twice"),
            std::string::npos);
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), nlohmann::json::array()))
                .find("recompute_checkpoints: expected a non-empty list of layer names, or \"auto\", got []"),
            std::string::npos);
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), 7)).find("or \"auto\", got 7"), std::string::npos);
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), "all")).find("recompute_checkpoints"), std::string::npos);
  EXPECT_NE(workloadRefusal(withCheckpoints(denseChain(), {1})).find("recompute_checkpoints"), std::string::npos);
  // "auto" on a model with one layer to checkpoint: nothing to recompute,
  // refused for a fit (checkTask: a file that names its task).
  nlohmann::json one = withCheckpoints(denseChain(8, 32, {"a"}), "auto");
  one["task"] = "fit";
  EXPECT_NE(workloadRefusal(one).find("recompute_checkpoints: \"auto\": the model has no layer to checkpoint"), std::string::npos)
      << workloadRefusal(one);
  nlohmann::json piped = withCheckpoints(denseChain(), {"a"});
  auto& layers = piped["model"]["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i) layers[i]["stage"] = i < 2 ? 0 : 1;
  piped["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
  piped["training"]["steps_per_execution"] = 4;
  piped["training"]["steps"] = 4;
  piped["ipu"]["num_ipus"] = 2;
  EXPECT_NE(workloadRefusal(piped).find("recompute_checkpoints: a pipeline recomputes by pipeline.recomputation_mode (TF's "
                                "RecomputationMode): give it, \"RecomputeAndBackpropagateInterleaved\" for checkpoints"),
            std::string::npos)
      << workloadRefusal(piped);
}

// Found by the sixteenth adversarial pass of issue 33: a checkpoint after
// 3,000 dense layers made the recomputation's clones recurse once per op
// of the segment (each clone first made its inputs' clones), and the call
// stack overflowed (SIGSEGV) as the training graph was built. Here 800
// layers on a thread of a 512 KiB stack (the default is 8 MiB): about what
// the recursion took of a process's stack for 3,000 layers.
TEST(Recomputation, ALongSegmentIsRecomputedWithoutOverflowingTheStack) {
  std::vector<std::string> names;
  for (int i = 0; i < 800; ++i) names.push_back("l" + std::to_string(i));
  const Workload w = parseWorkload(withCheckpoints(denseChain(2, 2, names), {"l790"}), "w.json");
  struct Job {
    const Workload* w;
    std::ptrdiff_t clones = -1;
  } job{&w};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  // (A sanitized build's frames are larger: the test then proves less.)
  pthread_attr_setstacksize(&attributes, ipusim::test::sanitizedBuild() ? 4 << 20 : 512 << 10);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attributes, [](void* p) -> void* {
    Job& j = *static_cast<Job*>(p);
    const OpGraph g = buildTrainingGraph(*j.w);
    j.clones = std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.recomputed; });
    return nullptr;
  }, &job), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  EXPECT_GE(job.clones, 790);
}

// TF's RecomputationCheckpoint layer: its input passes through, and the layer
// it reads is a checkpoint, as if training.recompute_checkpoints named it.
TEST(RecomputationCheckpointLayer, MakesTheLayerItReadsACheckpoint) {
  nlohmann::json marked = denseChain();
  auto& layers = marked["model"]["layers"];
  layers.insert(layers.begin() + 2, nlohmann::json::object({{"type", "recomputation_checkpoint"}, {"name", "keep_b"}}));
  const Workload w = parseWorkload(marked, "w.json");
  EXPECT_EQ(w.training.recomputeCheckpoints, std::vector<std::string>{"b"});
  const OpGraph g = buildTrainingGraph(w);
  const OpGraph named = buildTrainingGraph(parseWorkload(withCheckpoints(denseChain(), {"b"}), "w.json"));
  const auto clones = [](const OpGraph& graph) {
    return std::count_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.recomputed; });
  };
  EXPECT_GT(clones(named), 0);
  EXPECT_EQ(clones(g), clones(named));
  EXPECT_EQ(g.ops.size(), named.ops.size());
  // The workload's own list wins over the layers'.
  EXPECT_EQ(parseWorkload(withCheckpoints(marked, {"a"}), "w.json").training.recomputeCheckpoints,
            std::vector<std::string>{"a"});
  // Right after the model's input there is nothing to recompute.
  nlohmann::json first = denseChain();
  first["model"]["layers"].insert(first["model"]["layers"].begin(),
                                  nlohmann::json::object({{"type", "recomputation_checkpoint"}, {"name", "k"}}));
  EXPECT_NE(workloadRefusal(first).find("layer 'k' (RecomputationCheckpoint) reads the model's input"), std::string::npos)
      << workloadRefusal(first);
}

// Found by the eleventh adversarial pass of issue 33: a
// RecomputationCheckpoint layer has no op, so naming one in
// training.recompute_checkpoints kept nothing and recomputed the layer it
// reads (the opposite of the layer's meaning), and "auto" could pick one.
// It stands for the layer it reads, through a chain of them.
TEST(RecomputationCheckpointLayer, NamingOneKeepsTheLayerItReads) {
  nlohmann::json marked = denseChain();
  auto& layers = marked["model"]["layers"];
  layers.insert(layers.begin() + 1, nlohmann::json::object({{"type", "recomputation_checkpoint"}, {"name", "keep_a"}}));
  layers.insert(layers.begin() + 2, nlohmann::json::object({{"type", "recomputation_checkpoint"}, {"name", "again"}}));
  const auto recomputedLayers = [](const OpGraph& g) {
    std::set<std::string> names;
    for (const Op& op : g.ops)
      if (op.recomputed) names.insert(op.layer);
    return names;
  };
  const Workload named = parseWorkload(withCheckpoints(marked, {"again", "b"}), "w.json");
  EXPECT_EQ(named.training.recomputeCheckpoints, (std::vector<std::string>{"a", "b"}));
  // As the layers alone ask: a kept, nothing before it to recompute; b's segment recomputes nothing of a.
  EXPECT_EQ(parseWorkload(marked, "w.json").training.recomputeCheckpoints, std::vector<std::string>{"a"});
  EXPECT_TRUE(recomputedLayers(buildTrainingGraph(parseWorkload(withCheckpoints(marked, {"keep_a"}), "w.json"))).empty());
  EXPECT_EQ(recomputedLayers(buildTrainingGraph(named)),
            recomputedLayers(buildTrainingGraph(parseWorkload(withCheckpoints(denseChain(), {"a", "b"}), "w.json"))));
  // Named twice through the chain: once.
  EXPECT_EQ(parseWorkload(withCheckpoints(marked, {"keep_a", "again", "a"}), "w.json").training.recomputeCheckpoints,
            std::vector<std::string>{"a"});
  // "auto" picks no such layer.
  for (const std::string& name : parseWorkload(withCheckpoints(marked, "auto"), "w.json").training.recomputeCheckpoints)
    EXPECT_TRUE(name != "keep_a" && name != "again") << name;
  // One that reads the model's input, named: refused by its entry.
  nlohmann::json first = denseChain();
  first["model"]["layers"].insert(first["model"]["layers"].begin(),
                                  nlohmann::json::object({{"type", "recomputation_checkpoint"}, {"name", "k"}}));
  const std::string message = workloadRefusal(withCheckpoints(first, {"a", "k"}));
  EXPECT_NE(message.find("training.recompute_checkpoints[1]: layer 'k' (RecomputationCheckpoint) reads the model's input"),
            std::string::npos)
      << message;
}

TEST(RecomputationCheckpointLayer, IsReadFromAKerasFile) {
  const nlohmann::json dense = {{"class_name", "Dense"},
                                {"config", {{"name", "d"}, {"units", 4}, {"activation", "relu"}, {"use_bias", true}}}};
  const nlohmann::json keras = {
      {"class_name", "Sequential"},
      {"config", {{"name", "s"}, {"layers", {{{"class_name", "InputLayer"},
                                               {"config", {{"batch_input_shape", {nullptr, 8}}, {"dtype", "float32"},
                                                           {"name", "in"}}}},
                                              dense,
                                              {{"class_name", "RecomputationCheckpoint"}, {"config", {{"name", "ckpt"}}}},
                                              {{"class_name", "Dense"},
                                               {"config", {{"name", "out"}, {"units", 2}, {"activation", "softmax"}}}}}}}},
      {"keras_version", "2.11.0"},
      {"backend", "tensorflow"}};
  const KerasModel m = parseKerasModel(keras, "model.json");
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[1].kind, "recomputation_checkpoint");
  EXPECT_EQ(m.layers[1].name, "ckpt");
}

}  // namespace
}  // namespace ipusim::scheduler::recomputation_test
