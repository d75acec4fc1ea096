#pragma once
// `mpirun -n H ipusim run WORKLOAD` (and evaluate, predict): each rank one
// instance computing R / H of the workload's R replicas, as PopDist runs
// them (sim/engine/instance_share.hpp). Without a launcher, runWorkload as
// it is, and no MPI call.
//
// Failures:
//   - in the set-up (the command line's workload flags, the workload, its
//     data, the compile, the load; everything before the ranks agree on the
//     run): every rank, failed or not, reports its outcome at the end of the
//     set-up (ranks_set_up.hpp), and rank 0 alone says the errors: one that
//     every rank found alike once, as one process says it (a missing
//     workload or dataset file, a bad --workload-set value, replicas that do
//     not divide over the ranks), one that some ranks found naming them
//     ("rank 1 of 2: ..."). Every rank exits 1; no MPI_Abort.
//   - the ranks' runs or trained weights differ (InstancesDisagree): every
//     rank finds it alike, at a point every rank reaches; said once, by rank 0.
//   - anything later (an exception mid-run, while the others may wait at a
//     collective): said by that rank, naming it, and the job ends (MPI_Abort).
// An interrupted rank (the launcher's SIGTERM when another rank died, Ctrl-C
// on mpirun) ends as an interrupted run does (no profile written, exit 3),
// without MPI_Finalize.
#include "sim/cli/run_workload.hpp"

#include <functional>

namespace ipusim::sim {

// `finish` completes the arguments from the command line (it may throw: a
// bad --input-shape); under a launcher, as part of the set-up.
int runWorkloadOnRanks(RunWorkloadArgs args, const std::function<void(RunWorkloadArgs&)>& finish);

}  // namespace ipusim::sim
