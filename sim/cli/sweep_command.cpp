// `ipusim sweep WORKLOAD --vary NAME=V1,V2 ... [-j N]`: a what-if study in
// one command. Each point is one `ipusim run --json` in a child process
// (SystemC elaborates once per process), up to -j at a time; a failing point
// is reported and the others still run (sweep_points.hpp). Writes sweep.csv,
// sweep.json and sweep.png (gnuplot) to the output directory; each point's
// output and errors are kept under points/ (emptied of an earlier sweep's
// files first), and the reports a point writes (autoReport) go to its own
// points/N/. Under mpirun the ranks divide the points (sweep_ranks.hpp).
//
// The children belong to the sweep: they run in a process group of their
// own, which a SIGINT or SIGTERM of the sweep ends (sim/host/interrupt.hpp),
// and each child ends itself when the sweep dies of anything else (SIGKILL).
// Every file is written as `export` writes (traces/output_file.hpp): under a
// temporary name renamed onto it, replacing a link rather than writing
// through it, never onto the workload.
#include "sim/cli/child_process.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/sweep_points.hpp"
#include "sim/cli/sweep_ranks.hpp"
#include "sim/cli/sweep_run.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/commands/profile_json.hpp"
#include "sim/host/interrupt.hpp"
#include "sim/options/engine_options.hpp"
#include "traces/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::sim {

namespace {

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

// Two sweeps into one directory: the second emptied points/ under the
// first, whose points then failed ("unreadable run summary") or whose plot
// did ("Cannot load input from plot.gp"), and the directory was left with
// one sweep's sweep.csv beside the other's points. A sweep holds an
// exclusive lock on the directory from here to its exit: the descriptor is
// never closed, and not inherited by the points or gnuplot (O_CLOEXEC). A
// file system without locks leaves the directory unlocked, as before.
void lockOutputDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error(dir.string() + ": cannot open the sweep's output directory: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return;
  const int error = errno;
  ::close(fd);
  if (error == EWOULDBLOCK)
    throw std::runtime_error(dir.string() + ": another sweep is writing into this directory; wait for it to finish "
                             "or choose another -o directory");
}

// Whether a sweep holds `dir`'s lock (lockOutputDirectory): tried, and let go at once.
bool sweepWritingInto(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // (and with it the lock, if this call took it)
  return held;
}

// A sweep into another running sweep's points/ folder (-o DIR/points, or
// a folder in it) wrote its results and points among that sweep's, and
// the next sweep into DIR refused to empty them ("not written by a
// sweep"). Refused while that sweep runs, whatever the spelling (links).
void refuseInsideRunningSweep(const fs::path& dir) {
  std::error_code error;
  const fs::path full = fs::weakly_canonical(fs::absolute(dir, error), error);
  if (error) return;
  for (fs::path p = full; p.has_relative_path(); p = p.parent_path())
    if (p.filename() == "points" && sweepWritingInto(p.parent_path()))
      throw std::runtime_error(dir.string() + ": is in the points folder of a sweep writing into " +
                               p.parent_path().string() + "; wait for it to finish or choose another -o directory");
}

// A sweep killed while writing its results (SIGKILL: no handler runs) left
// their temporary files (sweep.png.tmp-PID, traces/output_file.hpp) beside
// them. Under the directory's lock no other sweep is writing any: a file
// of that name (not a directory, nor an input of this sweep) is removed.
void removeStaleResultTemporaries(const fs::path& dir, const std::vector<std::string>& inputs) {
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const auto tmp = name.find(".tmp-");
    if (tmp == std::string::npos || !allDigits(name.substr(tmp + 5))) continue;
    const std::string result = name.substr(0, tmp);
    if (result != "sweep.csv" && result != "sweep.json" && result != "sweep.png") continue;
    const fs::file_status status = entry.symlink_status();
    if ((fs::is_regular_file(status) || fs::is_symlink(status)) && !holdsInput(entry.path(), inputs))
      stale.push_back(entry.path());
  }
  for (const fs::path& path : stale) {
    std::error_code ignored;  // (gone already: nothing to do)
    fs::remove(path, ignored);
  }
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
  refuseInsideRunningSweep(dir);
  // The result files are checked before anything changes or runs (they are written after the points).
  for (const char* name : {"sweep.csv", "sweep.json", "sweep.png"})
    traces::checkOutputPath((dir / name).string(), {/*force=*/true, inputs});
  std::error_code created;
  fs::create_directories(pointsDir, created);
  if (created) throw std::runtime_error(pointsDir.string() + ": cannot create the sweep's points directory: " + created.message());
  lockOutputDirectory(dir);
  removeStaleResultTemporaries(dir, inputs);
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

}  // namespace

SweepSetUp setUpSweep(const SweepArgs& args, bool prepare) {
  std::vector<std::string> common;
  for (const auto& s : args.sets) common.insert(common.end(), {"--set", s});
  if (args.synthetic) common.push_back("--synthetic-data");
  if (args.steps) common.insert(common.end(), {"--steps", std::to_string(args.steps)});
  if (!args.engineOptions.empty()) common.insert(common.end(), {"--engine-options", args.engineOptions});
  const nlohmann::json workloadJson = scheduler::readWorkloadJson(args.workload);
  SweepSetUp s{planSweep(args.workload, workloadJson, args.vary, common),
               sweepInputs(args.workload, workloadJson, args.vary),
               resolveEngineOptions(nlohmann::json::object(), args.engineOptions), fs::path(args.output),
               fs::path(args.output) / "points"};
  // Each point's reports go into points/N by its POPLAR_ENGINE_OPTIONS, a
  // JSON text, which holds only UTF-8: a folder named in Latin-1 failed
  // after making it, with the JSON library's "invalid UTF-8 byte".
  if (s.options.writesProfile() || s.options.outputSerializedGraph) {
    try {
      (void)nlohmann::json(s.pointsDir.string()).dump();
    } catch (const nlohmann::json::type_error&) {
      throw std::invalid_argument("-o " + profileJson(nlohmann::json(args.output)) +
                                  ": each point writes its reports into it through POPLAR_ENGINE_OPTIONS's "
                                  "autoReport.directory, a JSON string: expected a UTF-8 path (U+FFFD shows each "
                                  "byte that is not)");
    }
  }
  if (prepare) prepareOutput(s.dir, s.pointsDir, s.inputs);
  // Finished points keep their points/N.json: "nothing written" misled.
  interruptedLeaves("no sweep.csv, sweep.json or sweep.png written; the finished points' output is in " +
                    s.pointsDir.string() + "/");
  return s;
}

void announceSweep(const SweepArgs& args, const SweepSetUp& s, const std::string& how) {
  std::cerr << "sweep: " << s.plan.points.size() << (s.plan.points.size() == 1 ? " point of " : " points of ")
            << args.workload << ", " << how << ", into " << s.dir.string() << "\n";
  if ((s.options.writesProfile() || s.options.outputSerializedGraph) && s.options.directory != ".")
    std::cerr << "sweep: each point writes its reports into " << (s.pointsDir / "N").string()
              << "/, not autoReport.directory " << s.options.directory << "\n";
}

int writeSweepOutputs(const SweepArgs& args, const SweepSetUp& s, const std::vector<SweepResult>& results) {
  const fs::path& dir = s.dir;
  const fs::path& pointsDir = s.pointsDir;
  const auto& inputs = s.inputs;
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
    writeFile(pointsDir / "plot.gp",
              plotScript(s.plan, results, (pointsDir / "plot.dat").string(), png->temporaryPath()), inputs);
    if (runChild({"/bin/sh", "-c", "command -v gnuplot >/dev/null"}) != 0)
      plotProblem = "sweep: gnuplot not found (Debian package gnuplot-nox, see .ci/setup): no sweep.png";
    else if (runOwnChild({"/bin/sh", "-c", "exec gnuplot \"$0\"", pathArgument((pointsDir / "plot.gp").string())}) != 0)
      plotProblem = "sweep: gnuplot failed on " + (pointsDir / "plot.gp").string() + ": no sweep.png";
  }
  writeFile(dir / "sweep.csv", sweepToCsv(s.plan, results), inputs);
  writeFile(dir / "sweep.json", profileJson(sweepToJson(s.plan, results)) + "\n", inputs);
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

namespace {

// The points at a time on each process: -j, or the cores over the ranks on this host.
unsigned jobsOf(const SweepArgs& args, int ranksOnThisHost) {
  if (args.jobs) return args.jobs;
  return std::clamp(std::thread::hardware_concurrency() / unsigned(std::max(ranksOnThisHost, 1)), 1u, 256u);
}

int runSweep(SweepArgs args) {
  cluster::Cluster cluster;  // joins mpirun's job when it started this process; else a cluster of one, no MPI
  args.jobs = jobsOf(args, cluster.localSize());
  if (cluster.joined()) return runSweepOnRanks(cluster, args);
  const SweepSetUp s = setUpSweep(args, /*prepare=*/true);
  announceSweep(args, s, std::to_string(args.jobs) + " at a time");
  PointRunner runner(s.plan, s.options, s.pointsDir);
  return writeSweepOutputs(args, s, runPointsHere(s.plan, runner, args.jobs));
}

}  // namespace

void addSweepCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<SweepArgs>();
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
  cmd->add_option("-j,--jobs", args->jobs,
                  "points run at the same time (default: the number of cores; under mpirun, on each rank: the cores "
                  "over the ranks on its host; at most 256)")
      ->check(wholeNumberAtLeastOne(256));
  cmd->add_option("-o,--output", args->output, "directory for sweep.csv, sweep.json, sweep.png and points/")
      ->capture_default_str()
      ->check(nonEmptyFileName());
  cmd->add_flag("!--no-plot", args->plot, "do not draw sweep.png");
  cmd->footer(
      "On several processes or hosts (Open MPI): mpirun -n N ipusim sweep ... runs the points on N ranks. Each rank "
      "runs -j points at a time and takes the next from rank 0's queue when it has room; rank 0 gathers the results "
      "and alone writes sweep.csv, sweep.json and sweep.png, as one process writes them. Each rank writes its points' "
      "files into -o DIR/points/ on its own host (a shared DIR keeps them together; nothing else needs a shared file "
      "system, but the workload and its files must be at the same path on every host). A rank that dies ends the "
      "whole run (mpirun names it) and no sweep.csv, sweep.json or sweep.png is written. On one host, add "
      "--bind-to none (mpirun binds each rank, and its points with it, to one core) and, for more ranks than cores, "
      "--oversubscribe; as root, --allow-run-as-root. Example: mpirun -n 2 --bind-to none ipusim sweep "
      "workloads/mnist_with_feeds.json --vary tiles=16,32,64,128 --synthetic-data");
  cmd->callback([args, &exitCode] { exitCode = runSweep(*args); });
}

}  // namespace ipusim::sim
