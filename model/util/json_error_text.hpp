#pragma once
// nlohmann::json's messages start with an internal tag
// ("[json.exception.out_of_range.406] number overflow parsing '1e400'");
// users get the explanation without the tag.
#include <string>

namespace ipusim::util {

inline std::string jsonErrorText(const std::string& what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    const auto end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

}  // namespace ipusim::util
