#pragma once
// The `ipusim` subcommands. Each adds itself to the CLI11 app; the callback
// it installs sets the process exit code through `exitCode`.
#include "scheduler/models/workload.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace ipusim::sim {

// The check of a count option (--steps, -j, --repeats, --threads): a whole
// number from `min` to `max`, said in those words (CLI11's PositiveNumber
// says "Value 0 not in range 0.000000 to 1797693134862315...", and a number
// too large for the type "Could not convert").
inline CLI::Validator wholeNumberFrom(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (digits && errno != ERANGE && value >= min && value <= max) return "";
        return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + text + "'";
      },
      "NUMBER>=" + std::to_string(min));
}
inline CLI::Validator wholeNumberAtLeastOne(std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  return wholeNumberFrom(1, max);
}

// An option naming a file to write: given, it must not be empty (a script's
// unset variable would otherwise mean "no output" without a word).
inline CLI::Validator nonEmptyFileName() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("an empty file name") : std::string(); },
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
