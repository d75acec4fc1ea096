#pragma once
// Runs another ipusim (or ipusim-view) process and waits for it. SystemC
// elaborates once per process, so commands that run several simulations run
// each in a child.
#include <map>
#include <string>
#include <vector>

namespace ipusim::sim {

// The path of the running executable (for re-invoking ourselves).
std::string selfExecutable();
// Runs `argv` (argv[0] is the program path) with `env` added to the
// environment; returns its exit status (128+signal if killed).
int runChild(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

}  // namespace ipusim::sim
