#pragma once
// A figure that may be NaN or infinite (a diverging training's loss) in
// --json output. JSON has no NaN or infinity, and nlohmann::json writes them
// as null — the same as "no value" — so they are written as the strings
// "nan", "inf" and "-inf"; every other double is a JSON number. Readers of
// that JSON (sweep reads `run --json`) take it back with numberFromJson.
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace ipusim::profiler::analysis {

inline nlohmann::json jsonNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

// The same names in text: "nan" (never "-nan", whatever the NaN's sign bit),
// "inf", "-inf"; a finite value as an ostream writes it.
inline std::string numberText(double value) {
  if (!std::isfinite(value)) return jsonNumber(value).get<std::string>();
  std::ostringstream out;
  out << value;
  return out.str();
}

// A JSON number, or "nan", "inf", "-inf"; anything else throws
// std::invalid_argument naming `key`.
inline double numberFromJson(const nlohmann::json& j, const std::string& key) {
  if (j.is_number()) return j.get<double>();
  if (j == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::invalid_argument(key + ": expected a number, \"nan\", \"inf\" or \"-inf\"");
}

}  // namespace ipusim::profiler::analysis
