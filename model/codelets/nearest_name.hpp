#pragma once
// The known name closest to a misspelt one, for "did you mean" errors.
#include <string>
#include <vector>

namespace ipusim::model {

// Case-insensitive edit distance; "" when `known` is empty.
std::string nearestName(const std::string& name, const std::vector<std::string>& known);

}  // namespace ipusim::model
