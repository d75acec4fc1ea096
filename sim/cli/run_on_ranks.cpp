#include "sim/cli/run_on_ranks.hpp"

#include "model/util/json_error_text.hpp"
#include "sim/cli/instance_peers.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/engine/instance_share.hpp"
#include "sim/host/interrupt.hpp"

#include <iostream>
#include <string>

namespace ipusim::sim {

int runWorkloadOnRanks(RunWorkloadArgs args) {
  if (!cluster::launchInfo().launched) return runWorkload(args);
  cluster::Cluster cluster;
  InstancePeers peers(cluster);
  args.peers = &peers;
  // An error every rank finds alike: said once, by rank 0; every rank exits 1.
  const auto saidByRankZero = [&](const std::exception& e) {
    if (cluster.rank() == 0) std::cerr << "ipusim: error: " << util::utf8Text(e.what()) << "\n";
    cluster.waitForAll();
    return 1;
  };
  int exitCode = 0;
  try {
    exitCode = runWorkload(args);
  } catch (const ReplicasOverRanks& e) {
    return saidByRankZero(e);
  } catch (const InstancesDisagree& e) {  // (every rank compared every rank's part with rank 0's)
    return saidByRankZero(e);
  } catch (const std::exception& e) {
    // One write (the ranks' lines would interleave).
    std::cerr << "ipusim: error: rank " + std::to_string(cluster.rank()) + " of " + std::to_string(cluster.size()) +
                     ": " + util::utf8Text(e.what()) + "\n"
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
