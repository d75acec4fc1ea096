#pragma once
// The `ipusim` subcommands. Each adds itself to the CLI11 app; the callback
// it installs sets the process exit code through `exitCode`.
#include "scheduler/models/workload.hpp"
#include "sim/cli/whole_number_option.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace ipusim::sim {

// An option naming a file to write: given, it must not be empty (a script's
// unset variable would otherwise mean "no output" without a word).
inline CLI::Validator nonEmptyFileName() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("an empty file name") : std::string(); },
                        "FILE");
}

// An output file: not empty, and not "-", which `export` reads as standard
// output; these commands write their summary there, so "-" became a file named "-".
inline CLI::Validator outputFileName() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return std::string("an empty file name");
        if (text == "-") return std::string("'-' (standard output carries this command's summary): expected a file name");
        return std::string();
      },
      "FILE");
}

void addRunCommand(CLI::App& app, int& exitCode);
// `ipusim evaluate` and `ipusim predict`: a workload run with its task set.
void addTaskCommand(CLI::App& app, int& exitCode, scheduler::Task task);
void addCompileCommand(CLI::App& app, int& exitCode);
void addParamsCommand(CLI::App& app, int& exitCode);
void addOptionsCommand(CLI::App& app, int& exitCode);
void addExampleGraphCommand(CLI::App& app, int& exitCode);
void addDemoCommand(CLI::App& app, int& exitCode);
void addSweepCommand(CLI::App& app, int& exitCode);

}  // namespace ipusim::sim
