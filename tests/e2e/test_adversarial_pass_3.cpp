// Found by the third adversarial pass of issue 33 (acceptance 2), over the
// code added since the second: .npy token ids, attention and position
// embeddings. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include <signal.h>

namespace ipusim::test::test_adversarial_pass_3 {
namespace {

// The last line /usr/bin/time -f %M wrote: the peak RSS in KiB.
long long peakKib(const fs::path& timeOutput) {
  std::string kib;
  std::istringstream lines(readText(timeOutput));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) kib = line;
  return kib.empty() ? -1 : std::stoll(kib);
}

// A .npy header (version 1.0) announcing `shape` of `descr`, then `data`.
std::string npyFile(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header + data;
}

TEST(AdversarialPass3, ANpyHeaderAnnouncingGigabytesCostsOnlyWhatTheFileHolds) {
  if (runCommand("test -x /usr/bin/time").exitCode != 0) GTEST_SKIP() << "no /usr/bin/time";
  ScratchDir dir("npy-claim");
  // 2^29 ids of 4 bytes announced (2 GiB, within the bound), 64 bytes there:
  // the 2 GiB were allocated and zeroed before the file was found truncated.
  const fs::path claim = dir.path() / "claim.npy";
  std::ofstream(claim, std::ios::binary) << npyFile("<i4", "(4194304, 128)", std::string(64, '\0'));
  std::ofstream(dir.path() / "labels.npy", std::ios::binary) << npyFile("<i4", "(1,)", std::string(4, '\0'));
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("workloads/gpt_decoder_block.json")));
  j["model"]["keras"] = sourcePath("workloads/keras/gpt_decoder_block_keras3.json");  // (the workload is copied)
  j["dataset"] = {{"format", "npy"}, {"images", "claim.npy"}, {"labels", "labels.npy"}, {"batch_size", 8},
                  {"input_shape", {128}}, {"classes", 8192}};
  std::ofstream(dir.path() / "w.json") << j.dump();
  const fs::path rss = dir.path() / "rss.txt";
  const auto r = runCommand("/usr/bin/time -f %M -o " + quote(rss.string()) + " " + ipusimBinary() + " run " +
                            quote((dir.path() / "w.json").string()) + " --steps 10");
  expectRefusal(r, claim.string() + ": truncated: the header announces 2147483648 bytes of data, the file has 64");
  const long long kib = peakKib(rss);
  ASSERT_GT(kib, 0);
  EXPECT_LT(kib, 1024 * 1024) << "peak RSS " << kib << " KiB";
}

TEST(AdversarialPass3, NamesThatAreNotUtf8AreReplacedInEveryJsonOutput) {
  // Bytes that are no UTF-8 in names a profile holds (a blob, or text cut in
  // the middle of a character): report --json, --ops --json, --liveness
  // --json and compare --json failed with "[json.exception.type_error.316]
  // invalid UTF-8 byte", naming no file. `export` already replaced them.
  ScratchDir dir("names-not-utf8");
  const auto run = runCommand(withReports(dir.path()) + ipusimBinary() + " run " +
                              quote(sourcePath("workloads/mnist_with_feeds.json")) + " --steps 20 --synthetic-data");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const fs::path profile = dir.path() / "profile.pop";
  execSql(profile,
          "UPDATE programs SET kind = X'00ff', layer = X'ff', op = CAST(X'c3' AS TEXT) "
          "WHERE id = (SELECT min(id) FROM programs WHERE layer != ''); "
          "UPDATE tensors SET name = X'fe', layer = X'ff' WHERE id = (SELECT min(id) FROM tensors WHERE layer != ''); "
          "UPDATE meta SET value = X'ff' WHERE key = 'workload'");
  const std::string p = quote(profile.string());
  for (const std::string& command : {" report " + p + " --json", " report " + p + " --ops --json",
                                     " report " + p + " --liveness --json", " compare " + p + " " + p + " --json",
                                     " insights " + p + " --json"}) {
    SCOPED_TRACE(command);
    const auto r = runCommand(ipusimBinary() + command + " 2>&1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.output;
    if (command.find("insights") == std::string::npos) {  // (insights names none of them)
      EXPECT_NE(r.output.find("\xEF\xBF\xBD"), std::string::npos) << "U+FFFD in place of the bytes: " << r.output;
    }
  }
}

TEST(AdversarialPass3, TheSerializedGraphIsNeverWrittenThroughALink) {
  // autoReport.outputSerializedGraph wrote serialized_graph.json.tmp (a fixed
  // name) with an ofstream, which follows a symlink: the graph replaced the
  // linked file's contents, and the link was renamed onto the graph's name.
  ScratchDir dir("graph-temporary-link");
  const fs::path precious = dir.path() / "precious.txt", reports = dir.path() / "rep";
  std::ofstream(precious) << "precious\n";
  fs::create_directories(reports);
  fs::create_symlink(precious, reports / "serialized_graph.json.tmp");
  const auto r = runCommand(ipusimBinary() + " run " + quote(sourcePath("workloads/small_synthetic.json")) +
                            " --steps 8 --engine-options " +
                            quote("{\"autoReport.outputSerializedGraph\":\"true\",\"autoReport.directory\":\"" +
                                  reports.string() + "\"}"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(precious), "precious\n");
  EXPECT_FALSE(fs::is_symlink(reports / "serialized_graph.json"));
  const auto rerun = runCommand(ipusimBinary() + " run --graph " + quote((reports / "serialized_graph.json").string()));
  EXPECT_EQ(rerun.exitCode, 0) << rerun.output;
}

TEST(AdversarialPass3, ANameHoldingANulIsRefusedNotCutShort) {
  // "ids.npy\u0000x" in a workload read ids.npy (the name up to the NUL); an
  // autoReport.directory "rep\u0000x" created rep/ and failed saying only
  // "ipusim: error: rep" (the message cut at the NUL too).
  ScratchDir dir("nul-names");
  std::ofstream(dir.path() / "ids.npy", std::ios::binary) << npyFile("<i4", "(8, 128)", std::string(8 * 128 * 4, '\0'));
  std::ofstream(dir.path() / "labels.npy", std::ios::binary) << npyFile("<i4", "(8, 128)", std::string(8 * 128 * 4, '\0'));
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("workloads/gpt_decoder_block.json")));
  j["model"]["keras"] = sourcePath("workloads/keras/gpt_decoder_block_keras3.json");  // (the workload is copied)
  j["dataset"] = {{"format", "npy"}, {"images", std::string("ids.npy\0x", 9)}, {"labels", "labels.npy"},
                  {"batch_size", 8}, {"input_shape", {128}}, {"classes", 8192}};
  const fs::path workload = dir.path() / "w.json";
  std::ofstream(workload) << j.dump();
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(workload.string()) + " --steps 10"),
                "w.json: dataset.images: " + (dir.path() / "ids.npy").string() +
                    "\\u0000x: a dataset file name holding a NUL character");
  const fs::path reports = dir.path() / "rep";
  const auto r = runCommand(ipusimBinary() + " run " + quote(sourcePath("workloads/small_synthetic.json")) +
                            " --steps 8 --engine-options " +
                            quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + reports.string() +
                                  "\\u0000x\"}"));
  expectRefusal(r, "option 'autoReport.directory' holds a NUL character");
  EXPECT_FALSE(fs::exists(reports));
}

bool processAlive(pid_t pid) {
  // A zombie is dead: it only waits for its parent to read its status.
  const std::string stat = readText("/proc/" + std::to_string(pid) + "/stat");
  return !stat.empty() && stat.find(") Z ") == std::string::npos;
}

TEST(AdversarialPass3, AnInterruptedSweepEndsItsPlotBeforeRemovingThePlotsFile) {
  // gnuplot ran in the sweep's process group, unknown to its interrupt
  // handler: after a SIGINT it went on and drew sw/sweep.png.tmp-<pid>,
  // which the handler had already removed; and the sweep said "nothing
  // written" with sweep.csv and sweep.json already there. A stand-in gnuplot that takes its
  // time, records its pid, and then draws into the file its script names.
  ScratchDir dir("sweep-plot-interrupt");
  const fs::path bin = dir.path() / "bin", out = dir.path() / "sw", started = dir.path() / "gnuplot.pid";
  fs::create_directories(bin);
  std::ofstream(bin / "gnuplot") << "#!/bin/sh\necho $$ > " << quote(started.string())
                                 << "\nsleep 3\nsed -n \"s/^set output '\\(.*\\)'\\$/\\1/p\" \"$1\" | "
                                    "while read -r png; do echo drawn > \"$png\"; done\n";
  fs::permissions(bin / "gnuplot", fs::perms::owner_all);
  const auto launched = runCommand("(PATH=" + quote(bin.string()) + ":$PATH exec " + ipusimBinary() + " sweep " +
                                   quote(sourcePath("workloads/small_synthetic.json")) +
                                   " --vary tiles=16 --synthetic-data --steps 8 -o " + quote(out.string()) + ") >" +
                                   quote((dir.path() / "log").string()) + " 2>&1 & echo $!");
  const pid_t sweep = std::stoi(launched.output);
  for (int i = 0; i < 600 * kSlowdown && readText(started).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string gnuplotPid = readText(started);
  ASSERT_FALSE(gnuplotPid.empty()) << readText(dir.path() / "log");
  const pid_t gnuplot = std::stoi(gnuplotPid);
  kill(sweep, SIGINT);
  for (int i = 0; i < 400 * kSlowdown && processAlive(sweep); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(processAlive(sweep));
  const bool plotOutlivedTheSweep = processAlive(gnuplot);
  if (plotOutlivedTheSweep) {  // let it finish drawing, as it did, then look
    for (int i = 0; i < 200 * kSlowdown && processAlive(gnuplot); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(plotOutlivedTheSweep) << readText(dir.path() / "log");
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().filename().string().find("sweep.png.tmp-"), std::string::npos) << entry.path();
  EXPECT_FALSE(fs::exists(out / "sweep.png"));
  // None of the three, as the sweep says: sweep.csv and sweep.json were written before the plot.
  EXPECT_NE(readText(dir.path() / "log").find("no sweep.csv, sweep.json or sweep.png written"), std::string::npos)
      << readText(dir.path() / "log");
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  EXPECT_FALSE(fs::exists(out / "sweep.json"));
}

TEST(AdversarialPass3, AClosedTerminalLeavesNoTemporaryProfile) {
  // SIGHUP (the terminal a run was started from closed) was not handled:
  // the run died of it and left reports/profile.pop.tmp-<pid>.
  ScratchDir dir("sighup-run");
  const fs::path reports = dir.path() / "reports";
  const auto launched = runCommand("(" + withReports(reports) + "exec " + ipusimBinary() + " run " +
                                   quote(sourcePath("workloads/small_synthetic.json")) +
                                   " --synthetic-data --steps 400000000) >" + quote((dir.path() / "log").string()) +
                                   " 2>&1 & echo $!");
  const pid_t run = std::stoi(launched.output);
  auto writing = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(reports, ec))
      if (e.path().filename().string().find("profile.pop.tmp-") == 0) return true;
    return false;
  };
  for (int i = 0; i < 400 * kSlowdown && !writing(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(writing()) << readText(dir.path() / "log");
  kill(run, SIGHUP);
  for (int i = 0; i < 200 * kSlowdown && processAlive(run); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool stopped = !processAlive(run);
  if (!stopped) kill(run, SIGKILL);  // never leave it running
  ASSERT_TRUE(stopped) << readText(dir.path() / "log");
  // "interrupted after N of M steps; no profile written" when the signal came during the steps
  // (the run stops at its next step), "hung up (SIGHUP); nothing written" when it came while the
  // run was still setting up after opening its temporary profile (a slow or sanitized machine).
  const std::string log = readText(dir.path() / "log");
  EXPECT_TRUE(log.find("no profile written") != std::string::npos ||
              log.find("hung up (SIGHUP); nothing written") != std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(reports / "profile.pop"));
  expectNoLitter(reports);
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_3
