#pragma once
// The `ipusim` subcommands. Each adds itself to the CLI11 app; the callback
// it installs sets the process exit code through `exitCode`.
#include <CLI/CLI.hpp>

namespace ipusim::sim {

void addRunCommand(CLI::App& app, int& exitCode);
void addCompileCommand(CLI::App& app, int& exitCode);
void addParamsCommand(CLI::App& app, int& exitCode);
void addOptionsCommand(CLI::App& app, int& exitCode);
void addExampleGraphCommand(CLI::App& app, int& exitCode);
void addDemoCommand(CLI::App& app, int& exitCode);
void addSweepCommand(CLI::App& app, int& exitCode);

}  // namespace ipusim::sim
