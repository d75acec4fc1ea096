// Hostile or careless input (issue 16): every case ends with an exit code
// below 128 and one message naming the file, key or path; nothing is left
// behind and no existing file is changed.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace ipusim::test::test_hardening {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The bundled graph with its Repeat count replaced (and its programs nested deeper when asked).
fs::path graphWithRepeat(const fs::path& dir, std::uint64_t count) {
  nlohmann::json j = nlohmann::json::parse(readText(kGraph));
  bool found = false;
  for (auto& p : j["programs"])
    if (p.value("kind", "") == "Repeat") p["count"] = count, found = true;
  EXPECT_TRUE(found) << "the bundled graph has no Repeat";
  const fs::path out = dir / "repeat.json";
  std::ofstream(out) << j.dump();
  return out;
}

// ---- never destroy data -------------------------------------------------

TEST(NeverDestroyData, ExportRefusesToWriteOntoItsInputProfile) {
  ScratchDir dir("export-self");
  const fs::path profile = writeProfile(dir.path());
  const std::string before = readText(profile);
  for (const std::string& target : {profile.string(), dir.str()})
    expectRefusal(runCommand(ipusimBinary() + " export " + quote(target) + " -o " + quote(profile.string()) + " --force"),
                  "input of this command");
  EXPECT_EQ(readText(profile), before);
  EXPECT_EQ(fs::directory_iterator(dir.path())->path(), profile);  // nothing else appeared
}

TEST(NeverDestroyData, ExportRefusesReadOnlyFilesFifosDevicesAndDirectories) {
  ScratchDir dir("export-targets");
  const fs::path profile = writeProfile(dir.path() / "in");
  const fs::path readOnly = dir.path() / "read-only.json";
  std::ofstream(readOnly) << "keep me";
  fs::permissions(readOnly, fs::perms::owner_read | fs::perms::group_read);
  expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(readOnly.string()) +
                           " --force"),
                "read-only");
  EXPECT_EQ(readText(readOnly), "keep me");

  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " export " + quote(profile.string()) + " -o " +
                           quote(fifo.string()) + " --force"),
                "is a FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));

  // A character device of our own (the null device's numbers): root may make one.
  const fs::path device = dir.path() / "null-device";
  if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(device.string()) +
                             " --force"),
                  "is a device");
    EXPECT_TRUE(fs::is_character_file(device));
  }
  expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(dir.str())),
                "is a directory");
  expectNoLitter(dir.path());
}

TEST(NeverDestroyData, ExportReplacesAnExistingFileOnlyWithForce) {
  ScratchDir dir("export-force");
  const fs::path profile = writeProfile(dir.path() / "in");
  const fs::path out = dir.path() / "trace.json";
  std::ofstream(out) << "earlier work";
  expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(out.string())),
                "--force");
  EXPECT_EQ(readText(out), "earlier work");
  const auto r = runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(out.string()) +
                            " --force");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::accept(readText(out)));
  expectNoLitter(dir.path());
}

TEST(NeverDestroyData, ScreenshotRefusesToOverwriteItsInputProfile) {
  const std::string viewer = std::string(ipusim::test::binaryDir()) + "/bin/ipusim-view";
  if (!fs::exists(viewer)) GTEST_SKIP() << "ipusim-view is not built";
  ScratchDir dir("screenshot-self");
  const fs::path profile = writeProfile(dir.path());
  const std::string before = readText(profile);
  // Checked before any window opens: no display needed.
  expectRefusal(runCommand(viewer + " " + quote(dir.str()) + " --screenshot " + quote(profile.string())),
                "input of this command");
  EXPECT_EQ(readText(profile), before);
}

TEST(NeverDestroyData, ASecondRunIntoALiveRunsReportDirectoryIsRefused) {
  ScratchDir dir("two-runs");
  const fs::path log = dir.path() / "first.log";
  const fs::path reports = dir.path() / "reports";
  const auto started = runCommand("(" + withReports(reports) + "exec " + ipusimBinary() + " run --graph " +
                                  quote(graphWithRepeat(dir.path(), 1'000'000'000).string()) + ") >" +
                                  quote(log.string()) + " 2>&1 & echo $!");
  const pid_t first = std::stoi(started.output);
  bool writing = false;
  for (int i = 0; i < 400 && !writing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(reports))
      for (const auto& e : fs::directory_iterator(reports)) writing = writing || e.path().string().find(".tmp-") != std::string::npos;
  }
  ASSERT_TRUE(writing) << readText(log);
  const auto second = runCommand(withReports(reports) + ipusimBinary() + " run --graph " + quote(kGraph));
  expectRefusal(second, "another run (process " + std::to_string(first) + ")");
  kill(first, SIGINT);
  for (int i = 0; i < 200 && kill(first, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (kill(first, 0) == 0) kill(first, SIGKILL);  // never leave it running
  expectNoLitter(reports);
}

TEST(NeverDestroyData, FailedWritesToStandardOutputAreErrors) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  ScratchDir dir("stdout-full");
  const fs::path profile = writeProfile(dir.path());
  for (const std::string& command :
       {std::string("params"), "report " + quote(profile.string()),
        "compare " + quote(profile.string()) + " " + quote(profile.string()), "run --graph " + quote(kGraph)}) {
    const auto r = runCommand("{ " + ipusimBinary() + " " + command + " >/dev/full; }");
    EXPECT_GT(r.exitCode, 0) << command;
    EXPECT_LT(r.exitCode, 128) << command;
    EXPECT_NE(r.output.find("standard output"), std::string::npos) << command << ": " << r.output;
  }
}

// ---- no silent arithmetic -----------------------------------------------

TEST(NoSilentArithmetic, HugeTimesAndTinyRatesNameTheParameter) {
  const std::string run = ipusimBinary() + " run " + quote(sourcePath("workloads/mnist_with_feeds.json")) +
                          " --synthetic-data --steps 10 ";
  expectRefusal(runCommand(run + "--set host.runDispatchSeconds=1e11"), "host.runDispatchSeconds");
  expectRefusal(runCommand(run + "--set hostLink.latencySeconds=1e11"), "hostLink.latencySeconds");
  expectRefusal(runCommand(run + "--set hostLink.bytesPerSecond=1e-300"), "hostLink.bytesPerSecond");
  expectRefusal(runCommand(run + "--set ipuLink.linkBytesPerSecond=1e-300"), "ipuLink.linkBytesPerSecond");
}

// ---- damaged profiles ---------------------------------------------------

class DamagedProfile : public testing::Test {
 protected:
  void SetUp() override { profile_ = writeProfile(dir_.path()); }
  // report, compare and export each refuse it with a message naming `culprit`.
  void expectEveryReaderRefuses(const std::string& culprit) {
    const std::string p = quote(profile_.string());
    const fs::path out = dir_.path() / "trace.json";
    for (const std::string& command : {"report " + p, "compare " + p + " " + p, "export " + p + " -o " + quote(out.string())})
      expectRefusal(runCommand("timeout 60 " + ipusimBinary() + " " + command), culprit);
    EXPECT_FALSE(fs::exists(out));
  }
  ScratchDir dir_{"damaged"};
  fs::path profile_;
};

TEST_F(DamagedProfile, MissingItsLast4KiB) {
  fs::resize_file(profile_, fs::file_size(profile_) - 4096);
  expectEveryReaderRefuses("corrupt or truncated");
}

TEST_F(DamagedProfile, ARowDeletedDisagreesWithTheRecordedCounts) {
  execSql(profile_, "DELETE FROM slices WHERE id = (SELECT max(id) FROM slices)");
  expectEveryReaderRefuses("table slices has");
}

TEST_F(DamagedProfile, AnIpuIndexOfTwoBillion) {
  execSql(profile_, "UPDATE tracks SET ipu = 2000000000 WHERE ipu = 0");
  expectEveryReaderRefuses("tracks.ipu is 2000000000");
}

TEST_F(DamagedProfile, ARunThatEndsBeforeItStarts) {
  execSql(profile_, "UPDATE runs SET end_cycle = start_cycle - 10 WHERE id = 1");
  // report and compare read runs ("inside runs -10 cycles" before); export does not use them.
  const std::string p = quote(profile_.string());
  for (const std::string& command : {"report " + p, "compare " + p + " " + p})
    expectRefusal(runCommand(ipusimBinary() + " " + command), "runs.end_cycle is ");
}

TEST_F(DamagedProfile, AHugeDuration) {
  execSql(profile_, "UPDATE slices SET dur = 9000000000000000000 WHERE id = (SELECT min(id) FROM slices)");
  const fs::path out = dir_.path() / "trace.json";
  expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile_.string()) + " -o " + quote(out.string())),
                "slices.dur is 9000000000000000000");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(DamagedProfile, HugeTileMemoryBytes) {
  execSql(profile_, "UPDATE tile_memory SET bytes = 9000000000000000000");
  const auto r = runCommand(ipusimBinary() + " report " + quote(profile_.string()));
  expectRefusal(r, "tile_memory.bytes is 9000000000000000000");
}

TEST_F(DamagedProfile, ATinyClockRateIsAnErrorNotAnOverflow) {
  execSql(profile_, "UPDATE meta SET value = '1e-300' WHERE key = 'clock_hz'");
  const fs::path out = dir_.path() / "trace.json";
  expectRefusal(runCommand(ipusimBinary() + " export " + quote(profile_.string()) + " -o " + quote(out.string())),
                "clock_hz");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(DamagedProfile, NamesThatAreNotUtf8StillExport) {
  execSql(profile_, "UPDATE tracks SET name = CAST(X'49505520FF' AS TEXT) WHERE ipu = 0");
  const auto r = runCommand(ipusimBinary() + " export " + quote(profile_.string()) + " -o " +
                            quote((dir_.path() / "trace.json").string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::accept(readText(dir_.path() / "trace.json")));
}

// ---- limits checked up front --------------------------------------------

TEST(UpFrontLimits, WorkloadSizesNameTheKeyAndTheLimit) {
  ScratchDir dir("limits");
  const std::string run = ipusimBinary() + " run ";
  expectRefusal(runCommand(run + workloadWith(dir.path(), [](nlohmann::json& j) {
                  j["model"]["layers"][1]["units"] = 1000000;
                }) + " --synthetic-data"),
                "model.layers[1].units: 1000000");
  expectRefusal(runCommand(run + workloadWith(dir.path(), [](nlohmann::json& j) {
                  j["dataset"]["batch_size"] = 60001;
                })),
                "dataset.batch_size: 60001");
  expectRefusal(runCommand(run + workloadWith(dir.path(), [](nlohmann::json& j) {
                  j["dataset"]["batch_size"] = 4000000;
                }) + " --synthetic-data"),
                "dataset.batch_size");
  expectRefusal(runCommand(run + workloadWith(dir.path(), [](nlohmann::json& j) { j["seed"] = 1; }) +
                           " --synthetic-data --steps 10000000000000000"),
                "training.steps");
  std::ofstream(dir.path() / "overflow.json") << "{\"seed\": 1e400}";
  expectRefusal(runCommand(run + quote((dir.path() / "overflow.json").string())), "overflow.json");
}

TEST(UpFrontLimits, EngineOptionNumbersOutOfRangeNameTheSource) {
  // Found by fuzz_engine_options: a number too large for a double escaped as a library error.
  const auto r = runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --engine-options '444e4444'");
  expectRefusal(r, "--engine-options: malformed JSON: number overflow");
  const auto env = runCommand("POPLAR_ENGINE_OPTIONS='{\"autoReport.executionProfileProgramRunCount\": 1e999}' " +
                              ipusimBinary() + " run --graph " + quote(kGraph));
  expectRefusal(env, "POPLAR_ENGINE_OPTIONS: malformed JSON");
}

TEST(UpFrontLimits, TargetSizesNameTheParameter) {
  const std::string run = ipusimBinary() + " run " + quote(sourcePath("workloads/mnist_with_feeds.json")) +
                          " --synthetic-data --steps 10 ";
  expectRefusal(runCommand(run + "--ipus 1000"), "ipuLink.numIpus");
  expectRefusal(runCommand(run + "--tiles 100000"), "tile.tilesPerIpu");
  expectRefusal(runCommand(run + "--set tile.workerContexts=1000000"), "tile.workerContexts");
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(kGraph) + " --ipus 1000"), "ipuLink.numIpus");
}

TEST(UpFrontLimits, DatasetFilesThatAreNotFilesOrAreBombs) {
  ScratchDir dir("dataset");
  const std::string run = "timeout 60 " + ipusimBinary() + " run ";
  expectRefusal(runCommand(run + workloadWith(dir.path(), [](nlohmann::json& j) {
                  j["dataset"]["images"] = "/dev/zero";
                })),
                "/dev/zero");
  expectRefusal(runCommand(run + workloadWith(dir.path(), [&](nlohmann::json& j) {
                  j["dataset"]["images"] = dir.str();
                })),
                "is a directory");
  // A gzip bomb: a valid header for 10 images of 784 pixels, then 200 MB of zeros.
  const fs::path bomb = dir.path() / "bomb-idx3-ubyte.gz";
  const auto made = runCommand("(printf '\\000\\000\\010\\003\\000\\000\\000\\012\\000\\000\\000\\034\\000\\000\\000\\034';"
                               " head -c 200000000 /dev/zero) | gzip -1 > " + quote(bomb.string()));
  ASSERT_EQ(made.exitCode, 0) << made.output;
  expectRefusal(runCommand(run + workloadWith(dir.path(), [&](nlohmann::json& j) {
                  j["dataset"]["images"] = bomb.string();
                })),
                "bomb-idx3-ubyte.gz: has data after");
}

TEST(UpFrontLimits, WorkloadPathsThatAreNotFiles) {
  ScratchDir dir("workload-path");
  const fs::path fifo = dir.path() / "workload.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " run " + quote(fifo.string())), "is a FIFO");
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(dir.str())), "is a directory");
  expectRefusal(runCommand("timeout 20 " + ipusimBinary() + " run --graph " + quote(fifo.string())), "is a FIFO");
}

TEST(UpFrontLimits, DeeplyNestedProgramsAreRefusedNotACrash) {
  ScratchDir dir("nesting");
  nlohmann::json j = nlohmann::json::parse(readText(kGraph));
  auto& programs = j["programs"];
  const std::size_t first = programs.size();
  // 3000 Sequences, each holding the next; the entry point runs the outermost.
  for (std::size_t i = 0; i < 3000; ++i) {
    nlohmann::json p = {{"id", first + i}, {"kind", "Sequence"}, {"name", "nest"}, {"children", nlohmann::json::array()}};
    p["children"].push_back(i + 1 < 3000 ? first + i + 1 : j["entryPoints"][0]["program"].get<std::size_t>());
    programs.push_back(p);
  }
  j["entryPoints"][0]["program"] = first;
  const fs::path graph = dir.path() / "deep.json";
  std::ofstream(graph) << j.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph.string())), "nests programs");
}

// ---- bounded memory and interrupts --------------------------------------

std::int64_t residentKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

double cpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  return ticks / double(sysconf(_SC_CLK_TCK));
}

bool machineIsQuiet() {
  std::ifstream loadavg("/proc/loadavg");
  double oneMinute = 0;
  loadavg >> oneMinute;
  return oneMinute < double(sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(BoundedRun, AMillionIterationRepeatRunsInFlatMemoryAndStopsWithinASecondOfCtrlC) {
  if (kSanitizedBuild) GTEST_SKIP() << "wall-clock bounds do not hold under a sanitizer";
  ScratchDir dir("million");
  // /usr/bin/time reports the simulator's CPU time when it exits; its child is the simulator.
  std::ofstream(dir.path() / "run.sh") << "echo $$ >pid\nexec /usr/bin/time -f '%U %S' -o cpu.txt " << ipusimBinary()
                                       << " run --graph " << quote(graphWithRepeat(dir.path(), 1'000'000).string())
                                       << " >log.txt 2>&1\n";
  runCommand("cd " + quote(dir.str()) + " && sh run.sh >/dev/null 2>&1 &");
  for (int i = 0; i < 500 && readText(dir.path() / "pid").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string timePid = readText(dir.path() / "pid");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const pid_t pid = std::stoi(readText("/proc/" + timePid.substr(0, timePid.size() - 1) + "/task/" +
                                       timePid.substr(0, timePid.size() - 1) + "/children"));

  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  const std::int64_t early = residentKiB(pid);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const std::int64_t late = residentKiB(pid);
  ASSERT_GT(early, 0) << "the run ended early: " << readText(dir.path() / "log.txt");
  ASSERT_GT(late, 0) << "the run ended early: " << readText(dir.path() / "log.txt");
  // Flat: a few pages of allocator noise, not growth with the iterations.
  EXPECT_LT(late - early, 4 * 1024) << "resident memory grew from " << early << " to " << late << " KiB in 4 s";
  EXPECT_LT(late, 500 * 1024);

  const double cpuBefore = cpuSeconds(pid);
  const bool quiet = machineIsQuiet();
  kill(pid, SIGINT);
  const auto t0 = Clock::now();
  while (kill(pid, 0) == 0 && Clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  for (int i = 0; i < 200 && readText(dir.path() / "cpu.txt").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The last line is "user system" (a line before it may say the exit status).
  std::string cpu = readText(dir.path() / "cpu.txt"), lastLine;
  for (std::istringstream lines(cpu); std::getline(lines, cpu);)
    if (!cpu.empty()) lastLine = cpu;
  double user = 0, system = 0;
  std::istringstream(lastLine) >> user >> system;
  // The work from the signal to the exit: what a quiet machine's wall time is.
  EXPECT_LT(user + system - cpuBefore, 0.5) << "stopping took " << user + system - cpuBefore << " s of CPU";
  EXPECT_LT(wall, quiet ? 1.0 : 10.0) << "SIGINT did not stop the run in time (load average "
                                      << (quiet ? "below" : "above") << " the core count)";
  EXPECT_NE(readText(dir.path() / "log.txt").find("interrupted"), std::string::npos) << readText(dir.path() / "log.txt");
  if (kill(pid, 0) == 0) kill(pid, SIGKILL);  // never leave it running
}

// Whether `pid` catches SIGINT (bit 2 of SigCgt): ipusim installs its handler
// first thing in main(). Before that a background process ignores SIGINT, as
// the shell set it up, and a foreground one dies of it having written nothing.
bool catchesSigint(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  return false;
}

// Starts a profiled run of a long Repeat, waits until it handles SIGINT and
// then `wait`, sends `count` SIGINTs 20 ms apart, and returns its exit code
// and output. The run is killed if it is still there after 10 s.
CommandResult interruptProfiledRun(const ScratchDir& dir, int count, std::chrono::milliseconds wait) {
  const fs::path reports = dir.path() / "reports";
  const fs::path script = dir.path() / "run.sh";
  // The script records its pid and execs ipusim: that pid is the simulator's.
  std::ofstream(script) << "echo $$ >pid\n" << withReports(reports) << "exec " << ipusimBinary() << " run --graph "
                        << quote(graphWithRepeat(dir.path(), 1'000'000'000).string()) << " >log.txt 2>&1\n";
  runCommand("cd " + quote(dir.str()) + " && (sh run.sh; echo $? >status) >/dev/null 2>&1 &");
  for (int i = 0; i < 500 && readText(dir.path() / "pid").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const pid_t pid = std::stoi(readText(dir.path() / "pid"));
  for (int i = 0; i < 2000 && !catchesSigint(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(wait);
  for (int i = 0; i < count; ++i) {
    kill(pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < 500 && readText(dir.path() / "status").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (kill(pid, 0) == 0 && readText(dir.path() / "status").empty()) kill(pid, SIGKILL);  // never leave it running
  CommandResult r;
  r.output = readText(dir.path() / "log.txt");
  const std::string status = readText(dir.path() / "status");
  r.exitCode = status.empty() ? -1 : std::stoi(status);
  return r;
}

TEST(Interrupts, ASecondCtrlCSaysSoAndLeavesNoTemporaryProfile) {
  ScratchDir dir("second-sigint");
  const auto r = interruptProfiledRun(dir, 2, std::chrono::milliseconds(2000));
  EXPECT_GT(r.exitCode, 0) << r.output;
  EXPECT_LT(r.exitCode, 128) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  expectNoLitter(dir.path() / "reports");
}

TEST(Interrupts, CtrlCAtTheVeryStartStopsCleanly) {
  ScratchDir dir("early-sigint");
  const auto r = interruptProfiledRun(dir, 1, std::chrono::milliseconds(0));
  EXPECT_GT(r.exitCode, 0) << r.output;
  EXPECT_LT(r.exitCode, 128) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  expectNoLitter(dir.path() / "reports");
}

}  // namespace
}  // namespace ipusim::test::test_hardening
