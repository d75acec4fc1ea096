#pragma once
// What a caught exception says to the user, in the viewer's error line, a
// view's message or on stderr: a std::bad_alloc is said in words (as the
// ipusim command says it, sim/main.cpp), never as "std::bad_alloc".
#include <exception>
#include <string>

namespace ipusim::viewer {

inline constexpr const char* kOutOfMemoryText =
    "out of memory: this profile needs more memory than the machine gives the viewer (a profile of fewer "
    "captured runs, tiles or slices needs less)";

std::string errorText(const std::exception& e);

}  // namespace ipusim::viewer
