#include "model/util/json_nesting.hpp"

#include <stdexcept>

namespace ipusim::util {

void checkJsonNesting(std::string_view text, const std::string& source) {
  std::size_t depth = 0;
  bool inString = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonNesting)
        throw std::invalid_argument(source + ": JSON nests arrays and objects more than " +
                                    std::to_string(kMaxJsonNesting) + " deep (at byte " + std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace ipusim::util
