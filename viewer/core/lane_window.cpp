#include "viewer/core/lane_window.hpp"

#include <cmath>

namespace ipusim::viewer {

namespace {
// The chunks meeting [from, to); nullopt when more than `limit` do.
std::optional<std::vector<std::int64_t>> chunksMeeting(const std::vector<traces::PackedChunkSpan>& chunks,
                                                       std::int64_t from, std::int64_t to, std::size_t limit) {
  std::vector<std::int64_t> out;
  for (const auto& c : chunks) {
    if (!c.meets(from, to)) continue;
    if (out.size() == limit) return std::nullopt;
    out.push_back(c.chunk);
  }
  return out;
}
}  // namespace

std::optional<WindowPlan> planWindow(const std::vector<traces::PackedChunkSpan>& chunks, double viewFrom,
                                     double viewTo, std::size_t maxChunks) {
  const auto from = std::int64_t(std::floor(viewFrom)), to = std::int64_t(std::ceil(viewTo)) + 1;
  const std::int64_t margin = to - from;
  for (const std::int64_t m : {margin, std::int64_t(0)})
    if (auto meeting = chunksMeeting(chunks, from - m, to + m, maxChunks))
      return WindowPlan{from - m, to + m, std::move(*meeting)};
  return std::nullopt;
}

}  // namespace ipusim::viewer
