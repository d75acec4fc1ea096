#pragma once
// Small string tests the standard library has only from C++20 on.
#include <string>

namespace ipusim::util {

inline bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace ipusim::util
