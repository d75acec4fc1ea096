#pragma once
#include <stdexcept>
#include <string>

namespace ipusim::traces {

// Any failure to write or read a profile. The message names the file and
// says what was expected ("not an ipusim profile", "schema version 3 is newer
// than this build supports (1)", ...).
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ipusim::traces
