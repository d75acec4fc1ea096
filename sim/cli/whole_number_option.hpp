#pragma once
// The check of a count option, shared by every subcommand that takes one
// (sim/cli and the profile commands of sim/commands): CLI11, and how a value shows on one line.
#include "model/util/json_error_text.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace ipusim::sim {

// The check of a count option (--steps, -j, --repeats, --threads): a whole
// number from `min` to `max`, said in those words (CLI11's PositiveNumber
// says "Value 0 not in range 0.000000 to 1797693134862315...", and a number
// too large for the type "Could not convert").
inline CLI::Validator wholeNumberFrom(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (digits && errno != ERANGE && value >= min && value <= max) return "";
        // (A value holding a newline, given by a sweep's --vary, split the message: the point "failed (')".)
        return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
               (util::holdsControlCharacter(text) ? util::oneLineText(text) : "'" + text + "'");
      },
      "NUMBER>=" + std::to_string(min));
}
inline CLI::Validator wholeNumberAtLeastOne(std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  return wholeNumberFrom(1, max);
}

}  // namespace ipusim::sim
