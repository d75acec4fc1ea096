#pragma once
// The --json output of report, insights and compare. Names in it come from
// the profile (programs, layers, tensors, meta): bytes that are not UTF-8 — a
// damaged or hand-edited profile — are replaced by U+FFFD, as `export` does,
// rather than failing with the JSON library's "invalid UTF-8 byte".
#include <nlohmann/json.hpp>

#include <string>

namespace ipusim::sim {

inline std::string profileJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ipusim::sim
