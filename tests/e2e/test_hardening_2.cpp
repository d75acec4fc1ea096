// Hostile or careless input, second pass (issue 33): no command destroys a
// file, no figure is silently wrong, no reader crashes or hangs. Every case
// ends with an exit code below 128 and one message naming the file, key or
// value; nothing is left behind and no existing file is changed.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>

namespace ipusim::test::test_hardening_2 {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kWorkload = sourcePath("workloads/mnist_with_feeds.json");

std::string compile(const std::string& workload, const fs::path& output, const std::string& flags = "") {
  return ipusimBinary() + " compile " + quote(workload) + " -o " + quote(output.string()) + flags;
}

// ---- compile -o writes as export does ------------------------------------

TEST(CompileOutput, NeverOntoItsOwnWorkloadOrKerasFile) {
  ScratchDir dir("compile-self");
  const fs::path workload = dir.path() / "w.json";
  fs::copy_file(kWorkload, workload);
  const std::string before = readText(workload);
  expectRefusal(runCommand(compile(workload.string(), workload, " --force")), "input of this command");
  EXPECT_EQ(readText(workload), before);
  // Through another spelling of the same file.
  expectRefusal(runCommand(compile(workload.string(), dir.path() / "." / "w.json", " --force")), "input of this command");
  EXPECT_EQ(readText(workload), before);
  // A Keras workload: its model file is an input too.
  const std::string keras = sourcePath("workloads/tutorial_mlp_keras.json");
  const fs::path kerasFile = sourcePath("workloads/keras/tutorial_mlp_tf2.json");  // its model.keras
  ASSERT_TRUE(fs::exists(kerasFile)) << kerasFile;
  const std::string kerasBefore = readText(kerasFile);
  expectRefusal(runCommand(compile(keras, kerasFile, " --force")), "input of this command");
  EXPECT_EQ(readText(kerasFile), kerasBefore);
  expectNoLitter(dir.path());
}

TEST(CompileOutput, ReplacesAFileOnlyWithForceAndNeverThroughASymlink) {
  ScratchDir dir("compile-force");
  const fs::path out = dir.path() / "graph.json";
  std::ofstream(out) << "earlier work";
  expectRefusal(runCommand(compile(kWorkload, out)), "--force");
  EXPECT_EQ(readText(out), "earlier work");

  // A link to another file: with --force the link is replaced, the file it names is not.
  const fs::path precious = dir.path() / "precious.txt", link = dir.path() / "link.json";
  std::ofstream(precious) << "keep me";
  fs::create_symlink(precious, link);
  expectRefusal(runCommand(compile(kWorkload, link)), "--force");
  const auto r = runCommand(compile(kWorkload, link, " --force"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(nlohmann::json::accept(readText(link)));

  const auto forced = runCommand(compile(kWorkload, out, " --force"));
  ASSERT_EQ(forced.exitCode, 0) << forced.output;
  EXPECT_TRUE(nlohmann::json::accept(readText(out)));
  // The graph it wrote runs.
  const auto run = runCommand(ipusimBinary() + " run --graph " + quote(out.string()) + " --entry train --runs 1");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  expectNoLitter(dir.path());
}

TEST(CompileOutput, RefusesDirectoriesAndFifosBeforeCompiling) {
  ScratchDir dir("compile-targets");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectRefusal(runCommand("timeout 20 " + compile(kWorkload, fifo, " --force")), "is a FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));
  expectRefusal(runCommand(compile(kWorkload, dir.path(), " --force")), "is a directory");
  expectNoLitter(dir.path());
}

TEST(ExampleGraphOutput, ReplacesAFileOnlyWithForce) {
  ScratchDir dir("example-graph");
  const fs::path out = dir.path() / "graph.json";
  std::ofstream(out) << "earlier work";
  expectRefusal(runCommand(ipusimBinary() + " example-graph -o " + quote(out.string())), "--force");
  EXPECT_EQ(readText(out), "earlier work");
  const auto r = runCommand(ipusimBinary() + " example-graph --force -o " + quote(out.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(out), readText(kGraph));
  expectNoLitter(dir.path());
}

// ---- sweep's files and children -------------------------------------------

std::string sweep(const fs::path& out, const std::string& flags) {
  return ipusimBinary() + " sweep " + quote(kWorkload) + " --vary tiles=16,32 --synthetic-data --steps 10 -j 2 -o " +
         quote(out.string()) + " " + flags;
}

bool haveGnuplot() { return runCommand("command -v gnuplot").exitCode == 0; }

TEST(SweepFiles, ReplacesALinkedSweepPngInsteadOfWritingThroughIt) {
  if (!haveGnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  ScratchDir dir("sweep-link");
  const fs::path out = dir.path() / "sw", precious = dir.path() / "precious.txt";
  fs::create_directories(out);
  std::ofstream(precious) << "keep me";
  fs::create_symlink(precious, out / "sweep.png");
  fs::create_symlink(precious, out / "sweep.csv");
  const auto r = runCommand(sweep(out, ""));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(out / "sweep.png"));
  EXPECT_EQ(readText(out / "sweep.png").substr(1, 3), "PNG");
  EXPECT_FALSE(fs::is_symlink(out / "sweep.csv"));
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(SweepFiles, StartsFromACleanPointsFolder) {
  ScratchDir dir("sweep-clean");
  const fs::path out = dir.path() / "sw";
  fs::create_directories(out / "points" / "5");
  for (const char* name : {"5.json", "5.log", "plot.gp", "3.json.tmp-99"}) std::ofstream(out / "points" / name) << "{}";
  std::ofstream(out / "points" / "5" / "profile.pop") << "earlier";
  const auto r = runCommand(sweep(out, "--no-plot"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(out / "points")) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"0.json", "0.log", "1.json", "1.log"}));

  // A result file that is a link to the workload: refused before any point runs.
  fs::remove(out / "sweep.json");
  fs::create_symlink(kWorkload, out / "sweep.json");
  const auto linked = runCommand(sweep(out, "--no-plot"));
  expectRefusal(linked, "sweep.json: is an input of this command");
  EXPECT_EQ(linked.output.find("sweep: 2 points"), std::string::npos) << linked.output;
  fs::remove(out / "sweep.json");

  // A file no sweep writes is not ours to delete: the sweep stops before running anything.
  std::ofstream(out / "points" / "notes.txt") << "mine";
  expectRefusal(runCommand(sweep(out, "--no-plot")), "notes.txt: not written by a sweep");
  EXPECT_EQ(readText(out / "points" / "notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(out / "points" / "0.json"));
}

TEST(SweepFiles, EachPointWritesItsReportsIntoItsOwnDirectory) {
  ScratchDir dir("sweep-reports");
  const auto r = runCommand("cd " + quote(dir.str()) + " && " +
                            sweep(dir.path() / "sw", "--no-plot --engine-options '{\"autoReport.all\":\"true\"}'"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
  for (const char* point : {"0", "1"}) {
    const fs::path profile = dir.path() / "sw" / "points" / point / "profile.pop";
    ASSERT_TRUE(fs::exists(profile)) << r.output;
    const auto report = runCommand(ipusimBinary() + " report " + quote(profile.string()));
    EXPECT_EQ(report.exitCode, 0) << report.output;
  }
}

// The process ids of `pid`'s children.
std::vector<pid_t> childrenOf(pid_t pid) {
  std::vector<pid_t> result;
  std::istringstream in(readText("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
  for (pid_t child; in >> child;) result.push_back(child);
  return result;
}

bool alive(pid_t pid) {
  // A zombie is dead: it only waits for its parent to read its status.
  const std::string stat = readText("/proc/" + std::to_string(pid) + "/stat");
  return !stat.empty() && stat.find(") Z ") == std::string::npos;
}

// Starts a sweep of two long points, waits for both children, sends `signal`
// to the sweep, and expects both children gone within 10 s.
void expectSweepChildrenEndWithIt(int signal) {
  ScratchDir dir("sweep-signal-" + std::to_string(signal));
  const fs::path out = dir.path() / "sw";
  const auto started = runCommand("(exec " + ipusimBinary() + " sweep " + quote(kWorkload) +
                                  " --vary tiles=16,32 --synthetic-data --steps 100000000 -j 2 --no-plot -o " +
                                  quote(out.string()) + ") >" + quote((dir.path() / "log").string()) +
                                  " 2>&1 & echo $!");
  const pid_t sweepPid = std::stoi(started.output);
  std::vector<pid_t> children;
  for (int i = 0; i < 400 && children.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    children = childrenOf(sweepPid);
  }
  ASSERT_EQ(children.size(), 2u) << readText(dir.path() / "log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past the children's start-up
  kill(sweepPid, signal);
  const auto t0 = Clock::now();
  auto anyAlive = [&] { return alive(children[0]) || alive(children[1]); };
  while (anyAlive() && Clock::now() - t0 < std::chrono::seconds(10 * kSlowdown))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool leftRunning = anyAlive();
  for (const pid_t child : children)
    if (alive(child)) kill(child, SIGKILL);  // never leave them running
  EXPECT_FALSE(leftRunning) << "a point outlived its sweep (signal " << signal << "): " << readText(dir.path() / "log");
  for (int i = 0; i < 200 && alive(sweepPid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(sweepPid));
  if (signal != SIGKILL) {  // what it leaves: the finished points' output, not "nothing written"
    const std::string log = readText(dir.path() / "log");
    EXPECT_NE(log.find("no sweep.csv, sweep.json or sweep.png written; the finished points' output is in " +
                       (out / "points").string() + "/"),
              std::string::npos)
        << log;
  }
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
}

TEST(SweepChildren, EndWithTheSweepOnSigterm) { expectSweepChildrenEndWithIt(SIGTERM); }
TEST(SweepChildren, EndWithTheSweepOnSigint) { expectSweepChildrenEndWithIt(SIGINT); }
TEST(SweepChildren, EndWhenTheSweepIsKilled) { expectSweepChildrenEndWithIt(SIGKILL); }

// ---- no silent wrong figure -----------------------------------------------

// A profile of 20 training steps of the tutorial's model on real data (it has a loss counter and tensors).
fs::path writeTrainingProfile(const fs::path& dir, const std::string& workload = kWorkload) {
  const auto r = runCommand(withReports(dir) + ipusimBinary() + " run " + quote(workload) + " --steps 20");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return dir / "profile.pop";
}

bool nonFinite(const nlohmann::json& j) { return j == "nan" || j == "inf" || j == "-inf"; }

TEST(NonFiniteValues, ADivergingTrainingIsProfiledAndItsLossShownAsSuch) {
  ScratchDir dir("diverging");
  const std::string workload = workloadWith(dir.path(), [](nlohmann::json& j) { j["optimizer"]["learning_rate"] = 1e30; });
  const fs::path reports = dir.path() / "reports";
  const auto run = runCommand("{ " + withReports(reports) + ipusimBinary() + " run " + quote(workload) +
                              " --steps 20 --json 2>/dev/null; }");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const auto summary = nlohmann::json::parse(run.output);
  EXPECT_TRUE(nonFinite(summary["final_loss"])) << summary["final_loss"];

  const auto report = runCommand("{ " + ipusimBinary() + " report --json " + quote(reports.string()) + " 2>/dev/null; }");
  ASSERT_EQ(report.exitCode, 0) << report.output;
  const auto loss = nlohmann::json::parse(report.output)["loss"];
  EXPECT_EQ(loss["samples"], 20) << loss;
  EXPECT_TRUE(nonFinite(loss["last"])) << loss;
  const auto text = runCommand(ipusimBinary() + " report " + quote(reports.string()));
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_TRUE(text.output.find(", last nan") != std::string::npos || text.output.find(", last inf") != std::string::npos ||
              text.output.find(", last -inf") != std::string::npos)
      << text.output;
  const auto exported = runCommand(ipusimBinary() + " export " + quote(reports.string()) + " -o " +
                                   quote((dir.path() / "trace.json").string()));
  EXPECT_EQ(exported.exitCode, 0) << exported.output;
}

class DamagedTrainingProfile : public testing::Test {
 protected:
  void SetUp() override { profile_ = writeTrainingProfile(dir_.path()); }
  CommandResult report(const std::string& flags = "") {
    return runCommand("timeout 60 " + ipusimBinary() + " report " + flags + " " + quote(profile_.string()));
  }
  ScratchDir dir_{"damaged-training"};
  fs::path profile_;
};

TEST_F(DamagedTrainingProfile, ALossStoredAsTextOrABlobIsAnError) {
  execSql(profile_, "UPDATE counters SET value = 'abc' WHERE rowid = (SELECT min(rowid) FROM counters)");
  expectRefusal(report(), "counters.value is text 'abc'");
  execSql(profile_, "UPDATE counters SET value = X'00' WHERE rowid = (SELECT min(rowid) FROM counters)");
  expectRefusal(report(), "is a blob");
}

TEST_F(DamagedTrainingProfile, SumsThatOverflowNameTheColumn) {
  // 2^62 each: within the reader's bound for one value, beyond 64 bits summed.
  execSql(profile_, "UPDATE tensors SET bytes = 4611686018427387904");
  expectRefusal(report("--liveness"), "the sum of tensors.bytes overflows");
  expectRefusal(report("--ops"), "the sum of tensors.bytes overflows");
}

TEST_F(DamagedTrainingProfile, NegativeSizesAndFlopsAreRefusedWhereRead) {
  execSql(profile_, "UPDATE tensors SET bytes = -6 WHERE id = (SELECT min(id) FROM tensors)");
  expectRefusal(report("--ops"), "tensors.bytes is -6");
}

TEST_F(DamagedTrainingProfile, ASliceOfNoTrackIsAnError) {
  execSql(profile_, "UPDATE slices SET track_id = 999999 WHERE id = (SELECT min(id) FROM slices)");
  const std::string p = quote(profile_.string());
  for (const std::string& command : {"report " + p, "compare " + p + " " + p,
                                     "export " + p + " -o " + quote((dir_.path() / "t.json").string())})
    expectRefusal(runCommand(ipusimBinary() + " " + command), "track_id 999999, which names no track");
  EXPECT_FALSE(fs::exists(dir_.path() / "t.json"));
}

TEST_F(DamagedTrainingProfile, AClockRateOutsideThePhysicalRangeIsRefused) {
  for (const char* clock : {"1e-300", "1", "1e300"}) {
    execSql(profile_, std::string("UPDATE meta SET value = '") + clock + "' WHERE key = 'clock_hz'");
    expectRefusal(report(), "meta 'clock_hz' is '" + std::string(clock) + "'");
    expectRefusal(runCommand(ipusimBinary() + " insights " + quote(profile_.string())), "clock_hz");
  }
}

TEST(NoSilentArithmetic2, AClockRateOutsideThePhysicalRangeIsRefused) {
  const std::string run = ipusimBinary() + " run " + quote(kWorkload) + " --synthetic-data --steps 10 ";
  for (const char* clock : {"1e-300", "1", "1e13"})
    expectRefusal(runCommand(run + "--set clockHz=" + clock), "target parameter 'clockHz'");
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --set clockHz=1e-300"), "clockHz");
}

// ---- no crash, no hang ----------------------------------------------------

// Every profile reader of the command line, on `profile`, with a 20 s bound.
std::vector<std::string> readerCommands(const std::string& profile, const fs::path& out) {
  const std::string p = quote(profile);
  return {"report " + p, "insights " + p, "compare " + p + " " + p, "export " + p + " -o " + quote(out.string())};
}

TEST(ProfileFiles, FifosDevicesAndDirectoriesAreRefusedByNameBeforeOpening) {
  ScratchDir dir("profile-kinds");
  const fs::path fifo = dir.path() / "fifo.pop", out = dir.path() / "trace.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(dir.path() / "reports");
  ASSERT_EQ(mkfifo((dir.path() / "reports" / "profile.pop").c_str(), 0600), 0);
  fs::create_directories(dir.path() / "nested" / "profile.pop");
  for (const auto& [target, culprit] : std::vector<std::pair<fs::path, std::string>>{
           {fifo, "fifo.pop: is a FIFO"},
           {dir.path() / "reports", "profile.pop: is a FIFO"},
           {"/dev/null", "/dev/null: is a device"},
           {dir.path() / "nested", "profile.pop: is a directory"}})
    for (const auto& command : readerCommands(target.string(), out))
      expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " " + command), culprit);
  expectNoLitter(dir.path());
  EXPECT_FALSE(fs::exists(out));
}

TEST(ProfileFiles, AWalModeProfileIsReadWithoutLeavingFiles) {
  ScratchDir dir("wal");
  const fs::path profile = writeProfile(dir.path());
  const auto wal = runCommand("sqlite3 " + quote(profile.string()) + " 'PRAGMA journal_mode=WAL'");
  ASSERT_EQ(wal.exitCode, 0) << wal.output;
  ASSERT_FALSE(fs::exists(profile.string() + "-wal"));
  for (const auto& command : readerCommands(profile.string(), dir.path() / "trace.json")) {
    const auto r = runCommand(ipusimBinary() + " " + command);
    EXPECT_EQ(r.exitCode, 0) << command << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(profile.string() + "-wal"));
  EXPECT_FALSE(fs::exists(profile.string() + "-shm"));
}

TEST(ProfileFiles, TablesReplacedByViewsAndTriggersAreRefused) {
  ScratchDir dir("views");
  const fs::path profile = writeProfile(dir.path());
  const fs::path copy = dir.path() / "copy.pop";
  fs::copy_file(profile, copy);
  // A counters "table" that never ends.
  execSql(profile,
          "ALTER TABLE counters RENAME TO counters_kept; CREATE VIEW counters AS WITH RECURSIVE n(x) AS "
          "(SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT 0 AS track_id, x AS ts, 0.0 AS value, NULL AS run_id, "
          "NULL AS step FROM n");
  for (const auto& command : readerCommands(profile.string(), dir.path() / "trace.json"))
    expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " " + command), "holds the view 'counters'");
  execSql(copy, "CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END");
  expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " report " + quote(copy.string())), "holds the trigger 't'");
}

std::string deeplyNested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(DeepJson, NestingBeyondTheBoundIsRefusedNotACrash) {
  ScratchDir dir("deep-json");
  nlohmann::json graph = nlohmann::json::parse(readText(kGraph));
  graph["options"] = nlohmann::json::object();
  std::string text = graph.dump();
  const std::string key = "\"options\":{}";
  text.replace(text.find(key), key.size(), "\"options\":" + deeplyNested(200000));
  const fs::path deep = dir.path() / "deep.json";
  std::ofstream(deep) << text;
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(deep.string())),
                "more than 256 deep");
  // 60,000 deep: a command-line argument or environment variable holds at most 128 KiB.
  std::ofstream(dir.path() / "options.json") << "{\"debug.instrument\":" << deeplyNested(60000) << "}";
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --engine-options \"$(cat " +
                           quote((dir.path() / "options.json").string()) + ")\""),
                "--engine-options: JSON nests arrays and objects more than 256 deep");
  expectRefusal(runCommand("POPLAR_ENGINE_OPTIONS=\"$(cat " + quote((dir.path() / "options.json").string()) + ")\" " +
                           ipusimBinary() + " run --graph " + quote(kGraph)),
                "POPLAR_ENGINE_OPTIONS: JSON nests");
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(kWorkload) + " --synthetic-data --steps 10 --workload-set "
                           "seed=" + deeplyNested(60000)),
                "more than 256 deep");
  // A sweep reads the workload itself: the same bound, and FIFOs and directories refused by name.
  const fs::path deepWorkload = dir.path() / "w.json";
  std::ofstream(deepWorkload) << "{\"seed\":" << deeplyNested(200000) << "}";
  expectRefusal(runCommand(ipusimBinary() + " sweep " + quote(deepWorkload.string()) + " --vary tiles=16 -o " +
                           quote((dir.path() / "sw").string())),
                "more than 256 deep");
  expectRefusal(runCommand(ipusimBinary() + " sweep " + quote(dir.str()) + " --vary tiles=16 -o " +
                           quote((dir.path() / "sw").string())),
                "is a directory");
  const fs::path fifo = dir.path() / "w.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " sweep " + quote(fifo.string()) + " --vary tiles=16 -o " +
                           quote((dir.path() / "sw").string())),
                "is a FIFO");
}

// ---- clear messages ---------------------------------------------------------

void expectMessage(const CommandResult& r, const std::string& text) {
  EXPECT_GT(r.exitCode, 0) << r.output;
  EXPECT_LT(r.exitCode, 128) << r.output;
  EXPECT_NE(r.output.find(text), std::string::npos) << "expected '" << text << "' in: " << r.output;
}

TEST(ClearMessages, CountsSayWhatTheyAccept) {
  ScratchDir dir("counts");
  const std::string sweep = ipusimBinary() + " sweep " + quote(kWorkload) + " -o " + quote((dir.path() / "sw").string());
  expectMessage(runCommand(sweep + " --vary tiles=16 -j 0"), "expected a whole number from 1 to 256, got '0'");
  expectMessage(runCommand(ipusimBinary() + " run " + quote(kWorkload) + " --steps-per-execution 1000000000000"),
                "expected a whole number from 1 to 4294967295, got '1000000000000'");
  expectMessage(runCommand(ipusimBinary() + " run " + quote(kWorkload) + " --steps 0"), "got '0'");
  expectRefusal(runCommand(sweep + " --vary tiles=16 --vary tiles=32"), "'tiles' is varied twice");
}

TEST(ClearMessages, WorkloadSetErrorsNameWorkloadSet) {
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(sourcePath("workloads/keras/tutorial_mlp_tf2.json")) +
                            " --workload-set dataset.batch_size=0 --synthetic-data");
  expectRefusal(r, "--workload-set on the workload made for");
}

TEST(ClearMessages, RunningOutOfMemoryIsSaidInWords) {
  // AddressSanitizer reserves terabytes of address space for its shadow
  // memory: under a 200 MB ulimit it cannot start at all. The plain build runs this.
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitized binary cannot run under ulimit -v";
  // 200 MB of address space: the 4096-wide MLP's tile memory (1,472 tiles of 624 KB) does not fit.
  const std::string workload = sourcePath("workloads/mlp_4096.json");
  const auto r = runCommand("ulimit -v 200000; " + ipusimBinary() + " run " + quote(workload) + " --synthetic-data --steps 10");
  expectRefusal(r, workload + ": out of memory: compiling and simulating this model needs more host memory than the "
                              "machine gives the process");
  // --synthetic-data is not suggested to a run that has it (adversarial pass 5).
  EXPECT_EQ(r.output.find("as does --synthetic-data"), std::string::npos) << r.output;
}

TEST(ClearMessages, RunningOutOfMemoryComputingTheNumbersSuggestsSyntheticData) {
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitized binary cannot run under ulimit -v";
  const std::string workload = sourcePath("workloads/mlp_4096.json");
  const auto r = runCommand("ulimit -v 200000; " + ipusimBinary() + " run " + quote(workload) + " --steps 10");
  expectRefusal(r, workload + ": out of memory: ");
  EXPECT_NE(r.output.find("as does --synthetic-data (the same cycles without the numbers)"), std::string::npos) << r.output;
}

TEST(ClearMessages, AProgramParentCycleNamesTheFile) {
  ScratchDir dir("program-cycle");
  const fs::path profile = writeProfile(dir.path());
  execSql(profile, "UPDATE programs SET parent_id = id WHERE id = (SELECT min(id) FROM programs)");
  for (const std::string& command : {std::string(" report "), " export -o " + quote((dir.path() / "out.json").string()) + " "})
    expectRefusal(runCommand(ipusimBinary() + command + quote(profile.string())),
                  profile.string() + ": damaged profile: programs.parent_id is");
  EXPECT_FALSE(fs::exists(dir.path() / "out.json"));
}

// ---- the viewer ---------------------------------------------------------------

const std::string kViewer = std::string(ipusim::test::binaryDir()) + "/bin/ipusim-view";

std::string headless(const std::string& command) { return "xvfb-run -a -s '-screen 0 1600x900x24' " + command; }

bool canRunViewer() { return fs::exists(kViewer) && runCommand("command -v xvfb-run").exitCode == 0; }

// Under a small address space the viewer's allocations fail while it opens a
// profile (before any window: no display needed): said as out of memory, as
// `ipusim` says it, never as "std::bad_alloc". The limits span where the
// failure moves from SQLite's own allocations to the viewer's.
TEST(ViewerFiles, RunningOutOfMemoryIsSaidInWords) {
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitized binary cannot run under ulimit -v";
  if (!fs::exists(kViewer)) GTEST_SKIP() << "ipusim-view is missing";
  ScratchDir dir("viewer-oom");
  const fs::path profile = writeProfile(dir.path() / "reports");
  int inWords = 0;
  for (int kib = 26000; kib <= 44000; kib += 2000) {
    const auto r = runCommand("ulimit -v " + std::to_string(kib) + "; env -u DISPLAY timeout 60 " + kViewer + " " +
                              quote(profile.string()) + " --screenshot " + quote((dir.path() / "s.png").string()));
    EXPECT_LT(r.exitCode, 128) << kib << " KiB: " << r.output;
    EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << kib << " KiB: " << r.output;
    inWords += r.output.find("out of memory") != std::string::npos;
  }
  EXPECT_GT(inWords, 0);
  expectNoLitter(dir.path());
}

TEST(ViewerFiles, FifosAreRefusedAndWalProfilesOpenWithoutLeavingFiles) {
  if (!canRunViewer()) GTEST_SKIP() << "ipusim-view or xvfb-run is missing";
  ScratchDir dir("viewer-files");
  const fs::path fifo = dir.path() / "fifo.pop", shot = dir.path() / "shot.png";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Checked before any window opens: no display needed.
  expectRefusal(runCommand("timeout 20 " + kViewer + " " + quote(fifo.string()) + " --screenshot " + quote(shot.string())),
                "is a FIFO");
  const fs::path profile = writeProfile(dir.path() / "wal");
  ASSERT_EQ(runCommand("sqlite3 " + quote(profile.string()) + " 'PRAGMA journal_mode=WAL'").exitCode, 0);
  const auto r = runCommand(headless(kViewer + " " + quote(profile.string()) + " --screenshot " + quote(shot.string())));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(fs::exists(shot));
  EXPECT_FALSE(fs::exists(profile.string() + "-wal"));
  EXPECT_FALSE(fs::exists(profile.string() + "-shm"));
}

TEST(ViewerFiles, HugeTensorsAndTileCountsAreErrorsNotCrashes) {
  if (!canRunViewer()) GTEST_SKIP() << "ipusim-view or xvfb-run is missing";
  ScratchDir dir("viewer-huge");
  const fs::path profile = writeTrainingProfile(dir.path() / "reports");
  execSql(profile, "UPDATE tensors SET bytes = 4611686018427387904");
  for (const char* view : {"liveness", "operations"}) {
    const fs::path shot = dir.path() / (std::string(view) + ".png");
    const auto r = runCommand("timeout 120 " + headless(kViewer + " " + quote(profile.string()) + " --view " + view +
                                                        " --screenshot " + quote(shot.string())));
    EXPECT_LT(r.exitCode, 128) << view << ": " << r.output;  // the view shows the error; no crash
  }
  expectNoLitter(dir.path());
  execSql(profile, "UPDATE meta SET value = '4000000000' WHERE key = 'tiles_per_ipu'");
  expectRefusal(runCommand("timeout 60 " + headless(kViewer + " " + quote(profile.string()) + " --screenshot " +
                                                    quote((dir.path() / "tiles.png").string()))),
                "meta 'tiles_per_ipu' is '4000000000'");
}

TEST(ViewerFiles, SigtermLeavesNoTemporaryScreenshot) {
  if (!canRunViewer()) GTEST_SKIP() << "ipusim-view or xvfb-run is missing";
  ScratchDir dir("viewer-sigterm");
  const fs::path profile = writeTrainingProfile(dir.path() / "reports");
  const fs::path shot = dir.path() / "shot.png";
  // The script records the viewer's pid (it execs the viewer).
  std::ofstream(dir.path() / "view.sh") << "echo $$ >" << quote((dir.path() / "pid").string()) << "\nexec " << kViewer
                                        << " " << quote(profile.string()) << " --screenshot " << quote(shot.string())
                                        << "\n";
  runCommand(headless("sh " + quote((dir.path() / "view.sh").string())) + " >/dev/null 2>&1 &");
  pid_t pid = 0;
  bool writing = false;
  for (int i = 0; i < 2000 && !writing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::string text = readText(dir.path() / "pid");
    if (!pid && !text.empty()) pid = std::stoi(text);
    for (const auto& e : fs::directory_iterator(dir.path()))
      writing = writing || e.path().filename().string().find("shot.png.tmp-") == 0;
  }
  ASSERT_GT(pid, 0);
  if (!writing) {  // it finished before we saw it write
    kill(pid, SIGKILL);
    GTEST_SKIP() << "the screenshot was done before SIGTERM could be sent";
  }
  kill(pid, SIGTERM);
  for (int i = 0; i < 500 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (alive(pid)) kill(pid, SIGKILL);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("shot.png.tmp-"), std::string::npos) << e.path();
}

// ---- memory bounded by what the input is -------------------------------------

TEST(BoundedMemory, AnIdxHeaderAnnouncingGigabytesCostsOnlyWhatTheFileHolds) {
  if (runCommand("test -x /usr/bin/time").exitCode != 0) GTEST_SKIP() << "no /usr/bin/time";
  ScratchDir dir("idx-claim");
  // 16000 x 512 x 512 bytes announced (3.9 GiB, under the 4 GiB limit), none there: 40 bytes gzipped.
  const fs::path claim = dir.path() / "claim-idx3-ubyte.gz";
  ASSERT_EQ(runCommand("printf '\\000\\000\\010\\003\\000\\000\\076\\200\\000\\000\\002\\000\\000\\000\\002\\000'"
                       " | gzip > " + quote(claim.string())).exitCode, 0);
  const std::string workload = workloadWith(dir.path(), [&](nlohmann::json& j) { j["dataset"]["images"] = claim.string(); });
  const fs::path rss = dir.path() / "rss.txt";
  const auto r = runCommand("/usr/bin/time -f %M -o " + quote(rss.string()) + " " + ipusimBinary() + " run " +
                            quote(workload) + " --steps 10");
  EXPECT_NE(r.output.find("claim-idx3-ubyte.gz: truncated"), std::string::npos) << r.output;
  // The last line is the peak RSS in KiB (a line before it may say the exit status).
  std::string kib;
  std::istringstream lines(readText(rss));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) kib = line;
  ASSERT_FALSE(kib.empty());
  EXPECT_LT(std::stoll(kib), 1024 * 1024)
      << "peak RSS " << kib << " KiB";
}

TEST(BoundedMemory, RunJsonReportsPeakResidentMemory) {
  const auto r = runCommand("{ " + ipusimBinary() + " run " + quote(kWorkload) +
                            " --synthetic-data --steps 10 --json 2>/dev/null; }");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto rss = nlohmann::json::parse(r.output).at("peak_rss_bytes").get<std::uint64_t>();
  EXPECT_GT(rss, 1u << 20);
  EXPECT_LT(rss, 8ull << 30);
}

// The up-front estimate (scheduler/models/memory_estimate.hpp) beside the peak
// RSS: the one the compiler checked before building anything, as `compile` gives it.
TEST(BoundedMemory, RunJsonReportsTheMemoryEstimateMadeBeforeTheRun) {
  const auto r = runCommand("{ " + ipusimBinary() + " run " + quote(kWorkload) +
                            " --synthetic-data --steps 10 --json 2>/dev/null; }");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json run = nlohmann::json::parse(r.output);
  const auto bytes = run.at("memory_estimate_bytes").get<std::uint64_t>();
  const auto perTile = run.at("memory_estimate_bytes_per_tile").get<std::uint64_t>();
  // The tutorial's MLP (784-128-10, SGD, batch 32): float weights, the largest
  // weight gradient, the images and labels streams at least.
  const std::uint64_t weights = 4 * (784 * 128 + 128 + 128 * 10 + 10), gradient = 4 * 784 * 128;
  EXPECT_GE(bytes, weights + gradient + 4 * 32 * 784 + 4 * 32);
  EXPECT_LT(bytes, 4 * (weights + gradient));
  EXPECT_EQ(perTile, (bytes + 1472 / 2) / 1472);  // spread over every tile of the IPU
  EXPECT_LE(perTile, run.at("max_tile_bytes").get<std::uint64_t>());  // a lower bound of the fullest tile
  const auto c = runCommand(ipusimBinary() + " compile " + quote(kWorkload) + " --json 2>/dev/null");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(nlohmann::json::parse(c.output).at("memory_estimate_bytes"), run.at("memory_estimate_bytes"));
}

}  // namespace
}  // namespace ipusim::test::test_hardening_2
