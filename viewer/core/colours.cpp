#include "viewer/core/colours.hpp"

#include <algorithm>
#include <utility>

namespace ipusim::viewer {

Rgba computeColour(int depth) {
  // Pink (250,190,200) at depth 0 to red (225,60,70) from depth 4 on.
  const int d = std::clamp(depth, 0, 4);
  const unsigned r = 250 - 25 * d / 4;
  const unsigned g = 190 - 130 * d / 4;
  const unsigned b = 200 - 130 * d / 4;
  return rgb(r, g, b);
}

Rgba categoryColour(const std::string& category, int depth) {
  if (category == "compute") return computeColour(depth);
  if (category == "exchange") return palette::kExchange;
  if (category == "sync") return palette::kSync;
  if (category == "stream_copy") return palette::kStreamCopy;
  if (category == "stream_copy_begin") return palette::kStreamCopyBegin;
  if (category == "stream_copy_mid") return palette::kStreamCopyMid;
  if (category == "stream_copy_end") return palette::kStreamCopyEnd;
  if (category == "engine_run") return palette::kEngineRun;
  if (category == "step") return palette::kStep;
  if (category == "ipu_link") return palette::kIpuLink;
  if (category == "collective") return palette::kCollective;
  if (category == "streaming_memory") return palette::kStreamingMemory;
  if (category == "host") return palette::kHost;
  if (category == "host_io") return palette::kHostIo;
  if (category == "program") return palette::kProgram;
  return palette::kUnknown;
}

Rgba memoryCategoryColour(const std::string& category, std::size_t index) {
  // Tableau-10-like hues, distinct for colour-blind readers in most pairs.
  static constexpr Rgba kQualitative[] = {
      rgb(78, 121, 167),  rgb(242, 142, 43), rgb(89, 161, 79),  rgb(176, 122, 161), rgb(118, 183, 178),
      rgb(237, 201, 72),  rgb(156, 117, 95), rgb(186, 176, 172), rgb(225, 87, 89),   rgb(255, 157, 167)};
  static const std::pair<const char*, Rgba> kKnown[] = {
      {"weights", kQualitative[0]},        {"activations", kQualitative[1]}, {"gradients", kQualitative[2]},
      {"temporaries", kQualitative[3]},    {"stream_buffers", kQualitative[4]}, {"vertex_code", kQualitative[7]},
      {"vertex_state", kQualitative[6]},   {"control_code", kQualitative[5]}, {"exchange_code", kQualitative[8]},
      {"optimizer", kQualitative[9]}};  // the scheduler's categories (model/ir/tensor.hpp, code_memory.hpp)
  for (const auto& [name, colour] : kKnown)
    if (category == name) return colour;
  return kQualitative[index % (sizeof kQualitative / sizeof kQualitative[0])];
}

Rgba textColourOn(Rgba background) {
  const unsigned r = background & 0xff, g = (background >> 8) & 0xff, b = (background >> 16) & 0xff;
  const unsigned luma = (299 * r + 587 * g + 114 * b) / 1000;
  return luma > 140 ? rgb(20, 20, 20) : rgb(245, 245, 245);
}

}  // namespace ipusim::viewer
