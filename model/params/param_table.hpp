#pragma once
// The one table of target parameters. Every generic operation on a Target
// (listParams, set, toJson/fromJson, validate) walks this table, so adding a
// parameter is one row here and nothing else.
#include "model/target.hpp"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ipusim::model::params {

// Where a parameter lives inside a Target, with its C++ type.
using FieldRef = std::variant<std::uint32_t*, std::uint64_t*, double*>;

enum class Bound : std::uint8_t {
  Positive,     // must be > 0
  NonNegative,  // may be 0
};

struct ParamDescriptor {
  const char* component;    // "tile", "exchange", ...
  const char* name;         // dotted: "tile.tilesPerIpu"
  const char* unit;
  double ipu1;              // preset values (exact in a double: all < 2^53)
  double ipu2;
  Bound bound;
  const char* description;  // one line; names the source or says "estimate"
  FieldRef (*field)(Target&);
};

const std::vector<ParamDescriptor>& paramTable();
std::vector<std::string> paramNames();
// nullptr when no parameter has that name.
const ParamDescriptor* findParam(const std::string& name);

// Current value of the parameter in `target`, as text that set() accepts and
// that round-trips exactly ("1472", "1.33e+09" style for doubles).
std::string formatValue(const ParamDescriptor& param, const Target& target);
// The value as JSON (an integer or a floating-point number).
nlohmann::json jsonValue(const ParamDescriptor& param, const Target& target);
// Parses `text` for `param` and stores it; throws std::invalid_argument naming
// the parameter, the text and what it accepts.
void parseAndSet(const ParamDescriptor& param, Target& target, const std::string& text);
// Checks the parameter's bound; throws std::invalid_argument naming it.
void checkBound(const ParamDescriptor& param, const Target& target);

}  // namespace ipusim::model::params
