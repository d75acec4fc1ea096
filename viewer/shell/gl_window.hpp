#pragma once
// GlWindow: a GLFW window with an OpenGL 3.3 core context and Dear ImGui on
// it (GLFW + OpenGL3 backends). Also reads back the frame for screenshots.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

struct GLFWwindow;

namespace ipusim::viewer {

class GlWindow {
 public:
  // Throws std::runtime_error when there is no display or no GL 3.3.
  GlWindow(int width, int height, const std::string& title, bool visible);
  ~GlWindow();
  GlWindow(const GlWindow&) = delete;
  GlWindow& operator=(const GlWindow&) = delete;

  bool shouldClose() const;
  // Polls events (waits up to `waitSeconds` for one when > 0) and starts an ImGui frame.
  void beginFrame(double waitSeconds = 0);
  // Renders the ImGui frame into the back buffer (does not swap).
  void render();
  void swap();
  // RGBA rows, top row first, of the back buffer just rendered.
  std::vector<std::uint8_t> readBackBuffer(int& width, int& height) const;

 private:
  GLFWwindow* window_ = nullptr;
};

// Writes RGBA pixels as a PNG (stb_image_write); throws std::runtime_error naming the file.
// Encodes RGBA rows as PNG onto `out`; throws when encoding or writing fails.
void writePng(std::ostream& out, const std::vector<std::uint8_t>& rgba, int width, int height);

}  // namespace ipusim::viewer
