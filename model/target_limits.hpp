#pragma once
// Upper limits on the target's sizes and on every time the simulator turns
// into cycles, checked when a Target is validated (before anything is
// allocated), so that a what-if override like `--ipus 1000` or
// `--set hostLink.bytesPerSecond=1e-300` is refused at once with the
// parameter, its value and the limit, instead of exhausting memory or
// silently wrapping a cycle count.
#include <cstdint>
#include <string>

namespace ipusim::model {

struct Target;

// IPUs in the largest Graphcore system, the IPU-POD256 (Graphcore IPU-POD256
// datasheet); ipusim simulates systems up to that size.
inline constexpr std::uint32_t kMaxIpus = 256;
// Tiles in that system: 256 Mk2 IPUs of 1472 tiles (M2000 datasheet). Per
// tile the model keeps its state and memory, so this bounds the host memory
// the target itself takes, whatever the split between IPUs and tiles.
inline constexpr std::uint64_t kMaxTotalTiles = 256ull * 1472;
// Tiles per IPU: up to 8192 (estimate: 5.6x the Mk2's 1472, room for what-if
// studies of a larger IPU).
inline constexpr std::uint32_t kMaxTilesPerIpu = 8192;
// Worker contexts per tile: the hardware has 6 (IPU Programmer's Guide); up to
// 64 (estimate: room for what-if studies, while the per-context tables the
// compiler and the cycle model build stay small).
inline constexpr std::uint32_t kMaxWorkerContexts = 64;
// Tile memory: 16 MiB per tile (estimate: 26x the Mk2's 624 KiB; tile memory is
// real bytes on the host).
inline constexpr std::uint64_t kMaxTileMemoryBytes = 16ull << 20;
// The longest single duration the simulator counts: 2^53 cycles (about 78
// days at 1.33 GHz), the largest integer a double holds exactly, so a time
// converted from seconds keeps every cycle; SystemC's 64-bit time at 1 ns
// per cycle has room for 2048 such durations.
inline constexpr std::uint64_t kMaxDurationCycles = 1ull << 53;

// The IPU clock, `clockHz` and a profile's meta clock_hz: from 1 MHz to 1 THz
// (design choice: a thousand times below and above any IPU's 1.33-1.85 GHz,
// room for any what-if, while a time in seconds stays a sane number). Outside
// it a cycle count turned into seconds is noise: 1e-300 Hz makes a step last
// 1e300 s. Checked by checkTargetLimits and by readers of profiles
// (profiler/analysis/profile_target.cpp).
inline constexpr double kMinClockHz = 1e6;
inline constexpr double kMaxClockHz = 1e12;

// Throws std::invalid_argument naming the first parameter over its limit.
void checkTargetLimits(const Target& target);

// `seconds` x `clockHz` as whole cycles (rounded up, near-integers exact);
// throws std::invalid_argument naming `what` when the time is negative, not
// finite, or longer than kMaxDurationCycles.
std::uint64_t durationToCycles(double seconds, double clockHz, const std::string& what);

}  // namespace ipusim::model
