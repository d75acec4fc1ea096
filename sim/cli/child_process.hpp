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
// `path` as an argument of a child: "./" before a relative path starting
// with '-', which the child's parser (CLI11, gnuplot) would take for an
// option ("-o -x": gnuplot read "-x/points/plot.gp" as one, drew nothing
// and exited 0); any other path as it is.
std::string pathArgument(const std::string& path);
// Runs `argv` (argv[0] is the program path) with `env` added to the
// environment; returns its exit status (128+signal if killed).
int runChild(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// Starts `argv` without waiting, its stdout and stderr written to the given
// files (created or truncated; an empty path: ours), `env` added to its
// environment and the variables named in `unset` taken out of it. With
// `processGroup` 0 the child leads a new process group, with a positive id it
// joins that group (which must still have a member), with -1 it stays in
// ours. It starts with no signal blocked. Returns its process id. Throws
// std::runtime_error naming the program when it cannot be started.
int startChild(const std::vector<std::string>& argv, const std::string& stdoutPath, const std::string& stderrPath,
               const std::map<std::string, std::string>& env = {}, int processGroup = -1,
               const std::vector<std::string>& unset = {});
// Waits for any started child to end; returns its id and sets `status` as
// runChild() returns it. Returns -1 when there is no child left; with
// `block` false, 0 at once when no child has ended yet.
int waitForAnyChild(int& status, bool block = true);

}  // namespace ipusim::sim
