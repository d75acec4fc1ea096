// The one translation unit that compiles stb_image_write.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "viewer/shell/gl_window.hpp"

#include <stdexcept>

namespace ipusim::viewer {

void writePng(const std::string& path, const std::vector<std::uint8_t>& rgba, int width, int height) {
  if (!stbi_write_png(path.c_str(), width, height, 4, rgba.data(), width * 4))
    throw std::runtime_error(path + ": cannot write the PNG screenshot");
}

}  // namespace ipusim::viewer
