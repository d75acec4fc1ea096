// The one translation unit that compiles stb_image_write.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "viewer/shell/gl_window.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

namespace ipusim::viewer {

void writePng(std::ostream& out, const std::vector<std::uint8_t>& rgba, int width, int height) {
  auto append = [](void* context, void* data, int size) {
    static_cast<std::ostream*>(context)->write(static_cast<const char*>(data), size);
  };
  // A failed write (a full disk) is OutputFile::commit's to report, with the file's name.
  if (!stbi_write_png_to_func(append, &out, width, height, 4, rgba.data(), width * 4))
    throw std::runtime_error("cannot encode the PNG screenshot (" + std::to_string(width) + "x" +
                             std::to_string(height) + " pixels)");
}

}  // namespace ipusim::viewer
