#include "profiler/analysis/report.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "traces/profile_reader.hpp"

#include <memory>
#include <stdexcept>

namespace ipusim::sim {

int runReport(const ReportArgs& args, std::ostream& out, std::ostream& err) {
  try {
    const traces::ProfileReader reader(args.profile);
    profiler::analysis::ReportOptions options;
    options.fullestTiles = args.fullestTiles;
    const auto report = profiler::analysis::buildReport(reader, options);
    if (args.json) out << profiler::analysis::reportToJson(report).dump(2) << "\n";
    else profiler::analysis::printReport(report, out);
    return 0;
  } catch (const std::exception& e) {
    err << "ipusim report: " << e.what() << "\n";
    return 1;
  }
}

void addReportCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Summarise a profile: target, programs, runs, cycles by phase, tile memory, loss");
  cmd->add_option("profile", args->profile, "profile.pop, or a report directory holding one")->required();
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->add_option("--fullest-tiles", args->fullestTiles, "How many of the fullest tiles to list")
      ->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = runReport(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
