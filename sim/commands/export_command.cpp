#include "profiler/analysis/chrome_trace.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "traces/profile_reader.hpp"

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <unistd.h>

namespace ipusim::sim {

int runExport(const ExportArgs& args, std::ostream& out, std::ostream& err) {
  std::string temporary;
  try {
    const traces::ProfileReader reader(args.profile);
    if (args.output == "-") {
      profiler::analysis::writeChromeTrace(reader, out);
      return out ? 0 : (err << "ipusim export: writing to standard output failed\n", 1);
    }
    // Like the profile itself: a trace on disk is complete or absent.
    temporary = args.output + ".tmp-" + std::to_string(::getpid());
    std::ofstream file(temporary, std::ios::binary);
    if (!file) throw std::runtime_error(args.output + ": cannot create the output file");
    const auto stats = profiler::analysis::writeChromeTrace(reader, file);
    file.close();
    if (!file) throw std::runtime_error(args.output + ": writing the trace failed (disk full?)");
    if (std::rename(temporary.c_str(), args.output.c_str()) != 0)
      throw std::runtime_error(args.output + ": cannot rename the finished trace onto it");
    err << "ipusim export: wrote " << stats.slices << " slices and " << stats.counterSamples
        << " counter samples of " << stats.tracks << " tracks to " << args.output << "\n";
    return 0;
  } catch (const std::exception& e) {
    if (!temporary.empty()) std::remove(temporary.c_str());
    err << "ipusim export: " << e.what() << "\n";
    return 1;
  }
}

void addExportCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Export a profile as Chrome Trace Event JSON (opens in Perfetto UI, chrome://tracing)");
  cmd->add_option("profile", args->profile, "profile.pop, or a report directory holding one")->required();
  cmd->add_option("-o,--output", args->output, "Output file, or - for standard output")
      ->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = runExport(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
