#pragma once
// "Did you mean ...?" support for error messages: the closest candidate to a
// misspelt name by edit distance (case-insensitive).
#include <string>
#include <vector>

namespace ipusim::util {

std::size_t editDistance(const std::string& a, const std::string& b);
// The candidate nearest to `name`; empty if there are no candidates.
std::string nearestName(const std::string& name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "" when nothing is reasonably close.
std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace ipusim::util
