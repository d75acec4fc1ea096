#pragma once
// `mpirun -n H ipusim run WORKLOAD` (and evaluate, predict): each rank one
// instance computing R / H of the workload's R replicas, as PopDist runs
// them (sim/engine/instance_share.hpp). Without a launcher, runWorkload as
// it is, and no MPI call.
//
// Failures: an error on any rank (a set-up refused, a bad file, an exception
// mid-run) is said once by that rank, naming it, and ends every rank
// (MPI_Abort): none is left waiting at a collective. An error every rank
// finds alike (the replicas do not divide over the ranks; the ranks' runs
// or trained weights differ: InstancesDisagree) is said once, by rank 0. An interrupted rank (the
// launcher's SIGTERM when another rank died, Ctrl-C on mpirun) ends as an
// interrupted run does (no profile written, exit 3), without MPI_Finalize.
#include "sim/cli/run_workload.hpp"

namespace ipusim::sim {

int runWorkloadOnRanks(RunWorkloadArgs args);

}  // namespace ipusim::sim
