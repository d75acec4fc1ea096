#pragma once
// The profile analysis subcommands: `ipusim report`, `ipusim insights`,
// `ipusim compare`, `ipusim export` and `ipusim combine`. Each run* function does the work and returns the process
// exit code (0, or 1 with a message on `err` naming the file and the
// problem); each add*Command adds the subcommand to the CLI11 app, as the
// other `ipusim` commands do (sim/cli/commands.hpp): its callback sets
// `exitCode`.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <ostream>
#include <string>

namespace ipusim::sim {

// What the commands take for a profile (profiler/analysis/instance_profiles.hpp reads the third).
inline constexpr const char* kProfileArgumentHelp =
    "profile.pop, a report directory holding one, or the directory of an mpirun run's profiles (profile.rankK.pop, "
    "read as one system)";

struct ReportArgs {
  std::string profile;            // profile.pop or a report directory
  bool json = false;
  std::size_t fullestTiles = 5;
  bool operations = false;        // --ops: the operations summary instead of the report
  std::string sort = "cycles";    // --sort for --ops
  bool liveness = false;          // --liveness: the liveness report instead
  std::size_t livenessSteps = 40; // steps listed in the text liveness report (0: all)
};
int runReport(const ReportArgs& args, std::ostream& out, std::ostream& err);
void addReportCommand(CLI::App& app, int& exitCode);

struct InsightsArgs {
  std::string profile;
  bool json = false;
};
int runInsights(const InsightsArgs& args, std::ostream& out, std::ostream& err);
void addInsightsCommand(CLI::App& app, int& exitCode);

struct CompareArgs {
  std::string profileA, profileB;
  bool json = false;
};
int runCompare(const CompareArgs& args, std::ostream& out, std::ostream& err);
void addCompareCommand(CLI::App& app, int& exitCode);

struct ExportArgs {
  std::string profile;
  std::string output = "-";       // a file, or "-" for stdout
  bool force = false;             // replace an existing output file (traces/output_file.hpp)
  std::string format = "auto";    // "auto" (.pftrace: Perfetto, else JSON), "json" or "perfetto"
};
// Whether `args` asks for Perfetto's protobuf trace rather than Chrome JSON
// (--format, else an output ending in .pftrace, in any case).
bool exportsPerfetto(const ExportArgs& args);
// Throws std::invalid_argument for an output named as a compressed file
// (.gz, .bz2, .xz, .zst, .zip, .lz4, .br): export writes none.
void checkExportName(const std::string& output);
// Writes the Chrome or Perfetto trace to `out` when args.output is "-"; otherwise to the
// file (written under a temporary name and renamed when complete; never an
// input, a device, a FIFO, or an existing file without args.force).
int runExport(const ExportArgs& args, std::ostream& out, std::ostream& err);
void addExportCommand(CLI::App& app, int& exitCode);

struct CombineArgs {
  std::string directory;  // an mpirun run's report directory (profile.rankK.pop)
  std::string output;     // the profile to write
  bool force = false;     // replace an existing output file (traces/output_file.hpp)
};
// Writes the directory's instance profiles as one profile of the whole system
// (profiler/analysis/instance_profiles.hpp), what `report DIR` reads, once
// for every later reader (the Python reader among them).
int runCombine(const CombineArgs& args, std::ostream& out, std::ostream& err);
void addCombineCommand(CLI::App& app, int& exitCode);

}  // namespace ipusim::sim
