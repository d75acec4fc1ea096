#include "viewer/core/error_text.hpp"

#include <new>

namespace ipusim::viewer {

std::string errorText(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return kOutOfMemoryText;
  return e.what();
}

}  // namespace ipusim::viewer
