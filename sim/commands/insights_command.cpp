#include "profiler/analysis/insights.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/commands/profile_source.hpp"
#include "traces/profile_reader.hpp"

#include <memory>

namespace ipusim::sim {

int runInsights(const InsightsArgs& args, std::ostream& out, std::ostream& err) {
  try {
    const profiler::analysis::ProfileSource source = openProfileSource(args.profile);
    const traces::ProfileReader reader(source.path());
    auto facts = profiler::analysis::measureProfileFacts(reader);
    facts.report.target.path = source.named();
    const auto insights = profiler::analysis::findInsights(facts);
    if (args.json) out << profileJson(profiler::analysis::insightsToJson(insights, facts)) << "\n";
    else profiler::analysis::printInsights(insights, facts, out);
    return 0;
  } catch (const std::exception& e) {
    err << "ipusim insights: " << e.what() << "\n";
    return 1;
  }
}

void addInsightsCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<InsightsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "insights", "The bottleneck of a profile in plain words, the knob that moves it and the expected gain");
  cmd->add_option("profile", args->profile, kProfileArgumentHelp)->required();
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->callback([args, &exitCode] { exitCode = runInsights(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
