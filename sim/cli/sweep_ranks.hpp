#pragma once
// `mpirun -n N ipusim sweep ...`: the points divided over the ranks of an
// MPI job (sim/cluster), by a work queue on rank 0. Each rank, rank 0 too,
// runs up to -j points at a time as the one-process sweep runs them
// (sweep_points.hpp: child processes writing points/N.json); a rank with a
// free slot asks rank 0 for the next point, and sends it each finished
// point's exit status, run summary and last error line. Rank 0 makes the
// results from those (collectPoint, as one process does), reports a failed
// point as it arrives, draws the progress bar (on mpirun's terminal: a
// rank's own stderr is a pipe) and alone writes sweep.csv, sweep.json and
// sweep.png, byte for byte as one process running the same points writes
// them. A queue rather than dealing the points round-robin: the points of a
// sweep differ in cost by design (tiles, steps, IPUs), and a rank that drew
// the cheap ones would idle while another works through the dear ones.
//
// Nothing but the output directory is shared through the file system: the
// results travel in MPI messages, and each rank writes its points' files
// into DIR/points/ on its own host (one directory when DIR is shared). The
// workload and the files it names must be at the same path on every host,
// as the ipusim binary must.
//
// Failures: a set-up error on any rank (a missing workload, a bad --vary)
// is said once, by rank 0 (ranks_set_up.hpp: naming the ranks that found it
// unless every rank did), and so is a rank whose plan (its points' command
// lines, the workload's text, the engine options) differs from rank 0's;
// every rank then exits (rank 0 with 1); a failing
// point is a result, as in one process. A rank that dies ends the whole job
// (mpirun names it and sends the others SIGTERM: their points end with
// them, and rank 0 writes nothing); an error in a rank's own work (a point
// that cannot start) is said by that rank, which then ends the job.
#include "sim/cli/sweep_run.hpp"
#include "sim/cluster/cluster.hpp"

namespace ipusim::sim {

// Returns the exit code: rank 0's as one process's (0, or 1 when a point
// failed); 0 on the other ranks, whose points' failures rank 0 reports (a
// rank that exits non-zero makes mpirun end the job before rank 0 writes).
int runSweepOnRanks(cluster::Cluster& cluster, const SweepArgs& args);

}  // namespace ipusim::sim
