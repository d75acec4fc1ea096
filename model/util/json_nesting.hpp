#pragma once
// JSON read with a bound on nesting. nlohmann::json parses any depth without
// recursion, but copies, compares and dumps a value recursively: a document
// nested 100,000 deep (a 200 kB file) parses, then overflows the stack far
// from where it was read. Every JSON text a user or a file gives ipusim is
// checked here before it is parsed.
#include <cstddef>
#include <string>
#include <string_view>

namespace ipusim::util {

// Design choice: 256 levels of arrays and objects, ten times the deepest
// Keras configuration seen (nested models in nested layers), and a few
// kilobytes of stack in nlohmann::json's recursive copy.
inline constexpr std::size_t kMaxJsonNesting = 256;

// Throws std::invalid_argument("<source>: JSON nests arrays and objects more
// than 256 deep (at byte N)") when `text` does; text that is not JSON at all
// is left to the parser. One pass, no allocation.
void checkJsonNesting(std::string_view text, const std::string& source);

}  // namespace ipusim::util
