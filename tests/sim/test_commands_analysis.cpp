// `ipusim report`, `ipusim compare`, `ipusim export`: exit codes, output and
// the CLI11 wiring, on profiles written in the test.
#include "sim/commands/analysis_commands.hpp"
#include "tests/profiler/test_analysis_profile.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace test_commands_analysis {

using namespace ipusim;

TEST(CommandsAnalysis, ReportJsonOfAKnownProfile) {
  const std::string path = testing_profiles::temporaryPath("cmd_report.pop");
  testing_profiles::writeKnownProfile(path);
  std::ostringstream out, err;
  sim::ReportArgs args;
  args.profile = path;
  args.json = true;
  ASSERT_EQ(sim::runReport(args, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["runs"]["steps"], 6);
  EXPECT_EQ(j["captured"]["cycles_by_phase"][0]["sync"], 100);
  EXPECT_EQ(err.str(), "");
}

TEST(CommandsAnalysis, ReportOfAReportDirectoryReadsItsProfilePop) {
  const std::string dir = testing_profiles::temporaryPath("report_dir");
  std::filesystem::create_directories(dir);
  testing_profiles::writeKnownProfile(dir + "/profile.pop");
  std::ostringstream out, err;
  sim::ReportArgs args;
  args.profile = dir;
  ASSERT_EQ(sim::runReport(args, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("Workload  known"), std::string::npos) << out.str();
}

TEST(CommandsAnalysis, MissingOrInvalidProfileFailsWithTheReadersMessage) {
  const std::string missing = testing_profiles::temporaryPath("missing.pop");
  const std::string garbage = testing_profiles::temporaryPath("garbage.pop");
  std::ofstream(garbage) << "this is not a database, not even close, but long enough to look like a header";
  for (const std::string& path : {missing, garbage}) {
    std::ostringstream out, err;
    sim::ReportArgs report;
    report.profile = path;
    EXPECT_EQ(sim::runReport(report, out, err), 1);
    EXPECT_NE(err.str().find(path), std::string::npos) << err.str();
    sim::CompareArgs compare;
    compare.profileA = path;
    compare.profileB = path;
    EXPECT_EQ(sim::runCompare(compare, out, err), 1);
    sim::ExportArgs exportArgs;
    exportArgs.profile = path;
    EXPECT_EQ(sim::runExport(exportArgs, out, err), 1);
    EXPECT_EQ(out.str(), "");
  }
}

TEST(CommandsAnalysis, CompareJsonThroughTheCli) {
  const std::string a = testing_profiles::temporaryPath("cmd_a.pop");
  const std::string b = testing_profiles::temporaryPath("cmd_b.pop");
  testing_profiles::writeKnownProfile(a);
  testing_profiles::writeFastProfile(b);
  CLI::App app("ipusim");
  int exitCode = -1;
  sim::addCompareCommand(app, exitCode);
  testing::internal::CaptureStdout();
  app.parse(std::vector<std::string>{"--json", b, a, "compare"});  // CLI11 takes args reversed
  const std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_EQ(exitCode, 0);
  const auto j = nlohmann::json::parse(printed);
  EXPECT_EQ(j["a"]["engine_runs"], 3);
  EXPECT_EQ(j["b"]["engine_runs"], 2);
  EXPECT_DOUBLE_EQ(j["a"]["simulated_seconds"].get<double>(), 3e-6);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
}

TEST(CommandsAnalysis, ExportWritesAFileThatParses) {
  const std::string path = testing_profiles::temporaryPath("cmd_export.pop");
  const std::string trace = testing_profiles::temporaryPath("trace.json");
  testing_profiles::writeKnownProfile(path);
  CLI::App app("ipusim");
  int exitCode = -1;
  sim::addExportCommand(app, exitCode);
  app.parse(std::vector<std::string>{trace, "-o", path, "export"});
  ASSERT_EQ(exitCode, 0);
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  int slices = 0;
  for (const auto& ev : j["traceEvents"]) slices += ev["ph"] == "X";
  EXPECT_EQ(slices, 25);
  // No temporary file left next to it.
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(trace).parent_path()))
    EXPECT_EQ(entry.path().string().find("trace.json.tmp"), std::string::npos) << entry.path();
}

// An output ending in .pftrace is Perfetto's protobuf trace: a Trace whose
// first field is a packet (field 1, length-delimited: byte 0x0A); --format
// overrides the extension.
TEST(CommandsAnalysis, ExportChoosesPerfettoByTheOutputsExtension) {
  const std::string path = testing_profiles::temporaryPath("cmd_export_pf.pop");
  testing_profiles::writeKnownProfile(path);
  sim::ExportArgs args;
  args.profile = path;
  args.output = testing_profiles::temporaryPath("trace.pftrace");
  EXPECT_TRUE(sim::exportsPerfetto(args));
  std::ostringstream out, err;
  ASSERT_EQ(sim::runExport(args, out, err), 0) << err.str();
  std::ifstream in(args.output, std::ios::binary);
  EXPECT_EQ(in.get(), 0x0A);
  EXPECT_NE(err.str().find("25 slices"), std::string::npos) << err.str();
  args.format = "json";
  EXPECT_FALSE(sim::exportsPerfetto(args));
  args.output = "-";
  args.format = "perfetto";
  EXPECT_TRUE(sim::exportsPerfetto(args));
}

// Adversarial pass 23: `-o T.PFTRACE` wrote Chrome JSON, and `-o t.json.gz`
// plain JSON under a compressed file's name.
TEST(CommandsAnalysis, ExportGoesByTheNameInAnyCaseAndRefusesACompressedName) {
  const std::string path = testing_profiles::temporaryPath("cmd_export_case.pop");
  testing_profiles::writeKnownProfile(path);
  sim::ExportArgs args;
  args.profile = path;
  args.output = testing_profiles::temporaryPath("trace.PFTRACE");
  EXPECT_TRUE(sim::exportsPerfetto(args));
  std::ostringstream out, err;
  args.force = true;
  ASSERT_EQ(sim::runExport(args, out, err), 0) << err.str();
  EXPECT_EQ(std::ifstream(args.output, std::ios::binary).get(), 0x0A);
  for (const char* name : {"trace.json.gz", "trace.pftrace.XZ", "trace.zst"}) {
    args.output = testing_profiles::temporaryPath(name);
    std::ostringstream refusedOut, refused;
    EXPECT_EQ(sim::runExport(args, refusedOut, refused), 1);
    EXPECT_NE(refused.str().find(args.output + ": the name says ."), std::string::npos) << refused.str();
    EXPECT_NE(refused.str().find("compression, but export writes the trace uncompressed: expected a name ending in "
                                 ".json, or .pftrace"),
              std::string::npos)
        << refused.str();
    EXPECT_FALSE(std::filesystem::exists(args.output));
  }
}

TEST(CommandsAnalysis, ExportToAnUnwritablePlaceNamesTheOutput) {
  const std::string path = testing_profiles::temporaryPath("cmd_export2.pop");
  testing_profiles::writeKnownProfile(path);
  std::ostringstream out, err;
  sim::ExportArgs args;
  args.profile = path;
  args.output = testing_profiles::temporaryPath("no_such_dir") + "/trace.json";
  EXPECT_EQ(sim::runExport(args, out, err), 1);
  EXPECT_NE(err.str().find(args.output + ": cannot create"), std::string::npos) << err.str();
}

}  // namespace test_commands_analysis
