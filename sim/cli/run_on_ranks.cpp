#include "sim/cli/run_on_ranks.hpp"

#include "model/util/json_error_text.hpp"
#include "sim/cli/instance_peers.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/host/interrupt.hpp"

#include <iostream>

namespace ipusim::sim {

int runWorkloadOnRanks(RunWorkloadArgs args) {
  if (!cluster::launchInfo().launched) return runWorkload(args);
  cluster::Cluster cluster;
  InstancePeers peers(cluster);
  args.peers = &peers;
  int exitCode = 0;
  try {
    exitCode = runWorkload(args);
  } catch (const std::exception& e) {
    std::cerr << "ipusim: error: rank " << cluster.rank() << " of " << cluster.size() << ": "
              << util::utf8Text(e.what()) << "\n";
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
