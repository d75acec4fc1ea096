#pragma once
// The ranks' set-up agreed on, under mpirun (`run`, `evaluate`, `predict`
// of a workload, and `sweep`): each rank sets up alone (the workload, its
// data, the compile, the load) and may fail there, at a point the others
// never reach; so every rank, failed or not, reports its outcome here, the
// one point every rank is sure to arrive at before any collective work.
// Rank 0 hears every rank's and tells each whether to go on, and alone
// says the errors: an error every rank found alike once, as one process
// says it; one that some ranks found once per distinct text, naming those
// ranks. No rank is left waiting, and no MPI_Abort is needed.
#include "sim/cluster/cluster.hpp"

#include <string>
#include <vector>

namespace ipusim::sim {

// The message tags it uses (a command's own messages use others).
inline constexpr int kSetUpReadyTag = 1;  // rank k -> 0: its error, or empty
inline constexpr int kSetUpGoTag = 2;     // 0 -> every rank: what rank 0 says, or empty (go on)

// Every rank calls it once, after its set-up, with its error ("" when it
// succeeded; a failed set-up passes a non-empty text) and what it set up to
// do (`plan`: its work in a few words and a digest; "" to compare none).
// When every rank succeeded, a rank whose plan differs from rank 0's fails
// too ("runs another plan than rank 0's (ITS; rank 0's PLAN): EXPECTED"): a
// rank given other flags (mpirun's `: -n 1 ...`), another workload file or
// other engine options would do other work under rank 0's names. Returns
// what rank 0 says (setUpFailureLines, one a line), the same on every rank:
// empty when every rank may go on.
std::vector<std::string> agreeOnSetUp(cluster::Cluster& cluster, const std::string& ownError,
                                      const std::string& plan = "", const std::string& expected = "");

// What rank 0 says of the ranks' errors (`errors[k]`: rank k's, "" for none),
// each line without "ipusim: error: ": none when every error is empty; the
// error alone when every rank found the same; otherwise, in rank order, one
// line per distinct error, naming the ranks that found it ("rank 1 of 2: E",
// "ranks 1, 3 of 4: E").
std::vector<std::string> setUpFailureLines(const std::vector<std::string>& errors);

}  // namespace ipusim::sim
