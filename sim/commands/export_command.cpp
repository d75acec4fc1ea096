#include "profiler/analysis/chrome_trace.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "traces/output_file.hpp"
#include "traces/profile_reader.hpp"

#include <memory>
#include <stdexcept>

namespace ipusim::sim {

int runExport(const ExportArgs& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.output == "-") {
      const traces::ProfileReader reader(args.profile);
      profiler::analysis::writeChromeTrace(reader, out);
      out.flush();
      return out ? 0 : (err << "ipusim export: writing to standard output failed\n", 1);
    }
    // Checked before the profile is read: a refused output costs nothing.
    traces::OutputFile file(args.output, {args.force, {args.profile}});
    const traces::ProfileReader reader(args.profile);
    const auto stats = profiler::analysis::writeChromeTrace(reader, file.stream());
    file.commit();
    err << "ipusim export: wrote " << stats.slices << " slices and " << stats.counterSamples
        << " counter samples of " << stats.tracks << " tracks to " << args.output << "\n";
    return 0;
  } catch (const std::exception& e) {
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
  cmd->add_flag("--force", args->force, "Replace the output file if it exists (never an input, a device or a FIFO)");
  cmd->callback([args, &exitCode] { exitCode = runExport(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
