// Found by the sixteenth adversarial pass of issue 33 (acceptance 2), and
// what earlier passes left open. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_16 {
namespace {

// `dir`/`name`.json: a fit of `layers` (a JSON list) with
// training.recompute_checkpoints "auto".
std::string autoCheckpointed(const fs::path& dir, const std::string& name, const std::string& layers) {
  const fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [4, 2], "classes": 4, "examples": 16},
    "model": {"layers": )" << layers << R"(},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2, "recompute_checkpoints": "auto"},
    "ipu": {"tiles": 4}})";
  return file.string();
}

// "auto" picked checkpoints that recompute nothing on small MLPs (pass 15,
// left open): flatten, dense, dense chose 'dense', and the step recomputed
// no op (a warning said so); flatten, d1, d2, out chose 'd1', also cutting
// nothing, where 'd2' recomputes d1's output; a frozen base that the
// backward pass never enters was cut. "auto" now keeps only checkpoints
// that cut something, or says it found none.
TEST(AdversarialPass16, AutoCheckpointsCutSomethingOrSayNone) {
  ScratchDir dir("auto-cuts");
  const std::string none = autoCheckpointed(dir.path(), "none", R"([{"type": "flatten", "name": "f"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "d"},
      {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}])");
  for (const char* command : {" compile ", " run --synthetic-data "})
    expectRefusal(runCommand(ipusimBinary() + command + quote(none)),
                  none + ": training.recompute_checkpoints: \"auto\": the model has no layer to checkpoint that "
                         "would recompute anything");
  // Evaluate and predict recompute nothing: "auto" finding none is not theirs to refuse.
  for (const char* command : {" evaluate --synthetic-data ", " predict --synthetic-data "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(none));
    EXPECT_EQ(r.exitCode, 0) << command << r.output;
  }
  const std::string later = autoCheckpointed(dir.path(), "later", R"([{"type": "flatten", "name": "f"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "d1"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "d2"},
      {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}])");
  nlohmann::json j = jsonOf(runCommand(ipusimBinary() + " compile " + quote(later) + " --json"));
  EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json{"d2"}) << j.dump();
  EXPECT_GT(j.value("recomputed_ops", 0), 0) << j.dump();
  // A frozen base the backward pass never enters: 'b' cut nothing; 'd' recomputes c's output (and a's, b's).
  const std::string frozen = autoCheckpointed(dir.path(), "frozen", R"([{"type": "flatten", "name": "f"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "a", "trainable": false},
      {"type": "dense", "units": 8, "activation": "relu", "name": "b", "trainable": false},
      {"type": "dense", "units": 8, "activation": "relu", "name": "c", "trainable": false},
      {"type": "dense", "units": 8, "activation": "relu", "name": "d"},
      {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}])");
  const auto r = runCommand(ipusimBinary() + " compile " + quote(frozen) + " --json");
  j = jsonOf(r);
  EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json{"d"}) << j.dump();
  EXPECT_GT(j.value("recomputed_ops", 0), 0) << j.dump();
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  // A chain that recomputes keeps its choice (every ceil(sqrt(n))-th candidate).
  const std::string chain = autoCheckpointed(dir.path(), "chain", R"([{"type": "flatten", "name": "f"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "a"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "b"},
      {"type": "dense", "units": 8, "activation": "relu", "name": "c"},
      {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}])");
  j = jsonOf(runCommand(ipusimBinary() + " compile " + quote(chain) + " --json"));
  EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json{"c"}) << j.dump();
}

// `ipusim-torch-dump W STEPS OUT` took any STEPS of up to 18 digits: the
// dump holds every step's batch in memory until it is written, so
// 999999999999999998 grew without bound. STEPS is bounded as a workload's
// training.steps is, then by the values the dump would hold, the range named.
TEST(AdversarialPass16, TheTorchDumpBoundsItsSteps) {
  // (bench/ is left out of the sanitizer builds, and by IPUSIM_BUILD_BENCH=OFF.)
  if (!fs::exists(std::string(binaryDir()) + "/bin/ipusim-torch-dump")) GTEST_SKIP() << "no bench/ tools in this build";
  ScratchDir dir("torch-dump-steps");
  const fs::path workload = dir.path() / "w.json";
  std::ofstream(workload) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  const fs::path out = dir.path() / "out.json";
  // (The timeout ends what ran unbounded before the fix.)
  const std::string tool =
      "timeout 20 " + std::string(binaryDir()) + "/bin/ipusim-torch-dump " + quote(workload.string());
  auto r = runCommand(tool + " 999999999999999998 " + quote(out.string()));
  expectRefusal(r, "STEPS '999999999999999998': expected a positive whole number of training steps (from 1 to "
                   "1099511627776)");
  // 4 examples of 8 values and a label, and the loss: 40 values a step.
  r = runCommand(tool + " 1000000 " + quote(out.string()));
  expectRefusal(r, "STEPS 1000000: the dump would hold about 40 values a step (" + workload.string() +
                       "'s batches), over its limit of 16777216 values: expected STEPS from 2 to 419430 (a multiple "
                       "of 2)");
  EXPECT_FALSE(fs::exists(out));
}

// A fit that trains nothing because `--vary model.layers[1].trainable=false`
// (or --workload-set) froze its layers was blamed on the workload file
// alone ("w.json: model: each of its 2 layers with weights is frozen"),
// whose layers are trainable, and so was a batch larger than the dataset:
// both name the flags, as the file's reader does.
TEST(AdversarialPass16, AFitFrozenByAFlagNamesTheFlag) {
  ScratchDir dir("frozen-by-flag");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu"},
                         {"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"}, "training": {"steps": 2, "steps_per_execution": 2}, "ipu": {"tiles": 4}})";
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data " + quote(file.string()) +
                           " --workload-set model.layers[0].trainable=false"
                           " --workload-set model.layers[1].trainable=false"),
                file.string() + " with --workload-set: model: each of its 2 layers with weights is frozen");
  const fs::path out = dir.path() / "sweep";
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(file.string()) +
                            " --vary model.layers[0].trainable=false --vary model.layers[1].trainable=false,true -j 1 "
                            "--no-plot -o " + quote(out.string()));
  EXPECT_NE(r.output.find(file.string() + " with --vary model.layers[0].trainable=false and --vary "
                                          "model.layers[1].trainable=false: model: each of its 2 layers"),
            std::string::npos)
      << r.output;
  // A global batch larger than the dataset, of the flag's replicas.
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(file.string()) + " --workload-set ipu.num_ipus=8"),
                file.string() + " with --workload-set: dataset.batch_size: 4 x 8 replicas (ipu.num_ipus) is more than "
                                "the 16 examples of the dataset");
}

// The .npy header's keys were found by their single-quoted spelling only:
// 'shape': (6, 4) then "shape": (4, 6) (numpy takes the last, a Python
// dictionary literal) was read as (6, 4), silently; 'sha\x70e', which
// Python reads as 'shape', was not seen as a second 'shape'; a header of
// double-quoted keys, which numpy reads, was refused as having no 'descr';
// a key numpy.load refuses was taken.
TEST(AdversarialPass16, TheNpyHeaderIsReadAsNumpyReadsIt) {
  ScratchDir dir("npy-quotes");
  const auto npy = [&](const std::string& name, const std::string& header, std::size_t values) {
    writeZerosNpy(dir.path() / name, header, values);
  };
  npy("labels.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }", 6);
  const std::string file = npyTokenWorkload(dir.path(), 4);
  const std::string ids = (dir.path() / "ids.npy").string();
  const std::string run = ipusimBinary() + " run " + quote(file);
  npy("ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6, 4), \"shape\": (4, 6), }", 24);
  expectRefusal(runCommand(run), ids + ": the .npy header gives 'shape' twice (numpy takes the last)");
  npy("ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6, 4), 'sha\\x70e': (4, 6), }", 24);
  expectRefusal(runCommand(run), ids + ": the .npy header is not numpy.save's dictionary (a key with an escape");
  npy("ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6, 4), 'extra': 1, }", 24);
  expectRefusal(runCommand(run), ids + ": the .npy header gives 'extra': expected only 'descr', 'fortran_order' and "
                                       "'shape' (numpy.load refuses other keys)");
  npy("ids.npy", "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (6, 4), }", 24);
  const auto r = runCommand(run);
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// A profile whose meta stream_directions leaves out a stream it copies (its
// entry deleted with sqlite3) had that stream's direction guessed from its
// name, and a fit's "loss" outfeed was counted as bytes to the device
// (report: "bytes to device 304 B, to host 0 B" for 288 and 16); so was
// the bundled graph's "total". The analyses that use directions refuse it.
TEST(AdversarialPass16, AStreamLeftOutOfStreamDirectionsIsRefused) {
  ScratchDir dir("stream-directions-missing");
  const fs::path profile = writeProfile(dir.path());
  execSql(profile, "UPDATE meta SET value = json_remove(value, '$.total') WHERE key = 'stream_directions'");
  for (const char* command : {" report ", " insights "})
    expectRefusal(runCommand(ipusimBinary() + command + quote(profile.string())),
                  profile.string() + ": meta 'stream_directions' gives no direction for stream 'total', which a "
                                     "StreamCopy slice copies");
}

// A pipeline out of memory whose first stage is frozen (nothing for its
// backward pass to read) was offered "recompute each stage's activations
// ... (pipeline.recomputation_mode: \"Auto\" ...)" and told in the next
// line that "Auto" recomputes no op: it would not help this step. The offer
// is made only where "Auto" recomputes an op, as the insights make it.
TEST(AdversarialPass16, APipelineIsOfferedRecomputationOnlyWhereItRecomputes) {
  ScratchDir dir("pipeline-frozen-remedy");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [64], "classes": 4, "examples": 64},
    "model": {"layers": [
      {"type": "dense", "units": 256, "activation": "relu", "stage": 0, "name": "a", "trainable": false},
      {"type": "dense", "units": 256, "activation": "relu", "stage": 0, "name": "b", "trainable": false},
      {"type": "dense", "units": 4, "activation": "softmax", "stage": 1, "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "pipeline": {"gradient_accumulation_count": 4, "device_mapping": [0, 1], "schedule": "grouped"},
    "training": {"steps": 8, "steps_per_execution": 4},
    "ipu": {"tiles": 2, "num_ipus": 2}})";
  const auto r = runCommand(ipusimBinary() + " compile " + quote(file.string()) + " --set tile.memoryBytes=100000");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("Out of memory in the compiled workload"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("(pipeline.recomputation_mode: \"Auto\", TF's RecomputationMode)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("With recomputation (pipeline.recomputation_mode \"Auto\": RecomputeThenBackpropagate) no "
                          "op is recomputed"),
            std::string::npos)
      << r.output;
}

// `insights` told a fit of 4 steps run whole "raise steps_per_execution
// (4 -> 40)", which its workload refuses (training.steps must be a multiple
// of it), with a gain of 0.9 of its one run's cost ("0 calls remain"); 12
// steps by 2 were told 20. The suggestion divides the steps.
TEST(AdversarialPass16, InsightsSuggestStepsPerExecutionTheWorkloadTakes) {
  ScratchDir dir("insights-steps");
  const auto insights = [&](const std::string& name, int steps, int perExecution) {
    const fs::path workload = dir.path() / (name + ".json");
    std::ofstream(workload) << R"({
      "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
      "model": {"layers": [{"type": "dense", "units": 4, "activation": "softmax"}]},
      "optimizer": {"type": "sgd"},
      "training": {"steps": )" << steps << R"(, "steps_per_execution": )" << perExecution << R"(},
      "ipu": {"tiles": 4}})";
    const fs::path reports = dir.path() / name;
    const auto r =
        runCommand(withReports(reports) + ipusimBinary() + " run --synthetic-data " + quote(workload.string()));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return runCommand(ipusimBinary() + " insights " + quote(reports.string())).output;
  };
  const std::string whole = insights("whole", 4, 4);
  EXPECT_EQ(whole.find("steps_per_execution (4 -> 40)"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("0 calls remain"), std::string::npos) << whole;
  const std::string twelve = insights("twelve", 12, 2);
  EXPECT_NE(twelve.find("knob: raise steps_per_execution (2 -> 12)"), std::string::npos) << twelve;
  EXPECT_NE(twelve.find("; 1 call remains)"), std::string::npos) << twelve;  // (pass 17: its grammar)
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_16
