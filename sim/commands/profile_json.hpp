#pragma once
// The --json output of report, insights and compare, and of run, compile
// and sweep's sweep.json. Names in it come from the profile (programs,
// layers, tensors, meta) or from the command line (a workload's name is its
// file's unless it gives one; --workload-set values; paths): bytes that are
// not UTF-8 — a damaged or hand-edited profile, a file named in Latin-1 — are
// replaced by U+FFFD, as `export` does, rather than failing with the JSON
// library's "invalid UTF-8 byte" and writing nothing.
#include <nlohmann/json.hpp>

#include <string>

namespace ipusim::sim {

inline std::string profileJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ipusim::sim
