#include "viewer/shell/gl_window.hpp"

#include "viewer/core/frame_gate.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstring>
#include <stdexcept>

namespace ipusim::viewer {

namespace {
std::string lastGlfwError;
void onGlfwError(int code, const char* description) {
  lastGlfwError = std::string(description) + " (GLFW error " + std::to_string(code) + ")";
}
}  // namespace

GlWindow::GlWindow(int width, int height, const std::string& title, bool visible) {
  glfwSetErrorCallback(onGlfwError);
  if (!glfwInit())
    throw std::runtime_error("cannot initialise GLFW (no display? run under xvfb-run): " + lastGlfwError);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window_) {
    glfwTerminate();
    throw std::runtime_error("cannot open a " + std::to_string(width) + "x" + std::to_string(height) +
                             " OpenGL 3.3 window: " + lastGlfwError);
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(visible ? 1 : 0);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini next to the user's files
  ImGui::StyleColorsLight();
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330");
}

GlWindow::~GlWindow() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window_);
  glfwTerminate();
}

bool GlWindow::shouldClose() const { return glfwWindowShouldClose(window_); }

void GlWindow::beginFrame(double waitSeconds) {
  if (waitSeconds > 0) glfwWaitEventsTimeout(waitSeconds);
  else glfwPollEvents();
  frame_gate::frameBegins();  // background checks pause until the swap
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void GlWindow::render() {
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.94f, 0.94f, 0.94f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void GlWindow::swap() {
  glfwSwapBuffers(window_);
  frame_gate::frameEnds();
}

std::vector<std::uint8_t> GlWindow::readBackBuffer(int& width, int& height) const {
  glfwGetFramebufferSize(window_, &width, &height);
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width) * height * 4);
  glFinish();
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's first row is the bottom one; PNG's is the top.
  const std::size_t stride = static_cast<std::size_t>(width) * 4;
  std::vector<std::uint8_t> row(stride);
  for (int y = 0; y < height / 2; ++y) {
    std::uint8_t* a = pixels.data() + y * stride;
    std::uint8_t* b = pixels.data() + (height - 1 - y) * stride;
    std::memcpy(row.data(), a, stride);
    std::memcpy(a, b, stride);
    std::memcpy(b, row.data(), stride);
  }
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque
  return pixels;
}

}  // namespace ipusim::viewer
