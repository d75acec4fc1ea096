#pragma once
// The execution-trace palette, after PopVision Graph Analyser: StreamCopy light
// salmon, its Begin grey (waiting for the host), Mid orange (the transfer), End
// pale yellow; compute pink deepening to red with nesting depth; exchange and
// sync in their own distinct hues. Colours are packed 0xAABBGGRR, the layout
// Dear ImGui's ImU32 uses, so the shell can pass them straight through.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ipusim::viewer {

using Rgba = std::uint32_t;

constexpr Rgba rgb(unsigned r, unsigned g, unsigned b, unsigned a = 255) {
  return (Rgba(a) << 24) | (Rgba(b) << 16) | (Rgba(g) << 8) | Rgba(r);
}

namespace palette {
inline constexpr Rgba kEngineRun = rgb(60, 60, 60);
inline constexpr Rgba kStep = rgb(120, 120, 130);
inline constexpr Rgba kStreamCopy = rgb(250, 210, 190);       // light salmon
inline constexpr Rgba kStreamCopyBegin = rgb(222, 222, 222);  // grey
inline constexpr Rgba kStreamCopyMid = rgb(246, 178, 140);    // orange
inline constexpr Rgba kStreamCopyEnd = rgb(252, 232, 160);    // pale yellow
inline constexpr Rgba kExchange = rgb(110, 170, 230);         // blue
inline constexpr Rgba kSync = rgb(150, 200, 120);             // green
inline constexpr Rgba kIpuLink = rgb(170, 140, 220);          // violet: point-to-point IPU-Link copies
inline constexpr Rgba kCollective = rgb(205, 110, 175);       // plum: a collective's phases (the all-reduce)
inline constexpr Rgba kStreamingMemory = rgb(120, 170, 110);  // moss: remote-buffer copies to/from Streaming Memory
inline constexpr Rgba kHost = rgb(180, 200, 210);             // slate: host control
inline constexpr Rgba kHostIo = rgb(120, 160, 185);           // deeper slate: host data work
inline constexpr Rgba kProgram = rgb(200, 190, 230);          // lavender
inline constexpr Rgba kUnknown = rgb(200, 200, 200);
inline constexpr Rgba kIdle = rgb(240, 240, 240);
inline constexpr Rgba kFolded = rgb(150, 150, 150);
inline constexpr Rgba kCounterLine = rgb(40, 110, 200);
}  // namespace palette

// Compute slices get pinker-to-redder with depth (depth 0 the palest).
Rgba computeColour(int depth);

// The colour of a slice of `category` drawn at nesting `depth`.
Rgba categoryColour(const std::string& category, int depth);

// Tile memory categories, each its own hue so a stacked bar reads at a
// glance: the usual ones (weights, activations, gradients, temporaries,
// stream_buffers, code, stack, control, exchange_buffers, ...) have fixed
// colours; any other gets one of a qualitative palette by its position
// `index` in the legend. Never the compute pinks of the trace.
Rgba memoryCategoryColour(const std::string& category, std::size_t index);

// Black or white, whichever reads better on `background`.
Rgba textColourOn(Rgba background);

}  // namespace ipusim::viewer
