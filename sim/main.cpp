// ipusim: the command line. One simulation per process (SystemC cannot
// re-elaborate); commands that run several simulations spawn children.
// main() is ours (it wins over the one in libsystemc) so that the SystemC
// banner is silenced before the library prints it; it hands over to sc_main.
#include "model/util/json_error_text.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cluster/launch.hpp"
#include "sim/commands/analysis_commands.hpp"
#include "sim/host/interrupt.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <algorithm>
#include <iostream>
#include <systemc>

namespace {

// Under an MPI launcher `sweep` divides its points over the ranks, and
// `run`, `evaluate` and `predict` of a workload its replicas (instances:
// sim/cli/run_on_ranks.hpp; not `run --graph`). Any other command ran once
// a rank: `mpirun -n 2 ipusim run` printed two
// summaries and one rank failed on the other's profile ("another run is
// writing this profile"); `compile -o` failed on one rank with "already
// exists". Refused before any work, said once (by rank 0; the other ranks
// exit quietly, as a sweep's set-up error does); a job of one rank runs the
// command as one process. Returns the exit code, or -1 to go on.
int refuseCommandOnRanks(int argc, char* argv[]) {
  if (argc < 2 || argv[1][0] == '-' || std::strcmp(argv[1], "sweep") == 0) return -1;
  const bool replicas = std::strcmp(argv[1], "run") == 0 || std::strcmp(argv[1], "evaluate") == 0 ||
                        std::strcmp(argv[1], "predict") == 0;
  const bool graph = std::any_of(argv + 2, argv + argc, [](const char* a) {
    return std::strcmp(a, "--graph") == 0 || std::strncmp(a, "--graph=", 8) == 0;
  });
  if (replicas && !graph) return -1;
  ipusim::sim::cluster::LaunchInfo info;
  try {
    info = ipusim::sim::cluster::launchInfo();
  } catch (const std::exception&) {
    return -1;  // (a launcher's variable out of range: the commands that read them say so)
  }
  // (size 0: a launcher that does not say; rank 0 then runs as one process)
  if (!info.launched || (info.rank == 0 && info.size <= 1)) return -1;
  if (info.rank != 0) return 0;
  std::cerr << "ipusim: error: ipusim " << ipusim::util::utf8Text(argv[1]) << (replicas && graph ? " --graph" : "")
            << " under an MPI launcher on "
            << info.size << " ranks: each rank would run the whole command and write the same files; only "
            << "ipusim sweep, and run, evaluate and predict of a workload, divide their work over ranks (run this "
            << "command without mpirun, or with mpirun -n 1)\n";
  return 1;
}

// Under an MPI launcher every rank parses the same command line: help
// (`mpirun -n 2 ipusim --help`, `ipusim run --help`) and a command line
// CLI11 refuses were printed once a rank. Said once, by rank 0, as a
// refused command is; every rank exits with the same code.
bool quietRank() {
  try {
    const ipusim::sim::cluster::LaunchInfo info = ipusim::sim::cluster::launchInfo();
    return info.launched && info.rank != 0;
  } catch (const std::exception&) {
    return false;  // (a launcher's variable out of range: say what there is to say)
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  // First of all: a Ctrl-C at any moment stops the command cleanly.
  ipusim::sim::installInterruptHandler();
  ipusim::sim::stopWithParentProcess();  // a sweep's point ends with its sweep
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  // Keep stdout for results (--json): SystemC's informational reports are noise here.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  CLI::App app{"ipusim: a discrete-event simulator and profiler of Graphcore-style IPU systems"};
  app.require_subcommand(1);
  int exitCode = 0;
  ipusim::sim::addDemoCommand(app, exitCode);
  ipusim::sim::addRunCommand(app, exitCode);
  ipusim::sim::addTaskCommand(app, exitCode, ipusim::scheduler::Task::Evaluate);
  ipusim::sim::addTaskCommand(app, exitCode, ipusim::scheduler::Task::Predict);
  ipusim::sim::addCompileCommand(app, exitCode);
  ipusim::sim::addSweepCommand(app, exitCode);
  ipusim::sim::addParamsCommand(app, exitCode);
  ipusim::sim::addOptionsCommand(app, exitCode);
  ipusim::sim::addExampleGraphCommand(app, exitCode);
  ipusim::sim::addReportCommand(app, exitCode);
  ipusim::sim::addInsightsCommand(app, exitCode);
  ipusim::sim::addCompareCommand(app, exitCode);
  ipusim::sim::addExportCommand(app, exitCode);
  ipusim::sim::addCombineCommand(app, exitCode);
  if (const int refused = refuseCommandOnRanks(argc, argv); refused >= 0) return refused;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (quietRank()) return e.get_exit_code();
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::cerr << "ipusim: error: out of memory: this work needs more memory than the machine gives it "
                 "(a smaller model, fewer tiles, IPUs or replicas, or --synthetic-data need less)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ipusim: error: " << ipusim::util::utf8Text(e.what()) << "\n";  // names read from files: text
    return 1;
  }
  // Results go to stdout: a write that failed (a full disk, a closed pipe) is an error, not a success.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    if (exitCode == 0)  // a command that failed already said why (export: its trace could not be written)
      std::cerr << "ipusim: error: cannot write to standard output"
                << (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()) << "\n";
    return exitCode ? exitCode : 1;
  }
  return exitCode;
}
