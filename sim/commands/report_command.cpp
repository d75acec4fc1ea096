#include "profiler/analysis/liveness_summary.hpp"
#include "profiler/analysis/operations_summary.hpp"
#include "profiler/analysis/report.hpp"
#include "sim/cli/whole_number_option.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/commands/profile_source.hpp"
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

namespace ipusim::sim {

namespace analysis = profiler::analysis;

int runReport(const ReportArgs& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.operations && args.liveness) throw std::invalid_argument("--ops and --liveness are two reports: give one");
    const auto sort = analysis::parseOperationSort(args.sort);
    const analysis::ProfileSource source = openProfileSource(args.profile);
    const traces::ProfileReader reader(source.path());
    if (args.operations) {
      auto ops = analysis::summarizeOperations(reader);
      ops.target.path = source.named();
      analysis::sortOperations(ops, sort);
      if (args.json) out << profileJson(analysis::operationsToJson(ops)) << "\n";
      else analysis::printOperations(ops, out);
      return 0;
    }
    if (args.liveness) {
      auto liveness = analysis::summarizeLiveness(reader);
      liveness.profile = source.named();
      if (args.json) out << profileJson(analysis::livenessToJson(liveness)) << "\n";
      else analysis::printLiveness(liveness, out, args.livenessSteps);
      return 0;
    }
    analysis::ReportOptions options;
    options.fullestTiles = args.fullestTiles;
    auto report = analysis::buildReport(reader, options);
    report.target.path = source.named();
    if (args.json) out << profileJson(analysis::reportToJson(report)) << "\n";
    else analysis::printReport(report, out);
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
  cmd->add_option("profile", args->profile, kProfileArgumentHelp)->required();
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  // (Counts checked as run's are: "-1" was taken as 2^64 - 1, "abc" was
  // "Could not convert" without saying what was expected.)
  const std::uint64_t most = std::numeric_limits<std::size_t>::max();
  cmd->add_option("--fullest-tiles", args->fullestTiles, "How many of the fullest tiles to list")
      ->capture_default_str()
      ->check(wholeNumberFrom(0, most));
  cmd->add_flag("--ops", args->operations,
                "The operations summary: per workload layer/op, cycles (compute, exchange, sync) per step, share, "
                "FLOPs, FLOP/s against the AMP peak, tiles, memory");
  cmd->add_option("--sort", args->sort, "With --ops: order rows by cycles, flops, memory or name")
      ->capture_default_str();
  cmd->add_flag("--liveness", args->liveness,
                "The liveness report: per program step, always-live and not-always-live bytes; the peak and "
                "what is live there");
  cmd->add_option("--liveness-steps", args->livenessSteps,
                  "With --liveness (text): at most this many steps listed, the peak always (0: all)")
      ->capture_default_str()
      ->check(wholeNumberFrom(0, most));
  cmd->callback([args, &exitCode] { exitCode = runReport(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
