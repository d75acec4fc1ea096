// `ipusim sweep WORKLOAD --vary NAME=V1,V2 ... [-j N]`: a what-if study in
// one command. Each point is one `ipusim run --json` in a child process
// (SystemC elaborates once per process), up to -j at a time; a failing point
// is reported and the others still run. Writes sweep.csv, sweep.json and
// sweep.png (gnuplot) to the output directory; each point's output and
// errors are kept under points/ (emptied of an earlier sweep's files first),
// and the reports a point writes (autoReport) go to its own points/N/.
//
// The children belong to the sweep: they run in a process group of their
// own, which a SIGINT or SIGTERM of the sweep ends (sim/host/interrupt.hpp),
// and each child ends itself when the sweep dies of anything else (SIGKILL).
// Every file is written as `export` writes (traces/output_file.hpp): under a
// temporary name renamed onto it, replacing a link rather than writing
// through it, never onto the workload.
#include "sim/cli/child_process.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/sweep_plan.hpp"
#include "sim/cli/sweep_results.hpp"
#include "sim/cli/workload_overrides.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/host/interrupt.hpp"
#include "sim/options/engine_options.hpp"
#include "traces/output_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <csignal>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::sim {

namespace {

struct SweepArgs {
  std::string workload;
  std::vector<std::string> vary;
  std::vector<std::string> sets;
  bool synthetic = false;
  std::uint64_t steps = 0;
  std::string engineOptions;
  unsigned jobs = 1;
  std::string output = "sweep";
  bool plot = true;
};

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One of the sweep's own files, in its output directory (which it owns: an
// earlier sweep's file is replaced without --force), never one of its inputs.
void writeFile(const fs::path& path, const std::string& text, const std::vector<std::string>& inputs) {
  traces::OutputFile file(path.string(), {/*force=*/true, inputs});
  file.stream() << text;
  file.commit();
}

bool allDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Whether `name` in points/ is a file a sweep writes: N.json, N.log, the
// report directory N/, plot.dat, plot.gp, or one of their temporary files.
bool isSweepPointFile(std::string name, bool directory) {
  if (const auto tmp = name.find(".tmp-"); tmp != std::string::npos && !directory) name = name.substr(0, tmp);
  if (directory) return allDigits(name);
  if (name == "plot.dat" || name == "plot.gp") return true;
  const auto dot = name.rfind('.');
  return dot != std::string::npos && allDigits(name.substr(0, dot)) &&
         (name.substr(dot) == ".json" || name.substr(dot) == ".log");
}

// The files a sweep reads: the workload, and every existing file that one of
// its strings or of the --vary values names (its Keras model, its dataset),
// as given or beside the workload (as the workload's paths resolve). The
// sweep writes and empties none of them: a Keras model named o/sweep.json
// was replaced by the results, a workload o/points/0.json deleted.
std::vector<std::string> sweepInputs(const std::string& workload, const nlohmann::json& j,
                                     const std::vector<std::string>& vary) {
  std::vector<std::string> inputs{workload};
  const fs::path beside = fs::path(workload).parent_path();
  const auto add = [&](const std::string& s) {
    if (s.empty() || s.size() > 4096) return;  // PATH_MAX: longer names no file
    for (const fs::path& p : {fs::path(s), beside / s}) {
      std::error_code error;
      if (fs::is_regular_file(p, error)) inputs.push_back(p.string());
    }
  };
  // The workload's nesting is bounded as it is read (util::checkJsonNesting).
  const std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& v) {
    if (v.is_string()) add(v.get<std::string>());
    else if (v.is_structured())
      for (const auto& e : v) walk(e);
  };
  walk(j);
  for (const std::string& axis : vary) {
    std::stringstream values(axis.substr(axis.find('=') + 1));
    for (std::string v; std::getline(values, v, ',');) add(v);
  }
  return inputs;
}

// Whether `path` is one of `inputs`, or (a directory) holds one.
bool holdsInput(const fs::path& path, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code error;
    for (fs::path p = fs::weakly_canonical(input, error); !error && !p.empty(); p = p.parent_path()) {
      std::error_code unrelated;
      if (fs::equivalent(path, p, unrelated)) return true;
      if (p == p.parent_path()) break;  // the root
    }
  }
  return false;
}

// A file a point's reports write in points/N/ (sim/engine: profile.pop,
// serialized_graph.json, and their temporary files and SQLite journals).
bool isPointReportFile(const std::string& name) {
  for (const std::string report : {"profile.pop", "serialized_graph.json"})
    if (name.compare(0, report.size(), report) == 0 &&
        (name.size() == report.size() || name.compare(report.size(), 5, ".tmp-") == 0 ||
         name.compare(report.size(), 1, "-") == 0))
      return true;
  return false;
}

// The output directory made, and its points/ folder emptied of an earlier
// sweep's files, so that no point of another sweep is taken for one of this
// one. A file there that no sweep writes (a points/N/ folder holding other
// files included) or an input of this sweep stops the sweep: it is not ours to delete.
void prepareOutput(const fs::path& dir, const fs::path& pointsDir, const std::vector<std::string>& inputs) {
  for (const fs::path& folder : {dir, pointsDir}) {
    const fs::file_status status = fs::symlink_status(folder);
    if (fs::is_symlink(status) && folder == pointsDir)
      throw std::runtime_error(folder.string() + ": is a symbolic link; a sweep writes its points into a folder of its own");
    if (fs::exists(status) && !fs::is_directory(fs::status(folder)))
      throw std::runtime_error(folder.string() + ": is not a directory; -o names the sweep's output directory");
  }
  // The result files are checked before anything changes or runs (they are written after the points).
  for (const char* name : {"sweep.csv", "sweep.json", "sweep.png"})
    traces::checkOutputPath((dir / name).string(), {/*force=*/true, inputs});
  std::error_code created;
  fs::create_directories(pointsDir, created);
  if (created) throw std::runtime_error(pointsDir.string() + ": cannot create the sweep's points directory: " + created.message());
  std::vector<fs::path> earlier;
  for (const auto& entry : fs::directory_iterator(pointsDir)) {
    const bool directory = fs::is_directory(entry.symlink_status());
    bool ours = isSweepPointFile(entry.path().filename().string(), directory);
    if (ours && directory)
      for (const auto& inner : fs::recursive_directory_iterator(entry.path()))
        ours = ours && !inner.is_directory() && isPointReportFile(inner.path().filename().string());
    if (!ours)
      throw std::runtime_error(entry.path().string() + ": not written by a sweep; refusing to empty " +
                               pointsDir.string() + " (choose another -o directory)");
    if (holdsInput(entry.path(), inputs))
      throw std::runtime_error(entry.path().string() + ": is an input of this sweep (the workload or a file it "
                               "names); refusing to empty " + pointsDir.string() + " (choose another -o directory)");
    earlier.push_back(entry.path());
  }
  for (const auto& path : earlier) fs::remove_all(path);
}

// SIGINT, SIGTERM and SIGHUP held while a child is started and recorded as ours, so
// that a signal never finds a child the handler does not know of.
class InterruptsHeld {
 public:
  InterruptsHeld() {
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~InterruptsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

 private:
  sigset_t previous_;
};

// Runs `argv` (its output ours) as a child the interrupt handler ends and
// waits for before it removes our temporary files: gnuplot, left running
// after a SIGINT or SIGTERM of the sweep, drew sweep.png's temporary file
// after the handler had removed it.
int runOwnChild(const std::vector<std::string>& argv) {
  int pid = 0;
  {
    const InterruptsHeld held;
    pid = startChild(argv, "", "", {}, /*processGroup=*/0);
    endProcessGroupOnInterrupt(pid);
  }
  int status = 0;
  for (int ended = 0; ended != pid;)
    if ((ended = waitForAnyChild(status)) < 0) throw std::runtime_error("sweep: lost track of " + argv.at(0));
  const InterruptsHeld held;
  endProcessGroupOnInterrupt(0);
  return status;
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

SweepResult collect(const SweepPlan& plan, const SweepPoint& point, int status, const fs::path& out,
                    const fs::path& err) {
  SweepResult r;
  r.point = point;
  r.exitCode = status;
  if (status != 0) {
    r.error = lastErrorLine(readFile(err));
    if (r.error.empty()) r.error = "exit status " + std::to_string(status);
    // A run flag's refusal names the flag a --vary name became ("--tiles:
    // ... got '0'" for --vary tiles=0, a flag the user never typed): it
    // names the --vary value, and the flag after it.
    for (std::size_t a = 0; a < plan.axes.size() && a < point.values.size(); ++a) {
      const std::string& flag = plan.axes[a].resolved;
      if (flag.rfind("--", 0) == 0 && flag.find(' ') == std::string::npos && flag != "--set" &&
          flag != plan.axes[a].name && r.error.rfind(flag + ": ", 0) == 0)
        r.error = "--vary " + plan.axes[a].name + "=" + point.values[a] + " (" + flag + "): " +
                  r.error.substr(flag.size() + 2);
    }
    return r;
  }
  try {
    readRunSummary(nlohmann::json::parse(readFile(out)), r);
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = std::string("unreadable run summary: ") + e.what();
  }
  return r;
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

std::vector<SweepResult> runPoints(const SweepPlan& plan, const SweepArgs& args, const EngineOptions& options,
                                   const fs::path& pointsDir) {
  const std::string self = selfExecutable();
  int group = 0;  // the process group of the running children (0: none running)
  std::vector<SweepResult> results(plan.points.size());
  std::map<int, std::size_t> running;  // pid -> point
  std::size_t next = 0, done = 0, failed = 0;
  ProgressBar progress("sweep " + fs::path(plan.workload).stem().string(), plan.points.size());
  const auto outPath = [&](std::size_t i) { return pointsDir / (std::to_string(i) + ".json"); };
  const auto errPath = [&](std::size_t i) { return pointsDir / (std::to_string(i) + ".log"); };
  while (done < plan.points.size()) {
    while (next < plan.points.size() && running.size() < args.jobs) {
      std::vector<std::string> argv = {self, "run", pathArgument(plan.workload), "--json"};
      argv.insert(argv.end(), plan.commonArgs.begin(), plan.commonArgs.end());
      argv.insert(argv.end(), plan.points[next].runArgs.begin(), plan.points[next].runArgs.end());
      {
        const InterruptsHeld held;
        const int pid = startChild(argv, outPath(next).string(), errPath(next).string(),
                                   pointEnvironment(options, pointsDir, next, plan.points[next]), group);
        if (group == 0) endProcessGroupOnInterrupt(group = pid);
        running[pid] = next;
      }
      ++next;
    }
    progress.update(done, std::to_string(running.size()) + " running" +
                              (failed ? ", " + std::to_string(failed) + " failed" : std::string()));
    int status = 0;
    const int pid = waitForAnyChild(status);
    const auto it = running.find(pid);
    if (it == running.end()) {
      if (pid < 0) throw std::runtime_error("sweep: lost track of its child processes");
      continue;  // not one of ours
    }
    const std::size_t i = it->second;
    running.erase(it);
    if (running.empty()) {  // the group ends with its last member: the next child starts a new one
      const InterruptsHeld held;
      endProcessGroupOnInterrupt(group = 0);
    }
    results[i] = collect(plan, plan.points[i], status, outPath(i), errPath(i));
    if (!results[i].ok) {
      ++failed;
      std::cerr << (progress.enabled() ? "\r\033[K" : "") << "sweep: point " << i << " ("
                << plan.points[i].label() << ") failed: " << results[i].error << "\n";
    }
    ++done;
  }
  progress.update(done, std::to_string(failed) + " failed");
  return results;
}

int runSweep(const SweepArgs& args) {
  std::vector<std::string> common;
  for (const auto& s : args.sets) common.insert(common.end(), {"--set", s});
  if (args.synthetic) common.push_back("--synthetic-data");
  if (args.steps) common.insert(common.end(), {"--steps", std::to_string(args.steps)});
  if (!args.engineOptions.empty()) common.insert(common.end(), {"--engine-options", args.engineOptions});
  const nlohmann::json workloadJson = scheduler::readWorkloadJson(args.workload);
  const SweepPlan plan = planSweep(args.workload, workloadJson, args.vary, common);
  const std::vector<std::string> inputs = sweepInputs(args.workload, workloadJson, args.vary);
  const EngineOptions options = resolveEngineOptions(nlohmann::json::object(), args.engineOptions);

  const fs::path dir(args.output);
  const fs::path pointsDir = dir / "points";
  // Each point's reports go into points/N by its POPLAR_ENGINE_OPTIONS, a
  // JSON text, which holds only UTF-8: a folder named in Latin-1 failed
  // after making it, with the JSON library's "invalid UTF-8 byte".
  if (options.writesProfile() || options.outputSerializedGraph) {
    try {
      (void)nlohmann::json(pointsDir.string()).dump();
    } catch (const nlohmann::json::type_error&) {
      throw std::invalid_argument("-o " + profileJson(nlohmann::json(args.output)) +
                                  ": each point writes its reports into it through POPLAR_ENGINE_OPTIONS's "
                                  "autoReport.directory, a JSON string: expected a UTF-8 path (U+FFFD shows each "
                                  "byte that is not)");
    }
  }
  prepareOutput(dir, pointsDir, inputs);
  // Finished points keep their points/N.json: "nothing written" misled.
  interruptedLeaves("no sweep.csv, sweep.json or sweep.png written; the finished points' output is in " +
                    pointsDir.string() + "/");
  std::cerr << "sweep: " << plan.points.size() << (plan.points.size() == 1 ? " point of " : " points of ")
            << args.workload << ", " << args.jobs
            << " at a time, into " << dir.string() << "\n";
  if ((options.writesProfile() || options.outputSerializedGraph) && options.directory != ".")
    std::cerr << "sweep: each point writes its reports into " << (pointsDir / "N").string()
              << "/, not autoReport.directory " << options.directory << "\n";
  const auto results = runPoints(plan, args, options, pointsDir);

  std::size_t ok = 0;
  for (const auto& r : results) ok += r.ok ? 1 : 0;
  // The plot is drawn before sweep.csv and sweep.json are written: an
  // interrupt while gnuplot draws then leaves none of them, as the handler
  // says ("nothing written"); it left both before.
  std::optional<traces::OutputFile> png;
  std::string plotProblem;
  if (args.plot && ok > 0) {
    writeFile(pointsDir / "plot.dat", plotData(results), inputs);
    // gnuplot's `set output` follows a link: it draws into our temporary file, which is renamed onto sweep.png.
    png.emplace((dir / "sweep.png").string(), traces::OutputPolicy{/*force=*/true, inputs});
    writeFile(pointsDir / "plot.gp", plotScript(plan, results, (pointsDir / "plot.dat").string(), png->temporaryPath()),
              inputs);
    if (runChild({"/bin/sh", "-c", "command -v gnuplot >/dev/null"}) != 0)
      plotProblem = "sweep: gnuplot not found (Debian package gnuplot-nox, see .ci/setup): no sweep.png";
    else if (runOwnChild({"/bin/sh", "-c", "exec gnuplot \"$0\"", pathArgument((pointsDir / "plot.gp").string())}) != 0)
      plotProblem = "sweep: gnuplot failed on " + (pointsDir / "plot.gp").string() + ": no sweep.png";
  }
  writeFile(dir / "sweep.csv", sweepToCsv(plan, results), inputs);
  writeFile(dir / "sweep.json", profileJson(sweepToJson(plan, results)) + "\n", inputs);
  std::cout << "sweep: " << ok << " of " << results.size() << (results.size() == 1 ? " point ran" : " points ran")
            << "; wrote " << (dir / "sweep.csv").string()
            << " and " << (dir / "sweep.json").string() << "\n";
  for (const auto& r : results) {
    std::cout << "  " << r.point.label() << ": ";
    if (r.ok)
      std::cout << r.simulatedSeconds << " s simulated, " << r.throughput << " steps/s\n";
    else
      std::cout << "failed (" << r.error << ")\n";
  }
  if (!plotProblem.empty()) {
    std::cerr << plotProblem << "\n";
    return 1;
  }
  if (png) {
    png->commit();
    std::cout << "  plot: " << (dir / "sweep.png").string() << "\n";
  }
  return ok == results.size() ? 0 : 1;
}

}  // namespace

void addSweepCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<SweepArgs>();
  args->jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 256u);
  auto* cmd = app.add_subcommand(
      "sweep", "Run a what-if study: a workload at every combination of --vary values, each point in its own "
               "process, in parallel; writes sweep.csv, sweep.json and sweep.png");
  cmd->add_option("workload", args->workload, "training workload (see workloads/README.md)")->required();
  cmd->add_option("--vary", args->vary,
                  "NAME=V1,V2,... (repeatable): a workload key (steps_per_execution, training.outfeed.mode), "
                  "a target or host parameter (ipusim params), arch/tiles/ipus, or a run flag (--tiles); a value may be a "
                  "JSON list or object (its inner commas do not split it)")
      ->required()
      ->allow_extra_args(false);  // one NAME=... per --vary, so the workload may follow it
  cmd->add_option("--set", args->sets, "name=value for every point (target or host parameter; repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--synthetic-data", args->synthetic, "skip the numerics and host data, keep identical timing");
  cmd->add_option("--steps", args->steps, "training steps of every point (overrides training.steps)")
      ->check(wholeNumberAtLeastOne());
  cmd->add_option("--engine-options", args->engineOptions,
                  "engine options (JSON) for every point; reports (autoReport) go to points/N/ of each point");
  // At most 256 at a time (design choice: each point is a whole simulation,
  // its memory and a core; -j 1000000 started a process per point).
  cmd->add_option("-j,--jobs", args->jobs, "points run at the same time (default: the number of cores; at most 256)")
      ->check(wholeNumberAtLeastOne(256));
  cmd->add_option("-o,--output", args->output, "directory for sweep.csv, sweep.json, sweep.png and points/")
      ->capture_default_str()
      ->check(nonEmptyFileName());
  cmd->add_flag("!--no-plot", args->plot, "do not draw sweep.png");
  cmd->callback([args, &exitCode] { exitCode = runSweep(*args); });
}

}  // namespace ipusim::sim
