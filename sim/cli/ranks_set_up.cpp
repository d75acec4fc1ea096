#include "sim/cli/ranks_set_up.hpp"

#include "sim/cluster/message.hpp"

namespace ipusim::sim {

std::vector<std::string> setUpFailureLines(const std::vector<std::string>& errors) {
  std::vector<std::string> lines;
  bool anyFailed = false, allAlike = !errors.empty();
  for (const std::string& e : errors) {
    anyFailed = anyFailed || !e.empty();
    allAlike = allAlike && e == errors.front();
  }
  if (!anyFailed) return lines;
  if (allAlike) return {errors.front()};
  const std::string of = " of " + std::to_string(errors.size()) + ": ";
  std::vector<bool> said(errors.size(), false);
  for (std::size_t k = 0; k < errors.size(); ++k) {
    if (errors[k].empty() || said[k]) continue;
    std::string ranks;
    std::size_t count = 0;
    for (std::size_t j = k; j < errors.size(); ++j) {
      if (errors[j] != errors[k]) continue;
      said[j] = true;
      ranks += (count++ ? ", " : "") + std::to_string(j);
    }
    lines.push_back((count == 1 ? "rank " : "ranks ") + ranks + of + errors[k]);
  }
  return lines;
}

std::vector<std::string> agreeOnSetUp(cluster::Cluster& cluster, const std::string& ownError,
                                      const std::string& plan, const std::string& expected) {
  std::vector<std::string> said;
  if (cluster.size() <= 1 || !cluster.joined()) return setUpFailureLines({ownError});
  if (cluster.rank() != 0) {
    cluster.send(0, kSetUpReadyTag, cluster::MessageWriter().text(ownError).text(plan).bytes());
    cluster::MessageReader in(cluster.receive(0, kSetUpGoTag));
    for (std::uint64_t n = in.number(); n > 0; --n) said.push_back(in.text());
    return said;
  }
  std::vector<std::string> errors{ownError}, plans{plan};
  for (int rank = 1; rank < cluster.size(); ++rank) {
    cluster::MessageReader in(cluster.receive(rank, kSetUpReadyTag));
    errors.push_back(in.text());
    plans.push_back(in.text());
  }
  bool failed = false;
  for (const std::string& e : errors) failed = failed || !e.empty();
  for (std::size_t rank = 1; !failed && rank < plans.size(); ++rank)
    if (plans[rank] != plans[0])
      errors[rank] = "runs another plan than rank 0's (" + plans[rank] + "; rank 0's " + plans[0] + "): " + expected;
  said = setUpFailureLines(errors);
  cluster::MessageWriter go;
  go.number(said.size());
  for (const std::string& line : said) go.text(line);
  for (int rank = 1; rank < cluster.size(); ++rank) cluster.send(rank, kSetUpGoTag, go.bytes());
  return said;
}

}  // namespace ipusim::sim
