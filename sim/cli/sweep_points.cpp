#include "sim/cli/sweep_points.hpp"

#include "model/util/json_error_text.hpp"

#include "sim/cli/child_process.hpp"
#include "sim/cli/workload_overrides.hpp"
#include "sim/cluster/launch.hpp"
#include "sim/host/interrupt.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::sim {

namespace {

std::string readPointFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The child's last line that says something (CLI11 ends its errors with a
// "Run with --help" line, which does not).
std::string lastErrorLine(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("Run with --help", 0) != 0) last = line;
  return last;
}

// The environment of point i's child: it ends with the sweep, and when the
// engine options write reports, it writes them into points/i/ (not all into
// one autoReport.directory, where they would collide).
std::map<std::string, std::string> pointEnvironment(const EngineOptions& options, const fs::path& pointsDir,
                                                    std::size_t i, const SweepPoint& point) {
  std::map<std::string, std::string> env = {{kParentProcessVariable, std::to_string(::getpid())}};
  // The child's errors name the --vary values the user gave, not the
  // --workload-set they became.
  env[kWorkloadSetsFromVariable] = point.workloadSetsFrom;
  if (options.writesProfile() || options.outputSerializedGraph) {
    nlohmann::json own = options.toJson();  // every option, so that this wins as a whole
    own["autoReport.directory"] = (pointsDir / std::to_string(i)).string();
    env["POPLAR_ENGINE_OPTIONS"] = own.dump();
  }
  return env;
}

}  // namespace

PointRunner::PointRunner(const SweepPlan& plan, const EngineOptions& options, fs::path pointsDir)
    : plan_(plan),
      options_(options),
      pointsDir_(std::move(pointsDir)),
      self_(selfExecutable()),
      launcherVariables_(cluster::launcherVariables()) {}

void PointRunner::start(std::size_t i) {
  if (i >= plan_.points.size())
    throw std::runtime_error("sweep: point " + std::to_string(i) + " is not one of the " +
                             std::to_string(plan_.points.size()) + " points");
  std::vector<std::string> argv = {self_, "run", pathArgument(plan_.workload), "--json"};
  argv.insert(argv.end(), plan_.commonArgs.begin(), plan_.commonArgs.end());
  argv.insert(argv.end(), plan_.points[i].runArgs.begin(), plan_.points[i].runArgs.end());
  const InterruptsHeld held;
  const int pid = startChild(argv, (pointsDir_ / (std::to_string(i) + ".json")).string(),
                             (pointsDir_ / (std::to_string(i) + ".log")).string(),
                             pointEnvironment(options_, pointsDir_, i, plan_.points[i]), group_, launcherVariables_);
  if (group_ == 0) endProcessGroupOnInterrupt(group_ = pid);
  running_[pid] = i;
}

std::optional<FinishedPoint> PointRunner::finish(bool block) {
  while (!running_.empty()) {
    int status = 0;
    const int pid = waitForAnyChild(status, block);
    if (pid == 0) return std::nullopt;  // none has ended yet
    const auto it = running_.find(pid);
    if (it == running_.end()) {
      if (pid < 0) throw std::runtime_error("sweep: lost track of its child processes");
      continue;  // not one of ours
    }
    FinishedPoint finished;
    finished.index = it->second;
    finished.status = status;
    running_.erase(it);
    if (running_.empty()) {  // the group ends with its last member: the next child starts a new one
      const InterruptsHeld held;
      endProcessGroupOnInterrupt(group_ = 0);
    }
    const fs::path base = pointsDir_ / std::to_string(finished.index);
    if (status == 0)
      finished.summary = readPointFile(base.string() + ".json");
    else
      finished.errorLine = lastErrorLine(readPointFile(base.string() + ".log"));
    return finished;
  }
  return std::nullopt;
}

SweepResult collectPoint(const SweepPlan& plan, const FinishedPoint& finished) {
  SweepResult r;
  const SweepPoint& point = plan.points.at(finished.index);
  r.point = point;
  r.exitCode = finished.status;
  if (finished.status != 0) {
    r.error = finished.errorLine;
    if (r.error.empty()) r.error = "exit status " + std::to_string(finished.status);
    // A run flag's refusal names the flag a --vary name became ("--tiles:
    // ... got '0'" for --vary tiles=0, a flag the user never typed): it
    // names the --vary value, and the flag after it.
    for (std::size_t a = 0; a < plan.axes.size() && a < point.values.size(); ++a) {
      const std::string& flag = plan.axes[a].resolved;
      if (flag.rfind("--", 0) == 0 && flag.find(' ') == std::string::npos && flag != "--set" &&
          flag != plan.axes[a].name && r.error.rfind(flag + ": ", 0) == 0)
        r.error = "--vary " + plan.axes[a].name + "=" + util::oneLineText(point.values[a]) + " (" + flag + "): " +
                  r.error.substr(flag.size() + 2);
    }
    return r;
  }
  try {
    readRunSummary(nlohmann::json::parse(finished.summary), r);
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = std::string("unreadable run summary: ") + e.what();
  }
  return r;
}

void sayPointFailed(std::FILE* out, const ProgressBar& progress, const SweepResult& r, const std::string& where) {
  const std::string line = std::string(progress.enabled() ? "\r\033[K" : "") + "sweep: point " +
                           std::to_string(r.point.index) + " (" + r.point.label() + ")" + where +
                           " failed: " + r.error + "\n";
  std::fputs(line.c_str(), out);
  std::fflush(out);
}

std::vector<SweepResult> runPointsHere(const SweepPlan& plan, PointRunner& runner, unsigned jobs) {
  std::vector<SweepResult> results(plan.points.size());
  std::size_t next = 0, done = 0, failed = 0;
  ProgressBar progress("sweep " + fs::path(plan.workload).stem().string(), plan.points.size());
  while (done < plan.points.size()) {
    while (next < plan.points.size() && runner.running() < jobs) runner.start(next++);
    progress.update(done, std::to_string(runner.running()) + " running" +
                              (failed ? ", " + std::to_string(failed) + " failed" : std::string()));
    const auto finished = runner.finish(/*block=*/true);
    if (!finished) throw std::runtime_error("sweep: lost track of its child processes");
    SweepResult& r = results[finished->index] = collectPoint(plan, *finished);
    if (!r.ok) {
      ++failed;
      sayPointFailed(stderr, progress, r, "");
    }
    ++done;
  }
  progress.update(done, std::to_string(failed) + " failed");
  return results;
}

}  // namespace ipusim::sim
