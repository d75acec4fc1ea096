#include "sim/commands/analysis_commands.hpp"
#include "sim/commands/profile_source.hpp"
#include "traces/output_file.hpp"

#include <filesystem>
#include <memory>
#include <stdexcept>

namespace ipusim::sim {

int runCombine(const CombineArgs& args, std::ostream& out, std::ostream& err) {
  try {
    const auto profiles = profiler::analysis::findInstanceProfiles(args.directory);
    if (!profiles)
      throw std::invalid_argument(args.directory + ": expected the report directory of an mpirun run, holding " +
                                  "profile.rank0.pop, profile.rank1.pop, ... and no profile.pop");
    // Not the directory's profile.pop: readers would take it for the directory's profile, also after a later run's
    // ranks wrote theirs beside it.
    std::error_code ec;
    if (std::filesystem::equivalent(std::filesystem::path(args.output).parent_path().empty()
                                        ? std::filesystem::path(".")
                                        : std::filesystem::path(args.output).parent_path(),
                                    args.directory, ec) &&
        std::filesystem::path(args.output).filename() == "profile.pop")
      throw std::invalid_argument(args.output + ": the directory's own profile.pop would be read in place of its " +
                                  "ranks' profiles, also those of a later run: expected another name");
    // Checked before anything is read: never onto an input, a device, a FIFO or an existing file without --force.
    traces::OutputPolicy policy{args.force, *profiles};
    policy.inputs.push_back(args.directory);
    traces::checkOutputPath(args.output, policy);
    profiler::analysis::combineInstanceProfiles(*profiles, args.output, combineProgressBar());
    out << "ipusim combine: wrote " << args.output << ": the " << profiles->size() << " instance profiles of "
        << args.directory << " as one system\n";
    return 0;
  } catch (const std::exception& e) {
    err << "ipusim combine: " << e.what() << "\n";
    return 1;
  }
}

void addCombineCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CombineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "combine", "Write the profiles of an mpirun run (profile.rankK.pop, each a rank's IPUs) as one profile of the "
                 "whole system, as report, insights, compare, export and the viewer read their directory");
  cmd->add_option("directory", args->directory, "The run's report directory (autoReport.directory)")->required();
  cmd->add_option("-o,--output", args->output, "The profile to write (not DIR/profile.pop: readers take that for DIR's)")
      ->required();
  cmd->add_flag("--force", args->force, "Replace the output file if it exists (never an input, a device or a FIFO)");
  cmd->callback([args, &exitCode] { exitCode = runCombine(*args, std::cout, std::cerr); });
}

}  // namespace ipusim::sim
