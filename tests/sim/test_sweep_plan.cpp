// Sweep planning: what each --vary name becomes on the `ipusim run` command
// line, the points (every combination), and the result files.
#include "sim/cli/sweep_plan.hpp"
#include "sim/cli/sweep_results.hpp"
#include "sim/cli/workload_overrides.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ipusim::sim::test_sweep_plan {
namespace {

const nlohmann::json kWorkload = {
    {"training", {{"steps_per_execution", 10}, {"outfeed", {{"mode", "ALL"}, {"buffer_depth", 10}}},
                  {"infeed", {{"buffer_depth", 3}}}}},
    {"ipu", {{"arch", "ipu2"}}}};

std::string errorOf(const std::string& spec) {
  try {
    parseSweepAxis(spec, kWorkload);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepPlan, NamesResolveToRunArguments) {
  EXPECT_EQ(parseSweepAxis("steps_per_execution=1,10", kWorkload).resolved,
            "--workload-set training.steps_per_execution");
  EXPECT_EQ(parseSweepAxis("training.outfeed.mode=ALL,LAST", kWorkload).resolved,
            "--workload-set training.outfeed.mode");
  EXPECT_EQ(parseSweepAxis("exchange.bytesPerCycle=4,8", kWorkload).resolved, "--set");
  EXPECT_EQ(parseSweepAxis("host.batchPrepareSeconds=0,1e-3", kWorkload).resolved, "--set");
  EXPECT_EQ(parseSweepAxis("tiles=64,128", kWorkload).resolved, "--tiles");
  EXPECT_EQ(parseSweepAxis("--steps-per-execution=1,2", kWorkload).resolved, "--steps-per-execution");
}

TEST(SweepPlan, BadSpecsAreErrorsThatSayWhatToGive) {
  EXPECT_NE(errorOf("steps_per_execution").find("expected NAME=V1,V2"), std::string::npos);
  EXPECT_NE(errorOf("steps_per_execution=1,,2").find("empty value"), std::string::npos);
  EXPECT_NE(errorOf("no_such_key=1").find("'no_such_key' is not a key of the workload file"), std::string::npos);
  const std::string twice = errorOf("buffer_depth=1,2");
  EXPECT_NE(twice.find("training.infeed.buffer_depth, training.outfeed.buffer_depth"), std::string::npos) << twice;
}

// A value may be a JSON list or object: `--vary
// 'training.recompute_checkpoints="auto",["add1","add2"]'` made three points,
// two of them the list's broken halves ('["add1"' and '"add2"]'), each
// failing with an error about a fragment (found by the tenth adversarial
// pass of issue 33).
TEST(SweepPlan, AJsonListOrObjectValueKeepsItsCommas) {
  const SweepAxis lists =
      parseSweepAxis(R"(training.recompute_checkpoints="auto",["add1","add2"],["a,b"])", kWorkload);
  EXPECT_EQ(lists.values, (std::vector<std::string>{R"("auto")", R"(["add1","add2"])", R"(["a,b"])"}));
  const SweepAxis objects = parseSweepAxis(R"(optimizer={"type":"sgd","learning_rate":0.1},{"type":"adam"})", kWorkload);
  EXPECT_EQ(objects.values, (std::vector<std::string>{R"({"type":"sgd","learning_rate":0.1})", R"({"type":"adam"})"}));
  EXPECT_EQ(parseSweepAxis("pipeline.device_mapping=[0,1],[1,0]", kWorkload).values,
            (std::vector<std::string>{"[0,1]", "[1,0]"}));
  // A quoted comma is part of its string; plain values still split.
  EXPECT_EQ(parseSweepAxis(R"(name="a,b","c")", kWorkload).values, (std::vector<std::string>{R"("a,b")", R"("c")"}));
  EXPECT_EQ(parseSweepAxis("tiles=16,32", kWorkload).values, (std::vector<std::string>{"16", "32"}));
  EXPECT_NE(errorOf("pipeline.device_mapping=[0,1],,[1,0]").find("empty value"), std::string::npos);
}

TEST(SweepPlan, PointsAreEveryCombinationLastAxisFastest) {
  const SweepPlan plan = planSweep("w.json", kWorkload, {"tiles=64,128", "training.outfeed.mode=ALL,LAST"},
                                   {"--synthetic-data"});
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ(plan.points[1].values, (std::vector<std::string>{"64", "LAST"}));
  EXPECT_EQ(plan.points[2].values, (std::vector<std::string>{"128", "ALL"}));
  EXPECT_EQ(plan.points[1].runArgs,
            (std::vector<std::string>{"--tiles", "64", "--workload-set", "training.outfeed.mode=LAST"}));
  EXPECT_EQ(plan.points[3].label(), "tiles=128, training.outfeed.mode=LAST");
}

// The message refusing `assignment` to `w` ("accepted" when it was applied).
std::string refusalOf(nlohmann::json& w, const std::string& assignment) {
  try {
    applyWorkloadAssignment(w, assignment);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return "accepted";
}

TEST(WorkloadOverrides, ValuesAreJsonWhenTheyParseElseStrings) {
  nlohmann::json w = kWorkload;
  applyWorkloadAssignment(w, "training.steps_per_execution=100");
  applyWorkloadAssignment(w, "training.outfeed.mode=LAST");
  applyWorkloadAssignment(w, "dataset.shuffle_seed=7");
  EXPECT_EQ(w["training"]["steps_per_execution"], 100);
  EXPECT_EQ(w["training"]["outfeed"]["mode"], "LAST");
  EXPECT_EQ(w["dataset"]["shuffle_seed"], 7);
  try {
    applyWorkloadAssignment(w, "training.steps_per_execution.x=1");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'training.steps_per_execution' is not an object"), std::string::npos);
  }
}

// A part may index a list the workload has: a layer's key from the command
// line (adversarial pass 15: "model.layers[0]: unknown key" named the layer list's valid keys).
TEST(WorkloadOverrides, AnIndexReachesAnEntryOfAListThatIsThere) {
  nlohmann::json w = kWorkload;
  w["model"]["layers"] = nlohmann::json::parse(R"([{"type": "dense", "units": 8}, {"type": "dense", "units": 10}])");
  applyWorkloadAssignment(w, "model.layers[0].units=4");
  applyWorkloadAssignment(w, "model.layers[1].activation=softmax");
  EXPECT_EQ(w["model"]["layers"][0]["units"], 4);
  EXPECT_EQ(w["model"]["layers"][1]["activation"], "softmax");
  applyWorkloadAssignment(w, R"(model.layers[1]={"type": "dense", "units": 3})");
  EXPECT_EQ(w["model"]["layers"][1], (nlohmann::json{{"type", "dense"}, {"units", 3}}));
  const auto refusal = [&](const std::string& assignment) { return refusalOf(w, assignment); };
  EXPECT_EQ(refusal("model.layers[2].units=4"),
            "workload assignment 'model.layers[2].units=4': 'model.layers' has 2 entries: index 2 is beyond them");
  EXPECT_EQ(refusal("training[0].steps=4"), "workload assignment 'training[0].steps=4': 'training' is not a list");
  EXPECT_EQ(refusal("model.layers[0].units.x=4"),
            "workload assignment 'model.layers[0].units.x=4': 'model.layers[0].units' is not an object");
  EXPECT_EQ(refusal("model.layers[x].units=4"),
            "workload assignment 'model.layers[x].units=4': 'layers[x]': expected a key, then list indices in "
            "brackets (model.layers[0].units)");
  EXPECT_EQ(refusal("model.[0]=4"), "workload assignment 'model.[0]=4': '[0]' names no key before its index");
  EXPECT_NE(refusal("model.layers[0]x=4").find("'layers[0]x': expected a key, then list indices"), std::string::npos);
}

// Found by the sixteenth adversarial pass of issue 33: an index into a list
// the workload does not give said it "is not a list" (model.layers of a
// workload whose model is a Keras file: "'model.layers' is not a list").
TEST(WorkloadOverrides, AnIndexIntoAnAbsentListSaysItIsAbsent) {
  nlohmann::json w = kWorkload;
  w["model"] = {{"keras", "m.json"}};
  const auto refusal = [&](const std::string& assignment) { return refusalOf(w, assignment); };
  EXPECT_EQ(refusal("model.layers[0].units=4"),
            "workload assignment 'model.layers[0].units=4': 'model.layers' is not in the workload: an index reaches "
            "an entry of a list the workload gives (this model's layers are its Keras file's)");
  EXPECT_EQ(refusal("dataset.input_shape[0]=4"),
            "workload assignment 'dataset.input_shape[0]=4': 'dataset.input_shape' is not in the workload: an index "
            "reaches an entry of a list the workload gives");
}

TEST(SweepPlan, ANameVariedTwiceIsAnErrorThatSaysSo) {
  const auto twice = [](const std::vector<std::string>& specs) {
    try {
      planSweep("w.json", kWorkload, specs, {});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(twice({"tiles=16", "tiles=32"}).find("--vary tiles=32: 'tiles' is varied twice"), std::string::npos);
  EXPECT_NE(twice({"exchange.bytesPerCycle=4", "exchange.bytesPerCycle=8"}).find("varied twice"), std::string::npos);
  EXPECT_NE(twice({"steps_per_execution=1", "training.steps_per_execution=2"}).find("varied twice"), std::string::npos);
  EXPECT_EQ(twice({"exchange.bytesPerCycle=4", "host.batchPrepareSeconds=0"}), "");
}

TEST(SweepResults, ANonFiniteLossReadsBackAsSuch) {
  SweepResult r;
  readRunSummary({{"simulated_seconds", 2.0}, {"cycles", 1000}, {"steps", 10}, {"engine_runs", 5},
                  {"final_loss", "nan"},
                  {"step_cycles", {{"compute", 40}, {"exchange", 20}, {"sync", 10}, {"stream_copy", 5}}}},
                 r);
  ASSERT_TRUE(r.finalLoss);
  EXPECT_TRUE(std::isnan(*r.finalLoss));
  r.ok = true;
  EXPECT_EQ(sweepToJson(SweepPlan{}, {r})["points"][0]["final_loss"], "nan");
  SweepResult bad;
  EXPECT_THROW(readRunSummary({{"simulated_seconds", 2.0}, {"cycles", 1000}, {"steps", 10}, {"engine_runs", 5},
                               {"final_loss", "lots"},
                               {"step_cycles", {{"compute", 40}, {"exchange", 20}, {"sync", 10}, {"stream_copy", 5}}}},
                              bad),
               std::invalid_argument);
}

TEST(SweepResults, SharesComeFromStepCyclesTimesSteps) {
  SweepResult r;
  readRunSummary({{"simulated_seconds", 2.0}, {"cycles", 1000}, {"steps", 10}, {"engine_runs", 5},
                  {"final_loss", nullptr},
                  {"step_cycles", {{"compute", 40}, {"exchange", 20}, {"sync", 10}, {"stream_copy", 5}}}},
                 r);
  EXPECT_DOUBLE_EQ(r.throughput, 5.0);
  EXPECT_DOUBLE_EQ(r.shares.compute, 0.4);
  EXPECT_DOUBLE_EQ(r.shares.hostAndIdle, 0.25);
  EXPECT_FALSE(r.finalLoss);
  SweepResult bad;
  EXPECT_THROW(readRunSummary({{"cycles", 1}}, bad), std::invalid_argument);
}

TEST(SweepResults, CsvHasOneRowPerPointAndFailuresSayWhy) {
  const SweepPlan plan = planSweep("w.json", kWorkload, {"tiles=64,bad"}, {});
  SweepResult ok;
  ok.point = plan.points[0];
  ok.ok = true;
  ok.simulatedSeconds = 1.5;
  ok.steps = 3;
  ok.throughput = 2;
  SweepResult failed;
  failed.point = plan.points[1];
  failed.error = "ipusim: error: --tiles: 'bad', expected a number";
  const std::string csv = sweepToCsv(plan, {ok, failed});
  EXPECT_NE(csv.find("point,tiles,status,simulated_seconds"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n0,64,ok,1.5,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,bad,failed,,,,,,,,,,,,,,,,,,\"ipusim: error: --tiles: 'bad', expected a number\"\n"),
            std::string::npos)
      << csv;
  const auto json = sweepToJson(plan, {ok, failed});
  EXPECT_EQ(json["points"][1]["ok"], false);
  EXPECT_EQ(plotData({ok, failed}).find("bad"), std::string::npos);  // failed points are not drawn
}

// A value holding a newline keeps its point on one row of the plot's data
// (it split the row in two, adversarial pass 19; checked end to end by
// AdversarialPass19 until layer names holding one were refused, pass 23).
TEST(SweepResults, AValueHoldingANewlineIsOneRowOfThePlotsData) {
  nlohmann::json workload = kWorkload;
  workload["name"] = "w";
  const SweepPlan plan = planSweep("w.json", workload, {"name=a\nb,c"}, {});
  ASSERT_EQ(plan.points.size(), 2u);
  ASSERT_EQ(plan.points[0].values[0], "a\nb");
  std::vector<SweepResult> results(2);
  for (std::size_t i = 0; i < 2; ++i) {
    results[i].point = plan.points[i];
    results[i].ok = true;
    results[i].simulatedSeconds = 1;
  }
  const std::string data = plotData(results);
  EXPECT_EQ(std::count(data.begin(), data.end(), '\n'), 3) << data;  // the header and a line a point
}

TEST(SweepResults, ThroughputInExamplesAndBatchLatencyReachTheCsv) {
  SweepResult r;
  readRunSummary({{"simulated_seconds", 2.0}, {"cycles", 1000}, {"steps", 10}, {"engine_runs", 5},
                  {"final_loss", nullptr}, {"examples_per_second", 160.0},
                  {"batch_latency_seconds", {{"batches", 10}, {"p50", 0.00125}, {"p99", 0.0025}, {"max", 0.003}}},
                  {"step_cycles", {{"compute", 40}, {"exchange", 20}, {"sync", 10}, {"stream_copy", 5}}}},
                 r);
  EXPECT_DOUBLE_EQ(r.examplesPerSecond, 160.0);
  ASSERT_TRUE(r.latencyP50);
  EXPECT_DOUBLE_EQ(*r.latencyP99, 0.0025);
  r.ok = true;
  const std::string csv = sweepToCsv(SweepPlan{}, {r});
  EXPECT_NE(csv.find("examples_per_second,batch_latency_p50_seconds,batch_latency_p99_seconds,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",160,0.00125,0.0025,"), std::string::npos) << csv;
  EXPECT_EQ(sweepToJson(SweepPlan{}, {r})["points"][0]["batch_latency_seconds"]["p50"], 0.00125);
}

}  // namespace
}  // namespace ipusim::sim::test_sweep_plan
