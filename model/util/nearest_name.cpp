#include "model/util/nearest_name.hpp"

#include <algorithm>
#include <cctype>

namespace ipusim::util {

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string nearestName(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t bestDistance = ~std::size_t{0};
  for (const auto& candidate : candidates) {
    const std::size_t d = editDistance(name, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string best = nearestName(name, candidates);
  if (best.empty()) return "";
  // Suggest only when the names share at least half their letters.
  if (editDistance(name, best) * 2 > std::max(name.size(), best.size())) return "";
  return " (did you mean '" + best + "'?)";
}

}  // namespace ipusim::util
