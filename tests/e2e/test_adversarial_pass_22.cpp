// Found by the twentieth and twenty-first adversarial passes of issue 33
// (acceptance 2), fixed in the twenty-second. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include "scheduler/models/workload_limits.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_22 {
namespace {

// A functional run of the tutorial's 2-IPU pipeline with 1,024 mini-batches
// a weight update compiled for 70-90 s before the load refused them
// (model/hardware/renamed_plans_limit.hpp), naming the executable, not the
// file or how many mini-batches fit. The compiler refuses them now, before
// it lays them out, naming the file, the key and the bound.
TEST(AdversarialPass22, FunctionalPipelineOverItsPlansIsRefusedByTheCompiler) {
  const std::string workload = sourcePath("workloads/mnist_pipelined_2ipus.json");
  const auto r = runCommand(ipusimBinary() + " run " + quote(workload) +
                            " --workload-set pipeline.gradient_accumulation_count=1024 --steps 1024"
                            " --steps-per-execution 1024");
  expectRefusal(r, workload + ": workload 'mnist_pipelined_2ipus': pipeline.gradient_accumulation_count: 1024 "
                              "mini-batches in flight, each after the first planning 61768 vertices and copy regions "
                              "of its own in functional mode, plan 63188664, ");
  EXPECT_NE(r.output.find("over the limit of 16777216 (model/hardware/renamed_plans_limit.hpp: host memory grows "
                          "with them): at most 272 mini-batches per weight update, or run timing only "
                          "(--synthetic-data)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("executable '"), std::string::npos) << r.output;
}

// The compiler's bound is the load's count (63,188,664 above: 1,023 x
// 61,768, as the load counted them), so the largest count it lets through
// loads, and every replica laid out in full plans its own.
TEST(AdversarialPass22, FunctionalPipelineBoundIsTheLoads) {
  EXPECT_NO_THROW(scheduler::checkFunctionalPipeline("k", 272, 61768, 1));
  EXPECT_THROW(scheduler::checkFunctionalPipeline("k", 273, 61768, 1), std::invalid_argument);
  EXPECT_NO_THROW(scheduler::checkFunctionalPipeline("k", 136, 61768, 2));
  EXPECT_THROW(scheduler::checkFunctionalPipeline("k", 137, 61768, 2), std::invalid_argument);
  EXPECT_NO_THROW(scheduler::checkFunctionalPipeline("k", 1u << 20, 0, 1));  // (nothing renamed)
}

// A sweep killed by SIGKILL (no handler runs) left sweep.png.tmp-PID and its
// kin in the output directory for good. The next sweep into it removes them
// (its own temporary files' names only; under its lock no sweep writes any).
TEST(AdversarialPass22, SweepRemovesStaleTemporariesOfItsResults) {
  ScratchDir dir("sweep-tmp");
  const std::string workload = replicatedMlp(dir.path(), "w.json", 1);
  const fs::path out = dir.path() / "o";
  fs::create_directories(out);
  const std::vector<std::string> stale = {"sweep.png.tmp-4194301", "sweep.csv.tmp-12", "sweep.json.tmp-7"};
  const std::vector<std::string> kept = {"sweep.png.tmp-x", "sweep.png.tmp-12.keep", "notes.tmp-3", "sweep.pdf.tmp-4"};
  for (const std::string& name : stale) std::ofstream(out / name) << "stale";
  for (const std::string& name : kept) std::ofstream(out / name) << "mine";
  fs::create_directory(out / "sweep.csv.tmp-99");  // (a directory: not a file a sweep writes)
  const auto r = runCommand(ipusimBinary() + " sweep --synthetic-data --no-plot --vary tiles=2,4 -o " +
                            quote(out.string()) + " " + quote(workload));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const std::string& name : stale) EXPECT_FALSE(fs::exists(out / name)) << name;
  for (const std::string& name : kept) EXPECT_EQ(readText(out / name), "mine") << name;
  EXPECT_TRUE(fs::is_directory(out / "sweep.csv.tmp-99"));
}

// A sweep into another running sweep's points folder (-o DIR/points) was
// let through: it wrote its sweep.csv, sweep.json and points/ among that
// sweep's points, and the next sweep into DIR refused to empty them.
TEST(AdversarialPass22, SweepIntoARunningSweepsPointsIsRefused) {
  ScratchDir dir("sweep-nested");
  const std::string workload = replicatedMlp(dir.path(), "w.json", 1);
  const std::string sweep = ipusimBinary() + " sweep --synthetic-data --no-plot --vary tiles=2 ";
  const fs::path out = dir.path() / "o";
  // The first sweep runs for minutes; the second starts once the first holds its directory's lock.
  const std::string script = sweep + "--steps 100000000 -o " + quote(out.string()) + " " + quote(workload) +
                             " >/dev/null 2>&1 & first=$!; for i in $(seq 600); do [ -d " + quote(out.string()) +
                             " ] && ! flock -n " + quote(out.string()) + " true && break; sleep 0.1; done; " + sweep +
                             "-o " + quote((out / "points").string()) + " " + quote(workload) +
                             "; code=$?; kill -TERM $first; wait $first; exit $code";
  const auto r = runCommand("sh -c " + quote(script));
  expectRefusal(r, (out / "points").string() + ": is in the points folder of a sweep writing into " + out.string() +
                       "; wait for it to finish or choose another -o directory");
  EXPECT_FALSE(fs::exists(out / "points" / "sweep.csv"));
  EXPECT_FALSE(fs::exists(out / "points" / "points"));
}

// A varied value holding a newline printed raw in the console summary: the
// point's line split in two ("  a" then "b: 0.001 s simulated"). It is
// shown as a JSON string now, as messages show such names. (Since pass 23
// a layer's name holding one is refused: the points fail, and their
// refusals, which name the --vary value, are one line each too.)
TEST(AdversarialPass22, SweepSummaryEscapesControlCharacters) {
  ScratchDir dir("sweep-nl");
  const std::string workload = replicatedMlp(dir.path(), "w.json", 1);
  const auto r = runCommand(ipusimBinary() + " sweep --synthetic-data --no-plot --vary " +
                            quote("model.layers[0].name=a\nb,c\x1b[31m") + " -o " + quote((dir.path() / "o").string()) +
                            " " + quote(workload));
  ASSERT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("\n  \"a\\nb\": failed (ipusim: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n  \"c\\u001b[31m\": failed (ipusim: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("with --vary model.layers[0].name=\"c\\u001b[31m\": model.layers[0].name: "
                          "\"c\\u001b[31m\" holds a control character"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("\nb: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
  // A point's count flag holding a newline failed "(')": the last line of its split refusal.
  const auto tiles = runCommand(ipusimBinary() + " sweep --synthetic-data --no-plot --vary " + quote("tiles=2\n") +
                                " -o " + quote((dir.path() / "o3").string()) + " " + quote(workload));
  EXPECT_NE(tiles.output.find("  \"2\\n\": failed (--vary tiles=\"2\\n\" (--tiles): expected a whole number from 1 "
                              "to 4294967295, got \"2\\n\")\n"),
            std::string::npos)
      << tiles.output;
  // And an axis's name in its refusal: the message was split over two lines.
  expectRefusal(runCommand(ipusimBinary() + " sweep --synthetic-data --vary " + quote("a\nb=1") + " -o " +
                           quote((dir.path() / "o2").string()) + " " + quote(workload)),
                "--vary \"a\\nb=1\": '\"a\\nb\"' is not a key of the workload file");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_22
