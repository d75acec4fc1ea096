#include "model/codelets/nearest_name.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace ipusim::model {
namespace {

std::size_t editDistance(const std::string& a, const std::string& b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::string nearestName(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : known) {
    const std::size_t distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace ipusim::model
