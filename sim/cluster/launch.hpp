#pragma once
// Whether this process was started by an MPI launcher (mpirun, mpiexec, or
// srun with PMIx), read from the environment the launcher sets, without a
// call into MPI: a command that only asks this (every command but a
// distributed one) neither loads MPI's state nor pays MPI_Init's start-up.
#include <cstdio>
#include <string>
#include <vector>

namespace ipusim::sim::cluster {

struct LaunchInfo {
  bool launched = false;  // the environment names a rank
  int rank = 0;           // this process's rank (0 when not launched)
  int size = 1;           // the ranks in the job (0 when launched but no variable says: MPI_Init will)
  int localSize = 1;      // the ranks on this host (Open MPI says; 1 when no launcher says)
};

// Open MPI's OMPI_COMM_WORLD_RANK/SIZE/LOCAL_SIZE; else PMIx's PMIX_RANK
// with PMI_SIZE, or Hydra's PMI_RANK/PMI_SIZE. Throws std::runtime_error
// naming the variable when a launcher's variable is not a number in range.
LaunchInfo launchInfo();

// The names of the launcher's variables in this process's environment
// (OMPI_*, PMIX_*, PMI_*): a child process started by a rank (a sweep's
// point) is not a rank, and must not find them and take itself for one.
std::vector<std::string> launcherVariables();

// The terminal the launcher (this process's parent: mpirun on its own host)
// writes its errors to, opened for writing; nullptr when its standard error
// is not a terminal (redirected, or a remote host's daemon). A rank's own
// stderr is a pipe to mpirun, so this is where rank 0 draws progress.
std::FILE* openLauncherTerminal();

}  // namespace ipusim::sim::cluster
