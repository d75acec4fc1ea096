#include "model/util/text.hpp"
#include "profiler/analysis/chrome_trace.hpp"
#include "profiler/analysis/perfetto_trace.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "sim/commands/profile_source.hpp"
#include "traces/output_file.hpp"
#include "traces/profile_reader.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace ipusim::sim {

namespace {

struct Written {
  std::int64_t slices = 0, instants = 0, counterSamples = 0, tracks = 0;
};

Written writeTrace(const traces::ProfileReader& reader, bool perfetto, std::ostream& out) {
  if (perfetto) {
    const auto s = profiler::analysis::writePerfettoTrace(reader, out);
    return {s.slices, s.instants, s.counterSamples, s.tracks};
  }
  const auto s = profiler::analysis::writeChromeTrace(reader, out);
  return {s.slices, s.instants, s.counterSamples, s.tracks};
}

// The output's name in lower case: `-o T.PFTRACE` wrote Chrome JSON.
std::string lowerCase(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

bool exportsPerfetto(const ExportArgs& args) {
  if (args.format == "perfetto") return true;
  if (args.format == "json") return false;
  return util::endsWith(lowerCase(args.output), ".pftrace");
}

void checkExportName(const std::string& output) {
  // `-o trace.json.gz` wrote plain JSON under a compressed file's name: a
  // reader that goes by the name (Perfetto UI, Chrome DevTools) fails to unpack it.
  const std::string name = lowerCase(output);
  for (const char* compressed : {".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4", ".br"})
    if (util::endsWith(name, compressed))
      throw std::invalid_argument(output + ": the name says " + compressed + " compression, but export writes the "
                                  "trace uncompressed: expected a name ending in .json, or .pftrace for Perfetto's "
                                  "protobuf trace (compress the file afterwards)");
}

int runExport(const ExportArgs& args, std::ostream& out, std::ostream& err) {
  try {
    checkExportName(args.output);
    if (args.output == "-") {
      const profiler::analysis::ProfileSource source = openProfileSource(args.profile);
      const traces::ProfileReader reader(source.path());
      errno = 0;
      writeTrace(reader, exportsPerfetto(args), out);
      out.flush();
      if (out) return 0;
      err << "ipusim export: cannot write the trace to standard output"
          << (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()) << "\n";
      return 1;
    }
    // Checked before the profile is read: a refused output costs nothing.
    traces::OutputFile file(args.output, {args.force, {args.profile}});
    const profiler::analysis::ProfileSource source = openProfileSource(args.profile);
    const traces::ProfileReader reader(source.path());
    const auto stats = writeTrace(reader, exportsPerfetto(args), file.stream());
    file.commit();
    err << "ipusim export: wrote " << stats.slices << " slices, " << stats.instants << " instants and "
        << stats.counterSamples
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
      "export",
      "Export a profile as Chrome Trace Event JSON (Perfetto UI, Chrome DevTools, speedscope) or, for an output "
      "ending in .pftrace (in any case), as Perfetto's protobuf trace; written uncompressed");
  cmd->add_option("profile", args->profile, kProfileArgumentHelp)->required();
  cmd->add_option("-o,--output", args->output, "Output file, or - for standard output")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "auto (by the output's extension: .pftrace is Perfetto), json or perfetto")
      ->check(CLI::IsMember({"auto", "json", "perfetto"}))
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace the output file if it exists (never an input, a device or a FIFO)");
  cmd->callback([args, &exitCode] { exitCode = runExport(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
