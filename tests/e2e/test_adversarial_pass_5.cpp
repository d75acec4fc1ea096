// Found by the fifth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <map>

namespace ipusim::test::test_adversarial_pass_5 {
namespace {

// A Masking layer whose mask_value is finite but beyond the compute type's
// range (1e39 in float32, 1e5 in float16) compiled, and the run failed on the
// vertex's parameter ("codelet IdMaskFromValues: param 'maskValue' = inf,
// expected a finite number"), naming no file, layer or key; `compile -o`
// wrote a graph that could not run. Refused where the graph is built.
TEST(AdversarialPass5, AMaskValueBeyondTheComputeTypeIsRefusedByKey) {
  ScratchDir dir("mask-value-range");
  const auto masked = [&](double maskValue, const char* dtype) {
    return workloadWith(dir.path(), [&](nlohmann::json& j) {
      j["name"] = "masked";
      j["dataset"] = {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 8}, {"input_shape", {5, 3}}, {"classes", 3}};
      j["model"] = {{"dtype", dtype},
                    {"layers", {{{"type", "masking"}, {"mask_value", maskValue}, {"name", "mask"}},
                                {{"type", "lstm"}, {"units", 4}},
                                {{"type", "dense"}, {"units", 3}, {"activation", "softmax"}}}}};
      j["training"] = {{"steps", 2}, {"steps_per_execution", 1}};
      j["ipu"] = {{"tiles", 4}};
    });
  };
  std::string workload = masked(1e39, "float32");
  for (const char* command : {" run ", " compile "})
    expectRefusal(runCommand(ipusimBinary() + command + quote(workload)),
                  "ipusim: error: " + workload + ": masked: layer 'mask' (masking): mask_value: 1e+39 is "
                  "not finite once rounded to the model's compute type (float32: expected |mask_value| <= 3.4028235e+38");
  workload = masked(1e5, "float16");
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(workload)),
                "layer 'mask' (masking): mask_value: 100000.0 is not finite once rounded to the model's compute type "
                "(float16: expected |mask_value| < 65520");
  workload = masked(65504, "mixed_float16");  // float16's largest: compared as it is
  const auto r = runCommand(ipusimBinary() + " run " + quote(workload));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// The operations summary counted an Execute's FLOPs (and its tiles) only
// from the first IPU's compute slices: a pipelined or sharded model's later
// IPUs ran their matmuls with 0 FLOPs and 0 tiles in `report --ops` (the
// viewer's operations view and the Python reader alike). A pipelined
// language model on token ids: its second stage's matmul, on IPU 1, does
// 2 x (2 examples x 8 steps) x 8 x 6 FLOPs a step.
TEST(AdversarialPass5, ALaterPipelineStagesFlopsAreCounted) {
  ScratchDir dir("pipeline-flops");
  const std::string workload = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["name"] = "pipelined";
    j["dataset"] = {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 32}, {"input_shape", {8}}, {"classes", 6}};
    j["model"]["layers"] = {
        {{"type", "embedding"}, {"input_dim", 6}, {"output_dim", 8}, {"mask_zero", true}, {"name", "emb"}, {"stage", 0}},
        {{"type", "layer_normalization"}, {"name", "ln"}, {"stage", 0}},
        {{"type", "multi_head_attention"}, {"num_heads", 2}, {"key_dim", 4}, {"use_causal_mask", true},
         {"inputs", {"ln", "ln"}}, {"name", "mha"}, {"stage", 1}},
        {{"type", "dense"}, {"units", 6}, {"activation", "softmax"}, {"name", "out"}, {"stage", 1}}};
    j["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
    j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.05}};
    j["training"] = {{"steps", 8}, {"steps_per_execution", 8}};
    j["ipu"] = {{"tiles", 16}, {"num_ipus", 2}};
  });
  const fs::path reports = dir.path() / "reports";
  const auto run = runCommand(withReports(reports) + ipusimBinary() + " run " + quote(workload));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const auto ops = runCommand(ipusimBinary() + " report " + quote(reports.string()) + " --ops --json 2>/dev/null");
  ASSERT_EQ(ops.exitCode, 0) << ops.output;
  const nlohmann::json summary = nlohmann::json::parse(ops.output);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : summary.at("operations"))
    rows[row.at("layer").get<std::string>() + "/" + row.at("op").get<std::string>()] = row;
  ASSERT_TRUE(rows.count("out/matmul")) << ops.output;
  EXPECT_EQ(rows["out/matmul"].at("flops_per_step").get<double>(), 2.0 * 16 * 8 * 6);
  for (const char* op : {"out/matmul", "mha/query_matmul", "mha/scores", "mha/context", "out/kernel_grad"}) {
    ASSERT_TRUE(rows.count(op)) << op;
    EXPECT_GT(rows[op].at("flops").get<std::int64_t>(), 0) << op;
    EXPECT_GT(rows[op].at("tiles").get<std::int64_t>(), 0) << op;
  }
}

// A .keras archive whose config.json is not JSON was said to be "not valid
// JSON and not a .keras archive (a zip file)": the opposite of what it is,
// and without the entry at fault.
TEST(AdversarialPass5, AKerasArchivesBrokenConfigIsNamedAsSuch) {
  ScratchDir dir("archive-config");
  const std::string archive = (dir.path() / "m.keras").string();
  std::ofstream(archive, std::ios::binary) << storedZip({{"config.json", R"({"class_name": "Sequential", "config": NaN})"}});
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(archive)),
                "ipusim: error: " + archive + ": config.json (the archive's model JSON): not valid JSON: parse error at "
                "line 1, column 40");
  // A file that is no zip keeps its words.
  const std::string text = (dir.path() / "t.keras").string();
  std::ofstream(text) << "{\"class_name\": NaN}";
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(text)),
                "ipusim: error: " + text + ": not valid JSON and not a .keras archive (a zip file)");
}

// A serialized graph's own target and engine options, when wrong, named no
// file: a graph without "target" said "target: expected a JSON object, got
// null", an unknown arch "unknown target arch 'ipu9'", an unknown option
// "the executable's options: unknown engine option ...".
TEST(AdversarialPass5, AGraphsTargetAndOptionsErrorsNameTheGraphFile) {
  ScratchDir dir("graph-target");
  const auto edited = [&](const std::string& file, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json g = nlohmann::json::parse(readText(kGraph));
    edit(g);
    const std::string path = (dir.path() / file).string();
    std::ofstream(path) << g.dump();
    return path;
  };
  std::string graph = edited("no_target.json", [](nlohmann::json& g) { g.erase("target"); });
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph)),
                "ipusim: error: " + graph + ": target: expected a JSON object, got null");
  graph = edited("arch.json", [](nlohmann::json& g) { g["target"]["arch"] = "ipu9"; });
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph)),
                "ipusim: error: " + graph + ": target: unknown target arch 'ipu9'");
  graph = edited("tiles.json", [](nlohmann::json& g) { g["target"]["overrides"]["tile.tilesPerIpu"] = 0; });
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph)),
                "ipusim: error: " + graph + ": target parameter 'tile.tilesPerIpu': invalid value '0'");
  graph = edited("options.json", [](nlohmann::json& g) { g["options"] = {{"autoReport.bogus", "1"}}; });
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph)),
                "ipusim: error: " + graph + ": the executable's options: unknown engine option 'autoReport.bogus'");
  // An error of the command line's own still names the flag, not the graph.
  const auto r = runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --engine-options '{\"autoReport.bogus\": 1}'");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(r.output.find(kGraph + ": "), std::string::npos) << r.output;
}

// autoReport.directory naming a file: the profile's refusal said
// "<dir>/profile.pop: cannot inspect it: Not a directory", naming neither the
// option nor what it expects (the serialized graph's said both).
TEST(AdversarialPass5, AReportDirectoryThatIsAFileIsNamedByItsOption) {
  ScratchDir dir("report-directory-file");
  const std::string file = (dir.path() / "reports").string();
  std::ofstream(file) << "precious\n";
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" + quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + file + "\"}") +
                            " " + ipusimBinary() + " run --graph " + quote(kGraph) + " --runs 1");
  expectRefusal(r, "ipusim: error: " + kGraph + ": autoReport.directory '" + file + "': cannot create it: ");
  EXPECT_NE(r.output.find("(expected a directory for the reports)"), std::string::npos) << r.output;
  EXPECT_EQ(readText(file), "precious\n");
  expectNoLitter(dir.path());
}

// A Keras 3 compile_config's steps_per_execution of 10^12, a positive
// integer over the 32-bit count, was refused as "expected a positive
// integer" (the words issue 33 fixed for the command line and workloads).
TEST(AdversarialPass5, AKerasStepsPerExecutionOverItsBoundSaysTheBound) {
  ScratchDir dir("keras-steps-per-execution");
  nlohmann::json m = nlohmann::json::parse(readText(sourcePath("workloads/keras/user_guide_logits_keras3.json")));
  m["compile_config"]["steps_per_execution"] = 1000000000000;
  const std::string model = (dir.path() / "m.json").string();
  std::ofstream(model) << m.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(model) + " --synthetic-data"),
                "ipusim: error: " + model + ": compile_config: steps_per_execution: 1000000000000 is more than 4294967295");
  m["compile_config"]["steps_per_execution"] = 0;
  std::ofstream(model) << m.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(model) + " --synthetic-data"),
                "ipusim: error: " + model + ": compile_config: steps_per_execution: expected a positive integer, got 0");
}

// `run`'s flags of one kind of run were ignored by the other without a
// word: `run --graph G --steps 100` ran the graph's default runs, `run W
// --runs 5` the workload's own steps.
TEST(AdversarialPass5, AFlagOfTheOtherKindOfRunIsRefused) {
  const std::string workload = sourcePath("workloads/small_synthetic.json");
  for (const char* flag : {"--steps 3", "--steps-per-execution 1", "--workload-set training.steps=2", "--input-shape 4",
                           "--no-feeds", "--feeds", "--full-replicas", "--tile-by-tile"}) {
    const auto r = runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " " + flag);
    EXPECT_GT(r.exitCode, 0) << flag << ": " << r.output;
    EXPECT_NE(r.output.find("--graph excludes"), std::string::npos) << flag << ": " << r.output;
  }
  for (const char* flag : {"--runs 3", "--entry main"}) {
    for (const std::string& run : {" run " + quote(workload) + " ", " run --keras " + quote(sourcePath("workloads/keras/tutorial_mlp_tf2.json")) + " "}) {
      const auto r = runCommand(ipusimBinary() + run + flag);
      EXPECT_GT(r.exitCode, 0) << flag << ": " << r.output;
      EXPECT_NE(r.output.find("requires --graph"), std::string::npos) << flag << ": " << r.output;
    }
  }
  const auto r = runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --runs 2 --entry main --synthetic-data");
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// The viewer's --size: '100000x100000' was refused as "not WIDTHxHEIGHT (e.g.
// 1600x900, at least 200x150)", which it is, without the upper bound; and
// '1600x900junk' was read as 1600x900.
TEST(AdversarialPass5, TheViewersSizeSaysItsBoundsAndReadsTheWholeText) {
  ScratchDir dir("viewer-size");
  const std::string viewer = std::string(ipusim::test::binaryDir()) + "/bin/ipusim-view";
  const fs::path profile = writeProfile(dir.path());
  for (const char* size : {"100000x100000", "1600x900junk", "99999999999x900", "199x150"}) {
    const std::string png = (dir.path() / "s.png").string();
    const auto r = runCommand(viewer + " " + quote(profile.string()) + " --screenshot " + quote(png) + " --size " + quote(size));
    expectRefusal(r, std::string("--size: '") + size + "' is not WIDTHxHEIGHT from 200x150 to 16384x16384 (e.g. 1600x900)");
    EXPECT_FALSE(fs::exists(png)) << size;
  }
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_5
