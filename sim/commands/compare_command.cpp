#include "profiler/analysis/compare.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/commands/profile_source.hpp"
#include "traces/profile_reader.hpp"

#include <memory>
#include <stdexcept>

namespace ipusim::sim {

int runCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  try {
    const profiler::analysis::ProfileSource sourceA = openProfileSource(args.profileA);
    const profiler::analysis::ProfileSource sourceB = openProfileSource(args.profileB);
    const traces::ProfileReader a(sourceA.path());
    const traces::ProfileReader b(sourceB.path());
    auto comparison = profiler::analysis::compareProfiles(a, b);
    comparison.a.target.path = sourceA.named();
    comparison.b.target.path = sourceB.named();
    if (args.json) out << profileJson(profiler::analysis::comparisonToJson(comparison)) << "\n";
    else profiler::analysis::printComparison(comparison, out);
    return 0;
  } catch (const std::exception& e) {
    err << "ipusim compare: " << e.what() << "\n";
    return 1;
  }
}

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two profiles: simulated time, runs, steps, throughput, phases, overlap");
  cmd->add_option("a", args->profileA, std::string("The baseline: ") + kProfileArgumentHelp)->required();
  cmd->add_option("b", args->profileB, "The profile compared with it; speedup is B over A")->required();
  cmd->add_flag("--json", args->json, "Print one JSON object {\"a\", \"b\", \"speedup\"}");
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
