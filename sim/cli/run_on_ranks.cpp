#include "sim/cli/run_on_ranks.hpp"

#include "model/util/json_error_text.hpp"
#include "sim/cli/instance_peers.hpp"
#include "sim/cli/ranks_set_up.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/engine/instance_share.hpp"
#include "sim/host/interrupt.hpp"

#include <csignal>
#include <iostream>
#include <string>

namespace ipusim::sim {

namespace {

// Another rank's set-up failed (this one's succeeded): rank 0 says why.
struct OtherRanksFailed : std::runtime_error {
  OtherRanksFailed() : std::runtime_error("another rank's set-up failed") {}
};

}  // namespace

int runWorkloadOnRanks(RunWorkloadArgs args, const std::function<void(RunWorkloadArgs&)>& finish) {
  if (!cluster::launchInfo().launched) {
    finish(args);
    return runWorkload(args);
  }
  cluster::Cluster cluster;
  InstancePeers peers(cluster);
  args.peers = &peers;
  // Errors every rank knows of: said once, by rank 0; every rank exits 1.
  const auto saidByRankZero = [&](const std::vector<std::string>& lines) {
    if (cluster.rank() == 0)
      for (const std::string& line : lines) std::cerr << "ipusim: error: " << line << "\n";
    cluster.waitForAll();
    // mpirun ends the other ranks (SIGTERM) as soon as one exits 1: a rank still finalizing would say it was
    // "terminated (SIGTERM); nothing written" after the job's error was said (seen once in a suite run).
    std::signal(SIGTERM, SIG_IGN);
    return 1;
  };
  bool setUpAgreed = false;  // every rank has reported its set-up (from then on, an error ends the job)
  std::vector<std::string> setUpErrors;
  args.setUpDone = [&] {
    setUpAgreed = true;
    setUpErrors = agreeOnSetUp(cluster, "");
    if (!setUpErrors.empty()) throw OtherRanksFailed();
  };
  int exitCode = 0;
  try {
    finish(args);
    exitCode = runWorkload(args);
  } catch (const OtherRanksFailed&) {
    return saidByRankZero(setUpErrors);
  } catch (const InstancesDisagree& e) {  // (every rank compared every rank's part with rank 0's)
    return saidByRankZero({util::utf8Text(e.what())});
  } catch (const std::exception& e) {
    std::string error = util::utf8Text(e.what());
    if (error.empty()) error = "set-up failed";
    try {
      if (!setUpAgreed) {  // (the others are setting up, or wait at the end of theirs)
        setUpAgreed = true;
        return saidByRankZero(agreeOnSetUp(cluster, error));
      }
    } catch (const std::exception& agreeing) {
      error += "; then, telling the other ranks: " + util::utf8Text(agreeing.what());
    }
    // One write (the ranks' lines would interleave).
    std::cerr << "ipusim: error: rank " + std::to_string(cluster.rank()) + " of " + std::to_string(cluster.size()) +
                     ": " + error + "\n"
              << std::flush;
    cluster.abort(1);
  }
  if (exitCode == kInterruptedExitCode) {
    cluster.leave();  // (its gathers may be left behind: MPI_Finalize would wait for ranks that are gone)
    return exitCode;
  }
  cluster.waitForAll();
  return exitCode;
}

}  // namespace ipusim::sim
